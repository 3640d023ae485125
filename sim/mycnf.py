"""Server settings from MySQL / MariaDB option files (my.cnf), as `innosim run --my-cnf FILE` reads them.

What the server does, and what is done here (MySQL 8.0 manual 6.2.2.2 "Using Option Files" and
6.2.2.4 "Program Option Modifiers"; MariaDB KB "Configuring MariaDB with Option Files"; mysys
my_default.cc / my_getopt.cc):

* Groups: MySQL's mysqld reads [mysqld], [server] and [mysqld-X.Y] (X.Y its major.minor version);
  MariaDB's reads [client-server], [server], [mysqld], [mysqld-X.Y], [mariadb], [mariadb-X.Y],
  [mariadbd], [mariadbd-X.Y] and [galera]. Group names are matched without regard to case.
  The version is the scenario's `server.version`, so [mysqld-8.0] applies to a mysql-8.0 run only;
  a release named there (mariadb-11.4, or a server's reported version) reads its own X.Y groups.
* Lines: `[group]`; `name` or `name = value` (spaces around both removed); comments start with
  `#` or `;`, and `#` also ends a line outside quotes; a value may be quoted ('...' or "...");
  escapes \\b \\t \\n \\r \\\\ \\s in values. An option before any group is an error, as in the server.
* `!include FILE` and `!includedir DIR` (DIR's files ending in .cnf, in name order: the server
  promises no order). A missing include is skipped, as the server skips it, and said so.
* Names: `-` and `_` are the same. Prefixes: `loose-` (an unknown option is ignored, with a
  note, instead of stopping the server), `skip-` and `disable-` (a boolean set to OFF), `enable-`
  (ON), `maximum-` (a limit for SET at run time: no effect on the simulation).
* The last setting of an option wins, in file and line order.
* Values: booleans ON/OFF/TRUE/FALSE/1/0 (an option named without a value is ON); numbers with an
  optional K/M/G/T/P suffix (powers of 1024, my_getopt's eval_num_suffix); enumerations without
  regard to case. innodb_doublewrite = DETECT_AND_RECOVER (8.0.30+) is ON; DETECT_ONLY is kept
  (the doublewrite writes page identifiers only), and so is MariaDB 11.0.6+'s fast.

Only the InnoDB settings innosim simulates are taken (the `[server]` keys of a scenario); every
other InnoDB option is listed in a note as not simulated, and options of the rest of the server
(port, datadir, max_connections ...) are counted. A value innosim cannot take is refused with the
file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path

from models.doublewrite import WORDS_ENUM, doublewrite_word
from models.errors import InputError
from models.versions import VERSIONS
from sim.units import parse_size_bytes

MAX_INCLUDE_DEPTH = 10
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "r": "\r", "\\": "\\", "s": " "}
_BOOL_TRUE = ("ON", "TRUE", "1")
_BOOL_FALSE = ("OFF", "FALSE", "0")
# Scenario [server] keys that are not server variables.
_NOT_VARIABLES = ("version",)


@dataclass(frozen=True)
class Option:
    """One option line of a group the server reads."""

    name: str                 # as written, prefixes included
    value: str | None         # None: named without a value
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file} line {self.line}" if self.line else self.file


@dataclass
class CnfSettings:
    """What the option files set for innosim: scenario [server] key -> (value, where), and notes."""

    settings: dict[str, tuple[object, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    release: str = ""                  # the server's version variable (sim.server_vars), if read


def server_groups(version_name: str, series: str | None = None) -> tuple[str, ...]:
    """The option groups the server of this version reads (lower case); `series`: the major.minor of
    the release run as it (mariadb-11.4 runs as mariadb-10.11 and reads [mariadb-11.4])."""
    v = VERSIONS[version_name]
    base = series or ".".join(version_name.split("-", 1)[1].split(".")[:2])
    if v.is_mariadb:
        return ("client-server", "server", "mysqld", f"mysqld-{base}", "mariadb", f"mariadb-{base}",
                "mariadbd", f"mariadbd-{base}", "galera")
    return ("mysqld", "server", f"mysqld-{base}")


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _cut_comment(line: str) -> str:
    """A line up to a `#` outside quotes (the server's remove_end_comment), stripped."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#":
            return line[:i].strip()
    return line.strip()


def _value(text: str) -> str:
    """A value without its enclosing quotes, escapes resolved."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return _unescape(text)


VARIABLES_FILE = "SHOW GLOBAL VARIABLES output, mysqladmin variables output or a JSON object of variables"


def read_option_text(path: Path, where: str, variables: bool = False) -> str:
    """A my.cnf's text (or, with `variables`, a server's variables file's: sim.server_vars)."""
    what, allowed = ("variables file", VARIABLES_FILE) if variables else ("option file", "a my.cnf text file")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(where, "", f"no such {what}", ("a path to " + allowed) if variables else "a my.cnf path") \
            from None
    except IsADirectoryError:
        raise InputError(where, "", "is a directory", allowed if variables else
                         "an option file (use !includedir inside one for a directory)") from None
    except OSError as err:
        raise InputError(where, "", f"cannot be read: {err.strerror}", f"a readable {what}") from None
    if b"\x00" in data:
        raise InputError(where, "", f"is not a text {what} (it holds NUL bytes)", allowed)
    try:
        return data.decode("utf-8-sig")              # a BOM (Windows editors) is not part of the text
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise InputError(f"{where} line {line}", "", "is not UTF-8 text", allowed) from None


def read_options(paths: list[str] | tuple[str, ...], groups: tuple[str, ...],
                 texts: dict[str, str] | None = None) -> tuple[list[Option], list[str]]:
    """Every option line of `groups` in the files, in reading order, and notes (skipped includes).
    `texts` gives the contents of some of `paths` (a my.cnf pasted into the app)."""
    options: list[Option] = []
    notes: list[str] = []
    wanted = set(groups)
    texts = texts or {}

    def read(path: Path, shown: str, depth: int) -> None:
        text = texts[shown] if shown in texts else read_option_text(path, shown)
        group = None
        for n, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            line = _cut_comment(line)
            if line.startswith("!"):
                directive, arg = (line.split(None, 1) + [""])[:2]
                arg = arg.strip()
                if directive not in ("!include", "!includedir") or not arg:
                    raise InputError(f"{shown} line {n}", "", f"{line!r} is not a directive the server knows",
                                     "!include FILE or !includedir DIR")
                target = Path(arg) if Path(arg).is_absolute() else path.parent / arg
                if shown in texts:
                    notes.append(f"{shown} line {n}: {directive} {arg} not followed (pasted text)")
                    continue
                if depth >= MAX_INCLUDE_DEPTH:
                    notes.append(f"{shown} line {n}: {directive} {arg} not read: includes nest more than "
                                 f"{MAX_INCLUDE_DEPTH} deep")
                    continue
                if directive == "!include":
                    if target.is_file():
                        read(target, str(target), depth + 1)
                    else:
                        notes.append(f"{shown} line {n}: !include {arg}: no such file, skipped (the server "
                                     "skips it too)")
                else:
                    if target.is_dir():
                        for f in sorted(target.iterdir()):
                            if f.is_file() and f.name.endswith(".cnf"):
                                read(f, str(f), depth + 1)
                    else:
                        notes.append(f"{shown} line {n}: !includedir {arg}: no such directory, skipped "
                                     "(the server skips it too)")
                continue
            if line.startswith("["):
                if not line.endswith("]") or len(line) < 3:
                    # The server: "Wrong group definition in config file".
                    raise InputError(f"{shown} line {n}", "", f"{line!r} is not a group header", "[mysqld]")
                group = line[1:-1].strip().lower()
                continue
            if group is None:
                # The server: "Found option without preceding group in config file".
                raise InputError(f"{shown} line {n}", "", "an option before any [group]",
                                 "a group header such as [mysqld] above it")
            if group not in wanted:
                continue
            name, eq, value = line.partition("=")
            name = name.strip()
            if not name:
                raise InputError(f"{shown} line {n}", "", f"{line!r} has no option name", "name = value")
            options.append(Option(name, _value(value) if eq else None, shown, n))

    for p in paths:
        read(Path(p), str(p), 0)
    return options, notes


def _int_value(text: str) -> int:
    """A number as my_getopt reads it: digits with an optional K, M, G, T or P suffix."""
    try:
        return parse_size_bytes(text)
    except ValueError:
        raise ValueError("a whole number, optionally with a K, M or G suffix") from None


def convert_value(key: str, spec, value: str | None, polarity: bool | None, opt: Option):
    """The scenario value of one option (what scenario_from_dict then validates)."""
    def bad(problem: str, allowed: str):
        return InputError(opt.where, opt.name, problem, allowed)

    if spec.kind == "bool":
        if polarity is not None:
            if value is not None:
                raise bad(f"a value after a skip-/disable-/enable- prefix ({value!r})", "the option alone")
            return polarity
        if value is None:
            return True
        v = value.strip().upper()
        if v in _BOOL_TRUE:
            return True
        if v in _BOOL_FALSE:
            return False
        if key == "innodb_doublewrite":
            word = doublewrite_word(v)              # DETECT_AND_RECOVER, DETECT_ONLY (8.0.30+), fast
            if word is not None:
                return word
            raise bad(f"{value!r} is not a boolean", f"ON, OFF, TRUE, FALSE, 1 or 0; {WORDS_ENUM}")
        raise bad(f"{value!r} is not a boolean", "ON, OFF, TRUE, FALSE, 1 or 0")
    if polarity is not None:
        raise bad("skip-, disable- and enable- apply to boolean options only", "name = value")
    if value is None or value == "":
        raise bad("needs a value", spec.allowed())
    if spec.kind == "int":
        try:
            return _int_value(value)
        except ValueError as err:
            raise bad(f"{value!r} is not valid: {err}", spec.allowed()) from None
    if spec.kind == "float":
        try:
            return float(value.strip())                  # my_getopt's getopt_double (my_strtod)
        except ValueError:
            raise bad(f"{value!r} is not a number", spec.allowed()) from None
    if spec.kind == "choice" and spec.choices and isinstance(spec.choices[0], str):
        for c in spec.choices:
            if c.lower() == value.strip().lower():
                return c
        raise bad(f"{value!r} is not allowed", spec.allowed())
    return value.strip()


def settings_from_option_files(paths: list[str] | tuple[str, ...], version_name: str,
                               texts: dict[str, str] | None = None, series: str | None = None) -> CnfSettings:
    """The scenario [server] settings the option files give a server of `version_name` (of release
    series `series`, server_groups)."""
    from sim.config import DECLARED_RANGE_KEYS, SCHEMA, server_range

    v = VERSIONS[version_name]
    groups = server_groups(version_name, series)
    options, notes = read_options(paths, groups, texts)
    out = CnfSettings(files=[str(p) for p in paths])
    out.notes.extend(notes)
    server_keys = {k: spec for k, spec in SCHEMA["server"].items() if k not in _NOT_VARIABLES}
    not_simulated: dict[str, str] = {}
    others = 0
    for opt in options:
        name = opt.name.strip().lower().replace("-", "_")
        loose = name.startswith("loose_")
        if loose:
            name = name[len("loose_"):]
        polarity = None
        for prefix, pol in (("skip_", False), ("disable_", False), ("enable_", True)):
            if name.startswith(prefix):
                name, polarity = name[len(prefix):], pol
                break
        if name.startswith("maximum_"):
            if name[len("maximum_"):] in server_keys:
                out.notes.append(f"{opt.where}: {opt.name} limits SET at run time; no effect on the simulation")
            continue
        if name not in server_keys:
            if name.startswith("innodb_"):
                hint = get_close_matches(name, list(server_keys), n=1, cutoff=0.9)
                not_simulated[name] = opt.where + (
                    f"; a typo of {hint[0]}? The server stops at startup on an unknown variable" if hint else "")
            else:
                others += 1
            continue
        if name in v.absent:
            if loose:
                out.notes.append(f"{opt.where}: {opt.name}: {v.label} has no such variable; ignored "
                                 "(loose- prefix), as the server ignores it with a warning")
                continue
            raise InputError(opt.where, opt.name,
                             f"{v.label} has no such variable (the server stops at startup: unknown variable)",
                             "remove it, prefix it with loose-, or set server.version")
        if name == "log_bin":
            # log-bin[=basename] turns the binary log on, whatever the basename; skip-log-bin and
            # disable-log-bin (8.0) turn it off.
            out.settings[name] = (polarity is not False, opt.where)
            continue
        value = convert_value(name, server_keys[name], opt.value, polarity, opt)
        # mysqld's option parser (my_getopt's getopt_ull_limit_value / getopt_double_limit_value)
        # takes a value outside the declared range as the bound, with a warning, and starts.
        if name in DECLARED_RANGE_KEYS:
            lo, hi = server_range(name, v)
            if not lo <= value <= hi:
                to = lo if value < lo else hi
                out.notes.append(f"{opt.where}: {opt.name} = {opt.value.strip()} adjusted to {to:g}, {v.label}'s "
                                 f"{'minimum' if value < to else 'maximum'}, as the server adjusts it at startup "
                                 "(with a warning)")
                value = to
        out.settings[name] = (value, opt.where)
    used = f"{len(out.settings)} setting(s) simulated" + (f" ({', '.join(out.settings)})" if out.settings else "")
    summary = (f"option files {', '.join(out.files)}, groups [{'], ['.join(groups)}]: {used}")
    if not_simulated:
        summary += "; InnoDB options not simulated: " + ", ".join(
            f"{k} ({w})" for k, w in not_simulated.items())
    if others:
        summary += f"; {others} option(s) of the rest of the server not simulated"
    out.notes.insert(0, summary)
    return out
