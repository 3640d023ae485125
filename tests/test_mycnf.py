"""my.cnf option files: syntax, groups per version, prefixes, values, precedence, and bad input."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from models.errors import InputError
from sim.config import SCHEMA, load_scenario, scenario_from_dict
from sim.mycnf import read_options, server_groups, settings_from_option_files

ROOT = Path(__file__).resolve().parent.parent
OLTP = {"workload": {"kind": "oltp", "profile": "dbt2", "warehouses": 10, "users": 4},
        "hardware": {"device": "seed-12core-disks-2012"}}


def cnf(tmp_path, text, name="my.cnf"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def scenario(files, version="mysql-5.6", overrides=(), server=None):
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = dict(server or {}, version=version)
    return scenario_from_dict(doc, "s.toml", overrides=list(overrides), option_files=files)


def test_groups_per_version():
    assert server_groups("mysql-5.6") == ("mysqld", "server", "mysqld-5.6")
    assert server_groups("mysql-8.0.30") == ("mysqld", "server", "mysqld-8.0")
    assert server_groups("mysql-8.4")[-1] == "mysqld-8.4"
    assert server_groups("mysql-8.0.30", "8.0") == ("mysqld", "server", "mysqld-8.0")
    assert "mariadbd-11.4" in server_groups("mariadb-10.11", "11.4")
    g = server_groups("mariadb-10.11")
    assert {"mysqld", "server", "mysqld-10.11", "mariadb", "mariadb-10.11", "mariadbd", "mariadbd-10.11",
            "client-server", "galera"} == set(g)


def test_syntax_comments_quotes_escapes_and_names(tmp_path):
    f = cnf(tmp_path, """
# comment
; another
[client]
innodb_io_capacity = 9999
[MySQLd]
  innodb-io-capacity   =   3000   # trailing comment
innodb_flush_method="O_DIRECT"
innodb_log_file_size = '1G'
innodb_buffer_pool_size=2G
skip-innodb-doublewrite
innodb_adaptive_flushing
""")
    opts, notes = read_options([f], server_groups("mysql-5.6"))
    assert [o.name for o in opts][0] == "innodb-io-capacity"
    assert all(o.line > 0 for o in opts) and notes == []
    s = scenario([f])
    assert s.server.innodb_io_capacity == 3000           # [client] is not read by the server
    assert s.server.innodb_flush_method == "O_DIRECT"
    assert s.server.innodb_log_file_size_bytes == 1 << 30
    assert s.server.innodb_buffer_pool_size_bytes == 2 << 30
    assert s.server.innodb_doublewrite is False
    assert s.server.innodb_adaptive_flushing is True


def test_hash_inside_quotes_and_escapes(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ninnodb_flush_method = 'O_DIRECT' # c\nlog_error = \"/var/log/a#b.log\"\n"
                      "general_log_file = C:\\\\x\\sy\n")
    opts, _ = read_options([f], ("mysqld",))
    values = {o.name: o.value for o in opts}
    assert values["innodb_flush_method"] == "O_DIRECT"
    assert values["log_error"] == "/var/log/a#b.log"
    assert values["general_log_file"] == "C:\\x y"


def test_last_setting_wins_across_groups_and_includes(tmp_path):
    (tmp_path / "conf.d").mkdir()
    cnf(tmp_path / "conf.d", "[mysqld]\ninnodb_io_capacity = 700\n", "b.cnf")
    cnf(tmp_path / "conf.d", "[mysqld]\ninnodb_io_capacity = 600\ninnodb_lru_scan_depth = 512\n", "a.cnf")
    cnf(tmp_path / "conf.d", "[mysqld]\ninnodb_io_capacity = 1\n", "ignored.txt")
    f = cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = 400\n[server]\ninnodb_io_capacity = 500\n"
                      "!includedir conf.d\n[mysqld-5.6]\ninnodb_flush_neighbors = 0\n")
    s = scenario([f])
    assert s.server.innodb_io_capacity == 700           # a.cnf then b.cnf; not ignored.txt
    assert s.server.innodb_lru_scan_depth == 512
    assert s.server.innodb_flush_neighbors == 0
    s8 = scenario([f], version="mysql-8.0")
    assert s8.server.innodb_flush_neighbors == 0        # 8.0's default, not the [mysqld-5.6] line


def test_version_groups_apply_to_their_version_only(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = 300\n[mysqld-8.0]\ninnodb_io_capacity = 800\n"
                      "[mariadb-10.11]\ninnodb_io_capacity = 900\n[mariadbd]\ninnodb_lru_scan_depth = 2048\n")
    assert scenario([f]).server.innodb_io_capacity == 300
    assert scenario([f], "mysql-8.0.30").server.innodb_io_capacity == 800
    m = scenario([f], "mariadb-10.11")
    assert m.server.innodb_io_capacity == 900 and m.server.innodb_lru_scan_depth == 2048


def test_version_set_on_the_command_line_picks_the_groups(tmp_path):
    f = cnf(tmp_path, "[mysqld-8.4]\ninnodb_io_capacity = 1234\n")
    s = scenario([f], overrides=["server.version=mysql-8.4"])
    assert s.server.innodb_io_capacity == 1234


def test_precedence_scenario_then_cnf_then_set(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = 1000\ninnodb_lru_scan_depth = 256\n")
    s = scenario([f], server={"innodb_io_capacity": 300, "innodb_flush_neighbors": 0},
                 overrides=["server.innodb_lru_scan_depth=2000"])
    assert s.server.innodb_io_capacity == 1000          # the file beats the scenario
    assert s.server.innodb_flush_neighbors == 0          # the scenario's, untouched
    assert s.server.innodb_lru_scan_depth == 2000        # --set beats the file


def test_prefixes(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ndisable-innodb_adaptive_flushing\nloose-enable-innodb-flush-sync\n"
                      "loose-innodb_page_cleaners = 4\nmaximum-innodb_io_capacity = 5000\n"
                      "loose-skip-innodb-doublewrite\n")
    s = scenario([f])
    assert s.server.innodb_adaptive_flushing is False
    assert s.server.innodb_doublewrite is False
    assert s.server.innodb_io_capacity == 200            # maximum- sets no value
    assert any("loose-innodb_page_cleaners" in n and "MySQL 5.6 has no such variable" in n for n in s.notes)
    assert any("maximum-innodb_io_capacity" in n for n in s.notes)
    s57 = scenario([f], "mysql-5.7")
    assert s57.server.innodb_page_cleaners == 4 and s57.server.innodb_flush_sync is True


def test_values(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = 2K\ninnodb_max_dirty_pages_pct = 90.000000\n"
                      "innodb_adaptive_flushing = off\ninnodb_page_size = 8k\ninnodb_flush_method = o_dsync\n"
                      "innodb_doublewrite = DETECT_AND_RECOVER\ninnodb_checksum_algorithm = CRC32\n")
    s = scenario([f], "mysql-8.0.30")
    assert s.server.innodb_io_capacity == 2048
    assert s.server.innodb_max_dirty_pages_pct == 90
    assert s.server.innodb_adaptive_flushing is False
    assert s.server.innodb_page_size_bytes == 8192
    assert s.server.innodb_flush_method == "O_DSYNC"
    assert s.server.innodb_doublewrite is True
    assert s.server.innodb_checksum_algorithm == "crc32"
    g = cnf(tmp_path, "[mysqld]\ninnodb_doublewrite = detect_only\n", name="d.cnf")
    assert scenario([g], "mysql-8.4").server.innodb_doublewrite == "DETECT_ONLY"


def test_notes_name_what_is_not_simulated(tmp_path):
    f = cnf(tmp_path, "[mysqld]\nport = 3307\ndatadir = /x\ninnodb_read_io_threads = 8\n"
                      "innodb_io_capacty = 500\ninnodb_io_capacity = 600\n!include missing.cnf\n")
    s = scenario([f])
    text = "\n".join(s.notes)
    assert "innodb_read_io_threads" in text and "2 option(s) of the rest of the server" in text
    assert "a typo of innodb_io_capacity?" in text
    assert "!include missing.cnf: no such file, skipped" in text
    assert "1 setting(s) simulated (innodb_io_capacity)" in text


def test_mariadb_removed_setting_is_a_note_not_an_error(tmp_path):
    f = cnf(tmp_path, "[mariadb]\ninnodb_buffer_pool_instances = 8\n")
    s = scenario([f], "mariadb-10.11")
    assert s.server.innodb_buffer_pool_instances == 1
    assert any("innodb_buffer_pool_instances' was removed" in n for n in s.notes)


def test_include_cycle_stops(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = 400\n!include my.cnf\n")
    s = scenario([f])
    assert s.server.innodb_io_capacity == 400
    assert any("nest more than" in n for n in s.notes)


@pytest.mark.parametrize("text, where, needle", [
    ("innodb_io_capacity = 300\n", "line 1", "before any [group]"),
    ("[mysqld\ninnodb_io_capacity = 300\n", "line 1", "not a group header"),
    ("[mysqld]\n= 3\n", "line 2", "no option name"),
    ("[mysqld]\n!inclde x.cnf\n", "line 2", "not a directive"),
    ("[mysqld]\ninnodb_io_capacity = lots\n", "line 2", "'lots' is not valid"),
    ("[mysqld]\ninnodb_io_capacity\n", "line 2", "needs a value"),
    ("[mysqld]\ninnodb_buffer_pool_size = 1M\n", "line 2", "out of range"),
    ("[mysqld]\ninnodb_max_dirty_pages_pct = 75.5\n", "line 2", "whole number"),
    ("[mysqld]\nskip-innodb_io_capacity\n", "line 2", "boolean options only"),
    ("[mysqld]\ninnodb_doublewrite = maybe\n", "line 2", "not a boolean"),
    ("[mysqld]\nskip-innodb_doublewrite = 1\n", "line 2", "a value after"),
    ("[mysqld]\ninnodb_flush_method = O_SOMETIMES\n", "line 2", "not allowed"),
    ("[mysqld]\ninnodb_page_cleaners = 4\n", "line 2", "has no such variable"),
    ("[mysqld]\ninnodb_io_capacity = 3000\n\ninnodb_io_capacity_max = 2000\n", "line 4", "below innodb_io_capacity"),
])
def test_bad_lines_name_file_and_line(tmp_path, text, where, needle):
    f = cnf(tmp_path, text)
    with pytest.raises(InputError) as err:
        scenario([f])
    msg = str(err.value)
    assert msg.startswith(f"{f} {where}") and needle in msg, msg


def test_bad_files(tmp_path):
    for path, needle in ((str(tmp_path / "none.cnf"), "no such option file"), (str(tmp_path), "is a directory")):
        with pytest.raises(InputError, match=needle):
            scenario([path])
    junk = tmp_path / "junk.cnf"
    junk.write_bytes(b"[mysqld]\n\x00\x01\x02")
    with pytest.raises(InputError, match="NUL bytes"):
        scenario([str(junk)])
    latin = tmp_path / "latin.cnf"
    latin.write_bytes(b"[mysqld]\n# caf\xe9\n")
    with pytest.raises(InputError, match=r"line 2: is not UTF-8"):
        scenario([str(latin)])


# Scenario [server] keys with values a my.cnf can hold, as (my.cnf text, --set text).
_INT_KEYS = {"innodb_io_capacity": (100, 20000), "innodb_lru_scan_depth": (100, 8192),
             "innodb_flush_neighbors": (0, 2), "innodb_adaptive_flushing_lwm": (0, 70),
             "innodb_flushing_avg_loops": (1, 1000), "innodb_old_blocks_pct": (5, 95)}
_BOOL_KEYS = ("innodb_doublewrite", "innodb_adaptive_flushing", "innodb_use_native_aio")


@st.composite
def cnf_settings(draw):
    chosen = {}
    for key, (lo, hi) in _INT_KEYS.items():
        if draw(st.booleans()):
            chosen[key] = draw(st.integers(lo, hi))
    for key in _BOOL_KEYS:
        if draw(st.booleans()):
            chosen[key] = draw(st.booleans())
    if draw(st.booleans()):
        chosen["innodb_buffer_pool_size"] = draw(st.integers(64, 4096)) << 20
    return chosen


@settings(max_examples=40, deadline=None)
@given(chosen=cnf_settings(), dashes=st.booleans(), spaces=st.booleans(), data=st.data())
def test_option_file_gives_the_same_scenario_as_set(tmp_path_factory, chosen, dashes, spaces, data):
    """Whatever a my.cnf sets, in whichever spelling, the scenario is the one --set gives."""
    lines = ["# generated", f"[{data.draw(st.sampled_from(['mysqld', 'MYSQLD', 'server']))}]"]
    sets = []
    for key, value in chosen.items():
        name = key.replace("_", "-") if dashes else key
        if isinstance(value, bool):
            text = data.draw(st.sampled_from(["ON", "on", "1", "TRUE"] if value else ["OFF", "0", "false"]))
            if not value and data.draw(st.booleans()):
                lines.append(f"skip-{name}")
                sets.append(f"server.{key}={'true' if value else 'false'}")
                continue
        elif key == "innodb_buffer_pool_size":
            text = f"{value >> 20}M"
        else:
            text = str(value)
        lines.append(f"{name} = {text}" if spaces else f"{name}={text}")
        sets.append(f"server.{key}={'true' if value is True else 'false' if value is False else value}")
    if "innodb_io_capacity" in chosen:
        sets.append(f"server.innodb_io_capacity_max={max(2000, 2 * chosen['innodb_io_capacity'])}")
    path = tmp_path_factory.mktemp("cnf") / "my.cnf"
    path.write_text("\n".join(lines) + "\n")
    a = scenario([str(path)])
    b = scenario([], overrides=sets)
    assert a.server == b.server


def test_cli_run_reads_my_cnf_and_refuses_bad_ones(tmp_path):
    good = cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = 1500\ninnodb_flush_neighbors = 0\n")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(ROOT / "scenarios" / "default.toml"),
                        "--my-cnf", good, "--set", "run.duration=1s", "-o", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "2 setting(s) simulated" in r.stderr
    resolved = (out / "scenario.resolved.toml").read_text()
    assert "innodb_io_capacity = 1500" in resolved and "innodb_flush_neighbors = 0" in resolved
    bad = cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = many\n", "bad.cnf")
    r = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--my-cnf", bad, "-o", str(tmp_path / "o2")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and f"{bad} line 2" in r.stderr
    assert not (tmp_path / "o2").exists()


def test_schema_keys_a_cnf_can_set_are_server_variables():
    # Every [server] key but `version` is a server variable a my.cnf may hold.
    assert set(SCHEMA["server"]) - {"version"} == {
        k for k in SCHEMA["server"] if k.startswith("innodb_")} | {
        "log_bin", "sync_binlog", "binlog_group_commit_sync_delay", "binlog_group_commit_sync_no_delay_count",
        "binlog_commit_wait_count", "binlog_commit_wait_usec"}


@pytest.mark.parametrize("line, on", [("log-bin", True), ("log_bin = mysql-bin", True), ("log-bin=OFF", True),
                                      ("skip-log-bin", False), ("disable-log-bin", False)])
def test_log_bin_is_on_with_any_basename_and_off_when_skipped(tmp_path, line, on):
    f = cnf(tmp_path, f"[mysqld]\n{line}\nsync_binlog = 1\n")
    got = settings_from_option_files([f], "mysql-8.0").settings
    assert got["log_bin"][0] is on
    assert got["sync_binlog"][0] == 1


def test_load_scenario_passes_option_files(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = 777\n")
    s = load_scenario(ROOT / "scenarios" / "default.toml", [], [f])
    assert s.server.innodb_io_capacity == 777
    assert settings_from_option_files([f], "mysql-5.6").settings["innodb_io_capacity"][0] == 777


EXAMPLE = ROOT / "validation" / "live" / "example"


def _as_server_reports(spec, value) -> str:
    """A resolved scenario value in SHOW VARIABLES form."""
    if spec.kind == "bool":
        return "ON" if value else "OFF"
    return str(value)


def test_live_example_my_cnf_resolves_as_the_server_did():
    """The live capture's my.cnf, read for MariaDB 10.11, gives every simulated setting the value
    the running server reported (capture.json database.variables: MariaDB 10.11.19 measured here)."""
    import json

    from models.releases import release_has, setting_introduced
    from models.versions import VERSIONS
    from sim.config import setting_value

    variables = json.loads((EXAMPLE / "capture.json").read_text())["database"]["variables"]
    doc = {"server": {"version": "mariadb-10.11"},
           "hardware": {"device": str(EXAMPLE / "device.json"), "filesystem": "ext4", "kernel": "modern"},
           "workload": {"kind": "oltp", "profile": "sysbench", "data_size": "745M", "users": 16}}
    scn = scenario_from_dict(doc, "live.toml", option_files=[str(EXAMPLE / "my.cnf")])
    v = VERSIONS["mariadb-10.11"]
    compared = 0
    for key, spec in SCHEMA["server"].items():
        if key == "version":
            continue
        if key not in variables:
            # The example was captured when the kit recorded only innodb% variables and version;
            # MariaDB 11.0's file settings are not 10.11's (models.releases.SETTINGS_INTRODUCED).
            entry = setting_introduced(key)
            assert (key in v.absent or key in v.removed or not key.startswith("innodb_")
                    or entry is not None and release_has(entry, 10, 11, 19) is False), key
            continue
        reported = variables[key]
        mine = _as_server_reports(spec, setting_value(scn, "server", key))
        if reported.replace(".", "", 1).isdigit() and "." in reported:
            reported = str(int(float(reported)))          # 10.000000 -> 10
        assert mine == reported, (key, mine, reported)
        compared += 1
    assert compared == 26
    # The hand-written scenario's [server] is what the file gives.
    written = load_scenario(EXAMPLE / "scenario.toml")
    from_cnf = scenario_from_dict({**doc, "server": {"version": "mariadb-10.11"}}, "live.toml",
                                  option_files=[str(EXAMPLE / "my.cnf")])
    assert written.server == from_cnf.server


def test_comments_after_flags_and_group_headers(tmp_path):
    f = cnf(tmp_path, "[mysqld]   # the server\nskip-innodb_doublewrite   # no doublewrite\n"
                      "innodb_flush_method = \"O_DIRECT\"  # quoted, then a comment\n")
    s = scenario([f])
    assert s.server.innodb_doublewrite is False and s.server.innodb_flush_method == "O_DIRECT"


def test_windows_file_with_bom_and_crlf(tmp_path):
    p = tmp_path / "my.ini"
    p.write_bytes(b"\xef\xbb\xbf[mysqld]\r\ninnodb_io_capacity = 900\r\n")
    assert scenario([str(p)]).server.innodb_io_capacity == 900


def test_include_directive_with_a_tab(tmp_path):
    cnf(tmp_path, "[mysqld]\ninnodb_io_capacity = 650\n", "inc.cnf")
    f = cnf(tmp_path, "[mysqld]\n!include\tinc.cnf\n")
    assert scenario([f]).server.innodb_io_capacity == 650


def test_dedicated_server_from_an_option_file_sizes_the_server(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ninnodb_dedicated_server\n")
    s = scenario([f], "mysql-8.0.30", overrides=["hardware.memory=32G"])
    assert s.server.innodb_dedicated_server is True
    assert s.server.innodb_buffer_pool_size_bytes == 24 << 30
    assert s.server.innodb_redo_log_capacity_bytes == 18 << 30      # round(0.5625 x 32) GB
    assert s.server.innodb_flush_method == "O_DIRECT_NO_FSYNC"
    f = cnf(tmp_path, "[mysqld]\ninnodb_dedicated_server = OFF\n", "off.cnf")
    off = scenario([f], "mysql-8.0.30")
    assert off.server.innodb_buffer_pool_size_bytes == 128 << 20
    assert not any("innodb_dedicated_server" in n and "sets" in n for n in off.notes)


def test_dedicated_server_in_an_option_file_of_5_7_stops_the_server(tmp_path):
    f = cnf(tmp_path, "[mysqld]\ninnodb_dedicated_server = ON\n")
    with pytest.raises(InputError, match="no such variable"):
        scenario([f], "mysql-5.7")




@pytest.mark.parametrize("version, text, setting, value, note", [
    ("mysql-5.6", "innodb_io_capacity = 50", "innodb_io_capacity", 100, "adjusted to 100, MySQL 5.6's minimum"),
    ("mysql-5.6", "innodb_max_dirty_pages_pct = 100", "innodb_max_dirty_pages_pct", 99, "adjusted to 99"),
    ("mysql-8.0", "innodb_max_dirty_pages_pct = 100", "innodb_max_dirty_pages_pct", 99.999, "adjusted to 99.999"),
    ("mysql-8.0", "innodb_flush_log_at_timeout = 0", "innodb_flush_log_at_timeout_s", 1, "adjusted to 1"),
    ("mariadb-10.11", "innodb_flush_log_at_timeout = 0", "innodb_flush_log_at_timeout_s", 0, None),
    ("mysql-5.7", "innodb_old_blocks_pct = 2", "innodb_old_blocks_pct", 5, "adjusted to 5, MySQL 5.7's minimum"),
    ("mysql-5.7", "innodb_write_io_threads = 100", "innodb_write_io_threads", 64, "maximum"),
])
def test_out_of_range_values_are_adjusted_as_the_server_adjusts_them(tmp_path, version, text, setting, value, note):
    """my_getopt holds a numeric variable to its declared range at startup: a my.cnf value outside
    becomes the bound, with a warning, and the server starts; innosim does the same, with a note."""
    f = cnf(tmp_path, f"[mysqld]\n{text}\n")
    s = scenario([f], version=version)
    assert getattr(s.server, setting) == value
    notes = [n for n in s.notes if "adjusted" in n]
    assert (notes == []) if note is None else (len(notes) == 1 and notes[0].startswith(f"{f} line 2: ")
                                                and note in notes[0])


def test_flush_log_at_trx_commit_3_is_mariadbs(tmp_path):
    """MariaDB declares 0..3; MySQL 0..2, where mysqld adjusts a my.cnf's 3 to 2 with a warning."""
    f = cnf(tmp_path, "[mysqld]\ninnodb_flush_log_at_trx_commit = 3\n")
    assert scenario([f], version="mariadb-10.11").server.innodb_flush_log_at_trx_commit == 3
    s = scenario([f], version="mysql-8.0")
    assert s.server.innodb_flush_log_at_trx_commit == 2 and any("adjusted to 2" in n for n in s.notes)
