"""A running server's variables (SHOW GLOBAL VARIABLES, mysqladmin variables, JSON) as settings."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from models.errors import InputError
from sim.config import load_scenario, scenario_from_dict, setting_value
from sim.server_vars import read_variables, settings_from_variables, version_name_for

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "validation" / "live" / "example"
OLTP = {"workload": {"kind": "oltp", "profile": "dbt2", "warehouses": 10, "users": 4},
        "hardware": {"device": "seed-12core-disks-2012"}}


def scenario(path, **kw):
    doc = {k: dict(v) for k, v in OLTP.items()}
    return scenario_from_dict(doc, "s.toml", server_vars=str(path), **kw)


@pytest.mark.parametrize("reported, name", [
    ("5.6.51-log", "mysql-5.6"), ("5.7.44", "mysql-5.7"), ("8.0.29", "mysql-8.0"), ("8.0.30", "mysql-8.0.30"),
    ("8.0.36-0ubuntu0.22.04.1", "mysql-8.0.30"), ("8.4.3", "mysql-8.4"),
    ("10.11.19-MariaDB-0+deb12u1", "mariadb-10.11"), ("10.6.18-MariaDB-log", "mariadb-10.11"),
    ("11.4.2-MariaDB", "mariadb-10.11"),
])
def test_versions(reported, name):
    got, note = version_name_for(reported, "v")
    assert got == name
    assert (note is None) == (reported.startswith("10.11") or "MariaDB" not in reported)


@pytest.mark.parametrize("reported", ["5.5.62", "9.1.0", "10.4.33-MariaDB", "banana"])
def test_versions_not_simulated(reported):
    with pytest.raises(InputError, match="version"):
        version_name_for(reported, "v")


@pytest.mark.parametrize("written, name, noted", [
    ("mysql-8.0.36", "mysql-8.0.30", True), ("8.0.36", "mysql-8.0.30", True), ("mysql-8.0.29", "mysql-8.0", False),
    ("MySQL-5.7.44", "mysql-5.7", False), ("mysql-8.4.3", "mysql-8.4", False), ("mariadb-11.4", "mariadb-10.11", True),
    ("mariadb-10.11.19", "mariadb-10.11", False), ("11.4.7-MariaDB-log", "mariadb-10.11", True),
    ("mysql-8.4", "mysql-8.4", False), ("8.4", "mysql-8.4", False), ("5.7", "mysql-5.7", False),
    ("10.11", "mariadb-10.11", False), ("11.4", "mariadb-10.11", True),
])
def test_scenario_version_takes_a_release(written, name, noted):
    """server.version may name a release: it runs as the version innosim has for it, with a note
    when that is not the release's own series."""
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = {"version": written}
    s = scenario_from_dict(doc, "s.toml")
    assert s.server.version == name
    notes = [n for n in s.notes if n.startswith("server.version")]
    assert notes == ([f"server.version {written!r} is simulated as {name}"
                      + (" (its flushing algorithms and defaults)" if "mariadb" in written.lower()
                        or written.startswith("1") else "")]
                     if noted else [])


@pytest.mark.parametrize("written, problem", [
    ("mysql-9.1.0", "MySQL 9.1 is not simulated"), ("mariadb-10.4", "MariaDB 10.4 is not simulated"),
    ("oracle-8", "is not allowed"), (8, "is a number"), (8.4, "is a number"), ("mysql-8", "is not allowed"),
    ("8.0", "two simulated versions"), ("9.1", "MySQL 9.1 is not simulated"), ("10.4", "MariaDB 10.4 is not simulated"),
    ("10.3.39", "MariaDB 10.3 is not simulated"), ("mysql-10.6.1", "MySQL 10.6 is not simulated"),
])
def test_scenario_version_refused(written, problem):
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = {"version": written}
    with pytest.raises(InputError) as err:
        scenario_from_dict(doc, "s.toml")
    assert err.value.field == "server.version" and err.value.source == "s.toml" and problem in str(err.value)


def test_option_groups_follow_a_release_named_in_the_scenario(tmp_path):
    """[mysqld-8.0] is read for a scenario that names mysql-8.0.36, as for mysql-8.0.30."""
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld-8.0]\ninnodb_io_capacity = 700\n[mysqld-5.7]\ninnodb_io_capacity = 300\n")
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = {"version": "mysql-8.0.36"}
    s = scenario_from_dict(doc, "s.toml", option_files=[str(cnf)])
    assert s.server.innodb_io_capacity == 700


def test_option_groups_are_the_releases_own(tmp_path):
    """MariaDB 11.4 runs as mariadb-10.11 but reads [mariadb-11.4], not [mariadb-10.11], whether the
    scenario names the release or a server's variables report it."""
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mariadb]\ninnodb_io_capacity = 500\n[mariadb-10.11]\ninnodb_io_capacity = 900\n"
                   "[mariadb-11.4]\ninnodb_io_capacity = 700\n")
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = {"version": "mariadb-11.4.2"}
    assert scenario_from_dict(doc, "s.toml", option_files=[str(cnf)]).server.innodb_io_capacity == 700
    doc["server"] = {"version": "mariadb-10.11"}
    assert scenario_from_dict(doc, "s.toml", option_files=[str(cnf)]).server.innodb_io_capacity == 900
    tsv = tmp_path / "vars.tsv"
    tsv.write_text("version\t11.4.2-MariaDB-log\ninnodb_io_capacity\t200\n")
    s = scenario(tsv, option_files=[str(cnf)])
    assert s.server.version == "mariadb-10.11" and s.server.innodb_io_capacity == 700
    assert any(n.startswith("server.version '11.4.2-MariaDB-log' is simulated as mariadb-10.11 (its flushing "
                            "algorithms and defaults)") for n in s.notes)
    s = scenario(tsv, option_files=[str(cnf)], overrides=["server.version=mariadb-10.11"])
    assert s.server.innodb_io_capacity == 900


def test_tsv_with_header_and_mysqladmin_table(tmp_path):
    tsv = tmp_path / "vars.tsv"
    tsv.write_text("Variable_name\tValue\nversion\t8.0.36\ninnodb_io_capacity\t2000\n"
                   "innodb_flush_method\tO_DIRECT\ninnodb_doublewrite\tON\nmax_connections\t151\n"
                   "innodb_max_dirty_pages_pct\t90.000000\ninnodb_log_file_size\t50331648\n"
                   "innodb_redo_log_capacity\t104857600\ninnodb_log_files_in_group\t2\n")
    s = scenario(tsv)
    assert s.server.version == "mysql-8.0.30"
    assert s.server.innodb_io_capacity == 2000 and s.server.innodb_flush_method == "O_DIRECT"
    assert s.server.innodb_max_dirty_pages_pct == 90
    assert s.server.innodb_redo_log_capacity_bytes == 100 << 20
    table = tmp_path / "vars.txt"
    table.write_text("+-----------------------+---------+\n| Variable_name | Value |\n"
                     "+-----------------------+---------+\n| innodb_io_capacity | 300 |\n| version | 5.7.44-log |\n"
                     "| innodb_flush_method |  |\n+-----------------------+---------+\n")
    s = scenario(table)
    assert s.server.version == "mysql-5.7" and s.server.innodb_io_capacity == 300
    assert s.server.innodb_flush_method == "fsync"          # 5.7 prints an empty value for its default


def test_precedence_vars_then_cnf_then_set(tmp_path):
    tsv = tmp_path / "vars.tsv"
    tsv.write_text("version\t5.7.44\ninnodb_io_capacity\t400\ninnodb_lru_scan_depth\t2048\n")
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld-5.7]\ninnodb_io_capacity = 800\n")
    s = scenario(tsv, option_files=[str(cnf)], overrides=["server.innodb_lru_scan_depth=512"])
    assert s.server.version == "mysql-5.7"                  # picks the [mysqld-5.7] group
    assert s.server.innodb_io_capacity == 800
    assert s.server.innodb_lru_scan_depth == 512
    s = scenario(tsv, overrides=["server.version=mysql-8.0"])
    assert s.server.version == "mysql-8.0"


def test_fractional_values_are_kept_where_the_server_has_doubles_else_rounded_with_a_note(tmp_path):
    """8.0 declares innodb_max_dirty_pages_pct a double: 75.5 is taken as it is, and a whole 90.000000
    becomes 90; a variable innosim keeps whole is rounded, with a note."""
    tsv = tmp_path / "vars.tsv"
    tsv.write_text("version\t8.0.20\ninnodb_max_dirty_pages_pct\t75.500000\n"
                   "innodb_max_dirty_pages_pct_lwm\t10.000000\ninnodb_io_capacity\t300.4\n")
    s = scenario(tsv)
    assert s.server.innodb_max_dirty_pages_pct == 75.5
    assert s.server.innodb_max_dirty_pages_pct_lwm == 10 and isinstance(s.server.innodb_max_dirty_pages_pct_lwm, int)
    assert s.server.innodb_io_capacity == 300
    assert [n for n in s.notes if "kept whole" in n] == [f"{tsv} line 4: innodb_io_capacity = 300.4 is kept "
                                                          "whole by innosim: 300"]


def test_live_example_variables_give_the_example_server(tmp_path):
    """The live capture's SHOW VARIABLES (MariaDB 10.11.19) alone give the scenario's server."""
    variables = json.loads((EXAMPLE / "capture.json").read_text())["database"]["variables"]
    path = tmp_path / "vars.json"
    path.write_text(json.dumps(variables))
    s = scenario(path)
    from sim.config import load_scenario

    written = load_scenario(EXAMPLE / "scenario.toml")
    assert s.server == written.server
    shipped = EXAMPLE / "variables.tsv"
    assert read_variables(str(shipped)) == [(k, v, n) for n, (k, v) in enumerate(variables.items(), start=1)]
    assert scenario(shipped).server == written.server


@pytest.mark.parametrize("text, needle", [
    ("", "holds no variables"),
    ("innodb_io_capacity\t200\n", "version variable is missing"),
    ("version\t8.0.36\ninnodb_io_capacity\tlots\n", "line 2: innodb_io_capacity: 'lots'"),
    ("version\t8.0.36\n| broken\n", "line 2: not a `| name | value |` row"),
    ("version\t8.0.36\n!!! junk !!!\n", "line 2"),
    ('{"version": "8.0.36", "x": [1]}', "one object of names and plain values"),
    ('{"version": ', "not valid JSON"),
    ("version\t12.0.0\n", "not simulated"),
])
def test_bad_files(tmp_path, text, needle):
    p = tmp_path / "vars.tsv"
    p.write_text(text)
    with pytest.raises(InputError) as err:
        scenario(p)
    assert needle in str(err.value), str(err.value)


def test_cli(tmp_path):
    tsv = tmp_path / "vars.tsv"
    tsv.write_text("version\t8.4.3\ninnodb_io_capacity\t10000\ninnodb_buffer_pool_size\t1073741824\n")
    r = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--server-vars", str(tsv), "--set", "run.duration=1s",
                        "-o", str(tmp_path / "o")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "MySQL 8.4 LTS (version 8.4.3)" in r.stderr
    # The resolved scenario names the release, which loads back as mysql-8.4 with its notes.
    resolved = tmp_path / "o" / "scenario.resolved.toml"
    assert 'version = "8.4.3"' in resolved.read_text()
    assert load_scenario(resolved).server.version == "mysql-8.4"
    bad = tmp_path / "bad.tsv"
    bad.write_text("version\t4.1.22\n")
    r = subprocess.run([sys.executable, "-m", "sim.cli", "run", "--server-vars", str(bad)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "MySQL 4.1 is not simulated" in r.stderr


def test_reader_keeps_line_numbers(tmp_path):
    p = tmp_path / "v.tsv"
    p.write_text("Variable_name\tValue\n\nversion\t5.6.51\n")
    assert read_variables(str(p)) == [("version", "5.6.51", 3)]
    assert settings_from_variables(str(p))[0] == "mysql-5.6"


def test_a_missing_or_binary_variables_file_is_named_as_one(tmp_path):
    """The messages speak of a variables file and what it may hold, not of a my.cnf."""
    for path, needle in ((tmp_path / "nope.tsv", "no such variables file"), (tmp_path, "is a directory")):
        with pytest.raises(InputError) as err:
            scenario(path)
        assert needle in str(err.value) and "SHOW GLOBAL VARIABLES output" in str(err.value)
        assert "my.cnf" not in str(err.value)
    binary = tmp_path / "vars.bin"
    binary.write_bytes(b"version\x008.0.36\n")
    with pytest.raises(InputError, match="not a text variables file"):
        scenario(binary)


def test_the_capture_kits_capture_json_is_taken_whole():
    """--server-vars capture.json reads its database.variables: the same server as variables.tsv."""
    example = Path(__file__).resolve().parent.parent / "validation" / "live" / "example"
    a, b = (scenario(example / name) for name in ("capture.json", "variables.tsv"))
    assert a.server == b.server and a.server.version == "mariadb-10.11"
