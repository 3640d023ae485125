"""Server settings and version from a running server's variables (`--server-vars FILE`).

Reads what users can get from any server without a my.cnf:
* `mysql -e "SHOW GLOBAL VARIABLES" > vars.tsv` (tab-separated, with or without the
  Variable_name / Value header; `mysql -B -N` output too);
* `mysqladmin variables` / `mariadb-admin variables` (the `| Variable_name | Value |` table);
* a JSON object of name -> value, or the live capture kit's capture.json (its
  database.variables).

`version` picks `server.version`: 5.6.x mysql-5.6, 5.7.x mysql-5.7, 8.0.0-8.0.29 mysql-8.0,
8.0.30+ mysql-8.0.30, 8.4.x mysql-8.4; MariaDB 10.5 to 11.x mariadb-10.11 (10.5 is where the
flushing innosim models for MariaDB began: one buffer pool, one page cleaner, no separate sync
point; later releases are simulated with 10.11's algorithms and defaults, with a note). Other
versions are refused. The InnoDB variables innosim simulates become `[server]` settings, with the
file and line of each; the server's own forms are taken as it prints them (ON/OFF, bytes,
90.000000). A fractional value of a setting innosim keeps whole is rounded, with a note.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from models.errors import InputError
from models.releases import release_differences
from models.versions import VERSIONS
from sim.mycnf import CnfSettings, Option, convert_value, read_option_text

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)")
_TABLE_ROW = re.compile(r"^\|\s*([^|]*?)\s*\|\s*(.*?)\s*\|$")


def version_name_for(reported: str, where: str) -> tuple[str, str | None]:
    """innosim's version for a server's `version` variable, and a note when it is an approximation."""
    m = _VERSION_RE.match(reported.strip())
    if not m:
        raise InputError(where, "version", f"{reported!r} is not a server version", "e.g. 8.0.36 or 10.11.6-MariaDB")
    major, minor, patch = (int(x) for x in m.groups())
    if "mariadb" in reported.lower():
        if (major, minor) >= (10, 5):
            note = None if (major, minor) == (10, 11) else (
                f"MariaDB {major}.{minor}.{patch} is simulated as MariaDB 10.11 (its flushing algorithms and defaults)")
            return "mariadb-10.11", note
        raise InputError(where, "version", f"MariaDB {major}.{minor} is not simulated (its flushing predates 10.5)",
                         "MariaDB 10.5 or later, or MySQL 5.6 to 8.4")
    if (major, minor) == (5, 6):
        return "mysql-5.6", None
    if (major, minor) == (5, 7):
        return "mysql-5.7", None
    if (major, minor) == (8, 0):
        return ("mysql-8.0.30" if patch >= 30 else "mysql-8.0"), None
    if (major, minor) == (8, 4):
        return "mysql-8.4", None
    raise InputError(where, "version", f"MySQL {major}.{minor} is not simulated",
                     "MySQL 5.6, 5.7, 8.0, 8.4 or MariaDB 10.5+")


_WRITTEN_RELEASE = re.compile(r"^(?:(mysql|mariadb)-)?(\d+)\.(\d+)(\.\d+)?$", re.IGNORECASE)
_WRITTEN_PATCH = re.compile(r"^(?:(?:mysql|mariadb)-)?\d+\.\d+\.\d+", re.IGNORECASE)


def _release_text(value: object) -> str:
    """A written release as the server reports its version: mysql-8.0.36 -> 8.0.36, mariadb-11.4 ->
    11.4.0-MariaDB; a bare series as its first release (MySQL's majors are 5, 8 and 9, MariaDB's
    from 10): 8.0 -> 8.0.0, 11.4 -> 11.4.0-MariaDB; a bare release likewise: 10.6.16 ->
    10.6.16-MariaDB; anything else as it is."""
    text = value.strip() if isinstance(value, str) else ""
    m = _WRITTEN_RELEASE.match(text)
    if m:
        product, major, minor, patch = m.groups()
        mariadb = product.lower() == "mariadb" if product else int(major) >= 10
        text = f"{major}.{minor}{patch or '.0'}" + ("-MariaDB" if mariadb else "")
    return text


def release_series(value: object) -> str | None:
    """The major.minor of a release written as server.version (or reported by a server), which
    names its option groups ([mysqld-8.0], [mariadb-11.4]); None for one of VERSIONS."""
    if isinstance(value, str) and value in VERSIONS:
        return None
    m = _VERSION_RE.match(_release_text(value))
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def release_numbers(value: object) -> tuple[int, int, int | None] | None:
    """(major, minor, patch) of a server.version as written (mariadb-11.4.2, 10.11.6-MariaDB,
    mysql-8.0.36); patch None for a bare series (mariadb-11.4, 10.6) and for one of VERSIONS
    (mariadb-10.11 is 10.11, mysql-8.0.30 is 8.0.30); None for what names no release."""
    m = _VERSION_RE.match(_release_text(value))
    if not m:
        return None
    major, minor, patch = (int(x) for x in m.groups())
    return major, minor, patch if _WRITTEN_PATCH.match(value.strip()) else None


def scenario_version(value: object, where: str) -> tuple[str, str | None]:
    """`server.version` as a scenario writes it: one of VERSIONS, or a release (mysql-8.0.36,
    mariadb-11.4, 8.0.36, 10.11.6-MariaDB, 8.4) mapped as a server's `version` variable is, with a
    note naming what it runs as unless that is the release's own series (mysql-5.7.44 is
    mysql-5.7). A bare 8.0 is refused: 8.0.30 changed the redo log, so it names two versions."""
    if isinstance(value, str) and value in VERSIONS:
        return value, None
    allowed = ", ".join(VERSIONS) + ", or a release such as mysql-8.0.36, mariadb-11.4.2, 10.11.6-MariaDB or 8.4"
    text = _release_text(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise InputError(where, "server.version", f"{value!r} is a number (TOML reads 10.10 as 10.1)",
                         'a string in quotes, e.g. version = "8.4" or "mariadb-10.11"')
    if isinstance(value, str) and value.strip() == "8.0":
        raise InputError(where, "server.version", "'8.0' is two simulated versions, whose redo logs differ",
                         "mysql-8.0 (8.0.0 to 8.0.29) or mysql-8.0.30 (8.0.30 and later), or the release, "
                         "e.g. 8.0.36")
    if not _VERSION_RE.match(text):
        raise InputError(where, "server.version", f"{value!r} is not allowed", allowed)
    try:
        name, note = version_name_for(text, where)
    except InputError as err:
        raise InputError(where, "server.version", f"{value!r}: {err.problem}", err.allowed) from None
    # A release written with its patch number may predate changes to what its version simulates
    # (models.releases); a bare series (10.6, mariadb-11.4, 8.4) names no release, and is told only
    # of the changes none of its releases has.
    m = _VERSION_RE.match(text)
    major, minor, patch = (int(x) for x in m.groups())
    differences = release_differences(name, major, minor, patch if _WRITTEN_PATCH.match(value.strip()) else None)
    if name == f"{name.split('-', 1)[0]}-{release_series(text)}":
        # a release of the series the name is (10.11.19, 5.7.44)
        return name, (f"server.version {value!r}: {differences}" if differences else None)
    return name, f"server.version {value!r} is simulated as {name}" + (
        " (its flushing algorithms and defaults)" if note else "") + (f"; {differences}" if differences else "")


def read_variables(path: str, text_of: dict[str, str] | None = None) -> list[tuple[str, str, int]]:
    """(name, value, line) of every variable in the file, in order."""
    text = (text_of or {}).get(path)
    if text is None:
        text = read_option_text(Path(path), path, variables=True)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"{path} line {err.lineno}", "", f"not valid JSON: {err.msg}",
                             "a JSON object of variable names and values") from None
        if isinstance(doc, dict) and isinstance(doc.get("database"), dict) \
                and isinstance(doc["database"].get("variables"), dict):
            doc = doc["database"]["variables"]      # the live capture kit's capture.json, whole
        if not isinstance(doc, dict) or not all(isinstance(v, (str, int, float, bool)) for v in doc.values()):
            raise InputError(path, "", "a JSON file of variables must be one object of names and plain values",
                             '{"innodb_io_capacity": "200", ...}, or the capture kit\'s capture.json')
        return [(str(k), str(v) if not isinstance(v, bool) else ("ON" if v else "OFF"), 0) for k, v in doc.items()]
    out = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.startswith("+"):
            continue
        if line.startswith("|"):
            m = _TABLE_ROW.match(line.strip())
            if not m:
                raise InputError(f"{path} line {n}", "", "not a `| name | value |` row", "mysqladmin variables output")
            name, value = m.groups()
        elif "\t" in line:
            name, value = line.split("\t", 1)
        else:
            name, _, value = line.strip().partition(" ")
            if not value and not name.replace("_", "").isalnum():
                raise InputError(f"{path} line {n}", "", f"{line[:60]!r} is not a variable line",
                                 "SHOW GLOBAL VARIABLES output: name<TAB>value")
        name, value = name.strip(), value.strip()
        if name == "Variable_name" and value == "Value":
            continue
        if not name.replace("_", "").replace("-", "").isalnum():
            raise InputError(f"{path} line {n}", "", f"{name[:60]!r} is not a variable name",
                             "SHOW GLOBAL VARIABLES output: name<TAB>value")
        out.append((name, value, n))
    if not out:
        raise InputError(path, "", "holds no variables", "SHOW GLOBAL VARIABLES output, mysqladmin variables, or JSON")
    return out


def settings_from_variables(path: str, text_of: dict[str, str] | None = None) -> tuple[str, CnfSettings]:
    """(server.version, the [server] settings) a server's variables give; the settings keep the
    reported version (`release`), which the scenario takes as its server.version."""
    from sim.config import SCHEMA

    rows = read_variables(path, text_of)
    line = {name.lower(): n for name, _, n in rows}
    where = {name: f"{path} line {n}" if n else path for name, n in line.items()}
    values = {name.lower(): value for name, value, _ in rows}
    if "version" not in values:
        raise InputError(path, "version", "the server's version variable is missing",
                         "the whole SHOW GLOBAL VARIABLES output (it holds `version`)")
    name, _ = version_name_for(values["version"], where.get("version", path))
    out = CnfSettings(files=[path], release=values["version"])
    v = VERSIONS[name]
    for key, spec in SCHEMA["server"].items():
        if key == "version" or key not in values or key in v.absent or key in v.removed:
            continue
        value = values[key]
        if key == "innodb_dedicated_server":
            if convert_value(key, spec, value, None, Option(key, value, path, line[key])):
                out.notes.append(f"{where[key]}: innodb_dedicated_server = ON: the pool, redo log and flush method "
                                 "read here are the values it chose at startup, and are used as they are")
            continue
        if key == "innodb_flush_method" and value == "":
            continue                      # 5.6/5.7 print an empty value for the default (fsync)
        if spec.kind == "int" and re.fullmatch(r"\d+\.\d+", value):
            whole = round(float(value))
            if whole != float(value):
                out.notes.append(f"{where[key]}: {key} = {value} is kept whole by innosim: {whole}")
            value = str(whole)
        opt = Option(key, value, path, line[key])
        out.settings[key] = (convert_value(key, spec, value, None, opt), where[key])
    out.notes.insert(0, f"server variables {path}: {VERSIONS[name].label} (version {values['version']}); "
                        f"{len(out.settings)} setting(s) simulated ({', '.join(out.settings)})")
    return name, out
