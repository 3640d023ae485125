"""Scenario loading: defaults, units, overrides, and every kind of bad input."""

from pathlib import Path

import pytest

from models.errors import InputError
from sim.config import SCHEMA, load_scenario, parse_override, scenario_from_dict
from sim.iobench import cases_from_scenario

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_defaults_and_units(tmp_path):
    p = write(tmp_path, """
[server]
innodb_log_file_size = "3G"
innodb_page_size = "16K"
innodb_doublewrite = "OFF"
[hardware]
filesystem = "ext4"
[workload]
block_size = ["4K", "16K"]
processes = [1, 4]
[run]
duration = "250ms"
""")
    s = load_scenario(p)
    assert s.server.innodb_log_file_size_bytes == 3 << 30
    assert s.server.innodb_page_size_bytes == 16384
    assert s.server.innodb_doublewrite is False
    assert s.server.innodb_buffer_pool_instances == 8
    assert s.hardware.filesystem == ("ext4",)
    assert s.workload.block_bytes == (4096, 16384)
    assert s.run.duration_s == pytest.approx(0.25)
    assert len(cases_from_scenario(s)) == 4


def test_server_enumerations_are_taken_without_regard_to_case(tmp_path):
    """As mysqld (and sim.mycnf) take them: o_direct is O_DIRECT, CRC32 is crc32. Other sections'
    words stay exact."""
    s = load_scenario(write(tmp_path, "[server]\ninnodb_flush_method = \"o_direct\"\n"),
                      ["server.innodb_checksum_algorithm=CRC32"])
    assert s.server.innodb_flush_method == "O_DIRECT" and s.server.innodb_checksum_algorithm == "crc32"
    with pytest.raises(InputError, match="'XFS' is not allowed"):
        load_scenario(write(tmp_path, "[hardware]\nfilesystem = \"XFS\"\n"))


@pytest.mark.parametrize("line, problem", [
    ('block_size = ["4K", "16K", "4096"]', "['4K', '16K', '4096'] names 4096 twice"),
    ("processes = [4, 1, 4]", "[4, 1, 4] names 4 twice"),
    ('filesystem = ["xfs", "ext4", "xfs"]', "names 'xfs' twice"),
])
def test_a_grid_axis_naming_a_value_twice_is_refused(tmp_path, line, problem):
    """4K and 4096 are one block size: a grid that names it twice would run the same case twice
    (as innosim sweep --grid refuses a repeated value)."""
    section = "hardware" if line.startswith("filesystem") else "workload"
    with pytest.raises(InputError) as err:
        load_scenario(write(tmp_path, f"[{section}]\n{line}\n"))
    assert problem in str(err.value) and "distinct values" in str(err.value)


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scenarios_load(path):
    s = load_scenario(path)
    assert cases_from_scenario(s)


def test_overrides(tmp_path):
    p = write(tmp_path, "[hardware]\nfilesystem = \"ext4\"\n")
    s = load_scenario(p, ["hardware.filesystem=xfs", "workload.processes=[1,2,3]", "run.seed=7",
                          "hardware.mount_options=noatime,nobarrier"])
    assert s.hardware.filesystem == ("xfs",)
    assert s.workload.processes == (1, 2, 3)
    assert s.run.seed == 7
    assert s.hardware.mount_options == "noatime,nobarrier"
    assert parse_override("run.duration=\"1s\"") == ("run", "duration", "1s")
    # Names that look like numbers stay names.
    assert parse_override("hardware.kernel=2012") == ("hardware", "kernel", "2012")
    assert load_scenario(p, ["hardware.kernel=2012"]).hardware.kernel == ("2012",)
    assert parse_override("server.innodb_io_capacity=400") == ("server", "innodb_io_capacity", 400)


def test_boolean_settings_take_what_the_server_takes(tmp_path):
    """0/1, ON/OFF and true/false all mean the same, as in my.cnf; other numbers are refused."""
    p = write(tmp_path, "[server]\ninnodb_doublewrite = 0\n")
    assert load_scenario(p).server.innodb_doublewrite is False
    for text, want in (("0", False), ("1", True), ("OFF", False), ("on", True), ("false", False)):
        assert load_scenario(p, [f"server.innodb_doublewrite={text}"]).server.innodb_doublewrite is want
    with pytest.raises(InputError, match="not a boolean.*ON, OFF, 1 or 0"):
        load_scenario(p, ["server.innodb_doublewrite=2"])


def test_page_sizes_per_version(tmp_path):
    """32K and 64K pages exist from MySQL 5.7.6 and in MariaDB; 5.6 refuses them."""
    p = write(tmp_path, "[server]\ninnodb_page_size = \"64K\"\n")
    with pytest.raises(InputError, match="not a page size MySQL 5.6 supports.*allowed: 4K, 8K, 16K"):
        load_scenario(p)
    for version in ("mysql-5.7", "mysql-8.0.30", "mariadb-10.11"):
        s = load_scenario(p, [f"server.version={version}"])
        assert s.server.innodb_page_size_bytes == 65536
    assert load_scenario(p, ["server.version=mysql-8.4", "server.innodb_page_size=32K"]).server \
        .innodb_page_size_bytes == 32768


@pytest.mark.parametrize("text,overrides,source,field,match", [
    ("[srever]\n", [], "s.toml", "srever", "unknown section"),
    ("[run]\nduraton = 1\n", [], "s.toml", "run.duraton", "unknown key"),
    ("[server]\ninnodb_page_size = \"3K\"\n", [], "s.toml", "server.innodb_page_size", "not allowed"),
    ("[server]\ninnodb_page_size = \"64K\"\n", [], "s.toml", "server.innodb_page_size", "not a page size"),
    ("[server]\ninnodb_page_size = \"128K\"\n", [], "s.toml", "server.innodb_page_size", "not allowed"),
    ("[server]\ninnodb_buffer_pool_instances = 65\n", [], "s.toml", "server.innodb_buffer_pool_instances", "out of range"),
    ("[server]\ninnodb_buffer_pool_instances = \"8\"\n", [], "s.toml", "server.innodb_buffer_pool_instances", "whole number"),
    ("[server]\ninnodb_log_file_size = \"lots\"\n", [], "s.toml", "server.innodb_log_file_size", "not valid"),
    ("[server]\ninnodb_io_capacity = 4000\ninnodb_io_capacity_max = 2000\n", [], "s.toml",
     "server.innodb_io_capacity_max", "below"),
    ("[server]\ninnodb_log_file_size = \"300G\"\n", [], "s.toml", "server.innodb_log_file_size", "512G"),
    ("[server]\ninnodb_log_file_size = \"1M\"\ninnodb_thread_concurrency = 64\n", [], "s.toml",
     "server.innodb_log_file_size", "too small for innodb_thread_concurrency 64"),
    ("[workload]\nprocesses = 0\n", [], "s.toml", "workload.processes", "out of range"),
    ("[workload]\nprocesses = []\n", [], "s.toml", "workload.processes", "empty"),
    ("[workload]\ndata_size = [\"1G\"]\n", [], "s.toml", "workload.data_size", "not a list"),
    ("[workload]\nblock_size = \"1000\"\n", [], "s.toml", "workload.block_size", "multiple of 512"),
    ("[hardware]\nfilesystem = \"raw\"\nmount_options = \"\"\n[workload]\nio_mode = \"fsync\"\n", [], "s.toml",
     "workload.io_mode", "O_DIRECT only"),
    ("[hardware]\nkernel = \"modern\"\nmount_options = \"noatime,nobarrier\"\n", [], "s.toml", "hardware.mount_options",
     "removed"),
    ("[hardware]\ndevice = \"nope\"\n", [], "s.toml", "hardware.device", "not found"),
    ("[run]\nresolution = \"1s\"\nduration = \"100ms\"\n", [], "s.toml", "run.resolution", "longer"),
    ("[workload]\nkind = \"oltp\"\nwarehouses = 1\n", ["run.duration=5ms"], "--set", "run.duration",
     "shorter than one tick"),
    ("[run]\nduration = \"1ms\"\n", [], "s.toml", "run.duration", "shorter than one tick"),
    ("[workload]\nkind = \"oltp\"\nwarehouses = 1\n[run]\nresolution = \"30ms\"\n", [], "s.toml", "run.resolution",
     "does not divide 100 ms"),
    ("[workload]\nkind = \"oltp\"\nwarehouses = 1\n[run]\nresolution = \"1s\"\n", [], "s.toml", "run.resolution",
     "does not divide 100 ms"),
    ("", ["run.seed=-1"], "--set", "run.seed", "out of range"),
    ("", ["hardware.filesystem=btrfs"], "--set", "hardware.filesystem", "not allowed"),
    ("", ["bogus.key=1"], "--set", "bogus.key", "unknown section"),
    ("", ["run.speed=1"], "--set", "run.speed", "unknown key"),
    ("", ["noequals"], "--set", "noequals", "section.key=value"),
])
def test_bad_input_names_source_field_and_allowed(tmp_path, text, overrides, source, field, match):
    p = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_scenario(p, overrides)
    e = err.value
    assert e.source.endswith(source)
    assert e.field == field
    assert match in str(e)
    assert "\n" not in str(e)


def test_bad_toml_and_missing_file(tmp_path):
    p = write(tmp_path, "[run\nseed = 1\n")
    with pytest.raises(InputError, match="invalid TOML.*line 1"):
        load_scenario(p)
    with pytest.raises(InputError, match="no such scenario"):
        load_scenario(tmp_path / "missing.toml")


def test_every_key_documents_what_is_allowed():
    for section, keys in SCHEMA.items():
        for name, key in keys.items():
            assert key.allowed(), f"{section}.{name}"


def test_scenario_from_dict_rejects_non_table_section():
    with pytest.raises(InputError, match="must be a table"):
        scenario_from_dict({"run": 5}, "x")


def test_origins_name_where_each_value_came_from(tmp_path):
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld]\n\ninnodb_io_capacity = 900\n")
    p = write(tmp_path, """
[server]
version = "mysql-8.4"
innodb_buffer_pool_size = "4G"
[hardware]
device = "seed-12core-disks-2012"
cpu_cores = 16
[workload]
kind = "oltp"
warehouses = 10
""")
    s = load_scenario(p, ["server.innodb_lru_scan_depth=512"], [str(cnf)])
    o = dict(s.origins)
    assert o["server.innodb_buffer_pool_size"] == str(p)
    assert o["server.innodb_io_capacity"] == f"{cnf} line 3"
    assert o["server.innodb_lru_scan_depth"] == "--set"
    assert o["server.innodb_io_capacity_max"] == "default: 2 x innodb_io_capacity"
    assert s.server.innodb_io_capacity_max == 1800
    assert o["server.innodb_buffer_pool_instances"] == "default: from the pool size and hardware.cpu_cores"
    assert o["server.innodb_page_cleaners"] == "default: innodb_buffer_pool_instances"
    assert o["server.innodb_flush_method"] == "MySQL 8.4 LTS default"
    assert o["server.innodb_log_file_size"].startswith("not used by MySQL 8.4")
    assert o["server.innodb_checksums"] == "not a MySQL 8.4 LTS variable"
    assert o["workload.cpu_per_txn"] == "profile dbt2"
    assert o["workload.data_size"] == "warehouses x 100 MB"
    assert o["run.seed"] == "default"
    assert len(o) == sum(len(keys) for keys in SCHEMA.values())
    m = scenario_from_dict({"server": {"version": "mariadb-10.11"}, "workload": {"kind": "oltp", "data_size": "1G"},
                            "hardware": {"device": "seed-12core-disks-2012"}}, "m.toml")
    assert dict(m.origins)["server.innodb_buffer_pool_instances"].startswith("MariaDB 10.11: fixed")


def test_doublewrite_takes_the_8_0_30_values_as_option_files_do():
    """DETECT_AND_RECOVER is ON (MySQL 8.0.30+ manual); DETECT_ONLY is kept (models.doublewrite
    writes page identifiers only), in a scenario or --set as in a my.cnf (sim.mycnf.convert_value);
    before 8.0.30 and in MariaDB innodb_doublewrite is a boolean, and the server refuses it."""
    doc = {"server": {"version": "mysql-8.0.30", "innodb_doublewrite": "DETECT_AND_RECOVER"},
           "workload": {"kind": "oltp", "warehouses": 1}}
    assert scenario_from_dict(doc, "s.toml").server.innodb_doublewrite is True
    for version in ("mysql-8.0.30", "mysql-8.4"):
        doc["server"]["version"] = version
        s = scenario_from_dict(doc, "s.toml", overrides=["server.innodb_doublewrite=detect_only"])
        assert s.server.innodb_doublewrite == "DETECT_ONLY"
    for version in ("mysql-5.6", "mysql-5.7", "mysql-8.0", "mariadb-10.11"):
        doc["server"]["version"] = version
        with pytest.raises(InputError, match="DETECT_ONLY is not a value .* accepts .MySQL 8.0.30 and later"):
            scenario_from_dict(doc, "s.toml", overrides=["server.innodb_doublewrite=DETECT_ONLY"])


@pytest.mark.parametrize("version", ["mysql-5.6", "mysql-5.7", "mariadb-10.11"])
def test_innodb_use_fdatasync_is_refused_where_the_server_has_no_such_variable(version):
    # MySQL 8.0.26 added it (WL#14452); mariadbd 10.11.19 --help has no such variable.
    with pytest.raises(InputError, match="no such variable"):
        load_scenario("scenarios/default.toml", [f"server.version={version}", "server.innodb_use_fdatasync=ON"])


@pytest.mark.parametrize("version,default", [("mysql-8.0", False), ("mysql-8.0.30", False), ("mysql-8.4", True)])
def test_innodb_use_fdatasync_default_per_version(version, default):
    assert load_scenario("scenarios/default.toml", [f"server.version={version}"]).server.innodb_use_fdatasync is default


def test_log_device_is_a_profile_beside_the_scenario_or_empty(tmp_path):
    oltp = '[workload]\nkind = "oltp"\ndata_size = "1G"\n'
    s = tmp_path / "s.toml"
    s.write_text(oltp)
    assert load_scenario(s).hardware.log_device == ""                         # the data device
    (tmp_path / "fast.json").write_text((Path(__file__).parents[1] / "models/profiles/fusionio-2012.json").read_text())
    s.write_text(oltp + '[hardware]\nlog_device = "fast.json"\n')
    assert load_scenario(s).hardware.log_device == str(tmp_path / "fast.json")
    s.write_text(oltp + '[hardware]\nlog_device = "nowhere.json"\n')
    with pytest.raises(InputError) as e:
        load_scenario(s)
    assert e.value.field == "hardware.log_device" and "not found" in str(e.value) and '""' in e.value.allowed
    s.write_text('[hardware]\nlog_device = "fusionio-2012"\n')                # iobench has no redo log
    with pytest.raises(InputError) as e:
        load_scenario(s)
    assert e.value.field == "hardware.log_device" and "no redo log" in str(e.value)


def test_cleaner_wake_race_is_mariadbs_only():
    """workload.cleaner_wake_race belongs to MariaDB's page cleaner: a MySQL scenario that names it
    is refused with the key and what is allowed; a MariaDB one takes it, in [0, 1]."""
    with pytest.raises(InputError, match="workload.cleaner_wake_race: is a setting of MariaDB's page cleaner"):
        load_scenario("scenarios/default.toml", ["workload.cleaner_wake_race=0.1"])
    scn = load_scenario("scenarios/live-logsize-384m.toml", ["workload.cleaner_wake_race=0.1"])
    assert scn.workload.cleaner_wake_race == 0.1
    assert load_scenario("scenarios/live-logsize-384m.toml").workload.cleaner_wake_race == 0.057
    with pytest.raises(InputError, match="cleaner_wake_race"):
        load_scenario("scenarios/live-logsize-384m.toml", ["workload.cleaner_wake_race=1.5"])


@pytest.mark.parametrize("fs", ["ext4", "xfs"])
def test_mount_options_left_out_follow_the_kernel_era(tmp_path, fs):
    """A scenario that names no mount options gets its era's: the seed's nobarrier on 2012 kernels,
    barriers on for modern ones (XFS refuses nobarrier there); a grid over eras gets each its own."""
    old = load_scenario(write(tmp_path, f"[hardware]\nfilesystem = \"{fs}\"\n"))
    assert old.hardware.mount_options == "noatime,nodiratime,nobarrier"
    assert dict(old.origins)["hardware.mount_options"] == "default for kernel 2012"
    new = load_scenario(write(tmp_path, f"[hardware]\nfilesystem = \"{fs}\"\nkernel = \"modern\"\n"))
    assert new.hardware.mount_options == "noatime,nodiratime"
    assert dict(new.origins)["hardware.mount_options"] == "default for kernel modern"
    grid = load_scenario(write(tmp_path, f"[hardware]\nfilesystem = [\"raw\", \"{fs}\"]\n"
                                         "kernel = [\"2012\", \"modern\"]\n[workload]\nprocesses = 4\n"))
    assert grid.hardware.mount_options is None
    got = {(c.filesystem, c.kernel): c.mount_options for c in cases_from_scenario(grid)}
    assert got == {("raw", "2012"): "", (fs, "2012"): "noatime,nodiratime,nobarrier",
                   (fs, "modern"): "noatime,nodiratime"}
    given = load_scenario(write(tmp_path, f"[hardware]\nfilesystem = \"{fs}\"\nkernel = \"modern\"\n"
                                          "mount_options = \"relatime\"\n"))
    assert given.hardware.mount_options == "relatime"


@pytest.mark.parametrize("key, top", [
    ("innodb_io_capacity", 2**64 - 1), ("innodb_io_capacity_max", 2**64 - 1),
    ("innodb_lru_scan_depth", 2**64 - 1), ("innodb_old_blocks_time", 2**32 - 1),
])
def test_upper_bounds_are_the_servers(key, top):
    """The server's own maxima (MYSQL_SYSVAR_ULONG up to ~0UL on 64-bit Linux, UINT for
    innodb_old_blocks_time; MariaDB's sysvars_innodb.result NUMERIC_MAX_VALUE): the top is taken,
    one more is refused with the range in whole numbers."""
    extra = ["server.innodb_io_capacity_max=18446744073709551615"] if key == "innodb_io_capacity" else []
    s = scenario_from_dict({}, "s.toml", overrides=extra + [f"server.{key}={top}"])
    assert getattr(s.server, SCHEMA["server"][key].attr) == top
    with pytest.raises(InputError) as err:
        scenario_from_dict({}, "s.toml", overrides=[f"server.{key}={top + 1}"])
    assert f"to {top})" in str(err.value)


def test_files_with_a_byte_order_mark_or_unreadable_get_read_or_one_message(tmp_path, monkeypatch):
    """Windows editors start UTF-8 files with a BOM: scenario and device profile files load with
    it; a file that is not UTF-8 or cannot be read is one message naming it (no traceback)."""
    from models.device import load_profile

    bom = b"\xef\xbb\xbf"
    scn = tmp_path / "bom.toml"
    scn.write_bytes(bom + b'[run]\r\nduration = "2s"\r\n')
    assert load_scenario(scn).run.duration_s == 2.0
    dev = tmp_path / "dev.json"
    dev.write_bytes(bom + (ROOT / "models" / "profiles" / "samsung-pm883.json").read_bytes())
    got, shipped = load_profile(str(dev)), load_profile("samsung-pm883")
    assert (got.name, got.parallelism, got.classes) == (shipped.name, shipped.parallelism, shipped.classes)
    dev.write_bytes(b"\xff\xfe{\x00")
    with pytest.raises(InputError, match="not UTF-8 text") as err:
        load_profile(str(dev))
    assert err.value.source == str(dev)

    def denied(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(InputError, match="cannot be read: Permission denied"):
        load_scenario(scn)
    with pytest.raises(InputError, match="cannot be read: Permission denied"):
        load_profile(str(tmp_path / "bom.toml"))


def test_set_of_one_way_to_give_a_quantity_replaces_the_scenarios_other_way(tmp_path):
    """data_size and warehouses both size the data, rate and think_time both pace the load: a
    --set of one replaces the other where the file gave it (with a note); the file giving both,
    or --set giving both, is still refused."""
    base = '[workload]\nkind = "oltp"\nwarehouses = 50\nthink_time = "1s"\n'
    p = write(tmp_path, base)
    s = load_scenario(p, ["workload.data_size=2G", "workload.rate=100"])
    assert s.workload.data_bytes == 2 << 30 and s.workload.warehouses is None
    assert s.workload.rate_tps == 100 and s.workload.think_s == 0
    assert f"--set workload.data_size replaces workload.warehouses of {p}" in s.notes
    assert f"--set workload.rate replaces workload.think_time of {p}" in s.notes
    assert load_scenario(p).workload.warehouses == 50                     # the file alone is as it was
    with pytest.raises(InputError, match="given together with data_size"):
        load_scenario(p, ["workload.data_size=2G", "workload.warehouses=3"])
    with pytest.raises(InputError, match="given together with data_size"):
        load_scenario(write(tmp_path, base + 'data_size = "2G"\n', "both.toml"))


@pytest.mark.parametrize("key, version, taken", [
    ("innodb_max_dirty_pages_pct", "mysql-5.6", False), ("innodb_max_dirty_pages_pct", "mysql-5.7", True),
    ("innodb_max_dirty_pages_pct", "mysql-8.0.30", True), ("innodb_max_dirty_pages_pct", "mariadb-10.11", True),
    ("innodb_max_dirty_pages_pct_lwm", "mysql-5.6", False), ("innodb_max_dirty_pages_pct_lwm", "mysql-8.4", True),
    ("innodb_adaptive_flushing_lwm", "mysql-8.0", False), ("innodb_adaptive_flushing_lwm", "mariadb-10.11", True),
])
def test_a_fraction_is_taken_where_the_server_declares_a_double(key, version, taken):
    """MYSQL_SYSVAR_DOUBLE (5.7+ dirty-page percentages; MariaDB's three) takes 12.5; a ulong
    (5.6; MySQL's innodb_adaptive_flushing_lwm) is refused with the reason. Whole values stay ints."""
    overrides = [f"server.version={version}", f"server.{key}=12.5"]
    if key.endswith("_lwm") and "dirty" in key:
        overrides.append("server.innodb_max_dirty_pages_pct=90")
    if taken:
        s = scenario_from_dict({}, "s.toml", overrides=overrides)
        assert getattr(s.server, SCHEMA["server"][key].attr) == 12.5
    else:
        with pytest.raises(InputError, match="declares it a whole number") as err:
            scenario_from_dict({}, "s.toml", overrides=overrides)
        assert err.value.field == f"server.{key}" and err.value.source == "--set"
    whole = scenario_from_dict({}, "s.toml", overrides=[f"server.version={version}", f"server.{key}=40.0"])
    assert getattr(whole.server, SCHEMA["server"][key].attr) == 40
    assert isinstance(getattr(whole.server, SCHEMA["server"][key].attr), int)


def test_my_cnf_fraction_and_bad_number(tmp_path):
    cnf = write(tmp_path, "[mysqld]\ninnodb_max_dirty_pages_pct = 90.5\n", "my.cnf")
    s = load_scenario(write(tmp_path, '[server]\nversion = "mysql-8.0"\n'), option_files=[str(cnf)])
    assert s.server.innodb_max_dirty_pages_pct == 90.5
    cnf.write_text("[mysqld]\ninnodb_max_dirty_pages_pct = lots\n")
    with pytest.raises(InputError, match="'lots' is not a number") as err:
        load_scenario(write(tmp_path, '[server]\nversion = "mysql-8.0"\n'), option_files=[str(cnf)])
    assert err.value.source == f"{cnf} line 2"
