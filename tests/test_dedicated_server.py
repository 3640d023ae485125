"""innodb_dedicated_server: the sizes MySQL 8.0 / 8.4 choose from the machine (models.dedicated_server)
and how a scenario applies them (sim.config)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models import dedicated_server as ds
from models.errors import InputError
from models.versions import buf_pool_size_align, startup_instances
from sim.config import scenario_from_dict, setting_value
from sim.server_vars import settings_from_variables

M, G = 1 << 20, 1 << 30

OLTP = {"workload": {"kind": "oltp", "profile": "dbt2", "warehouses": 10, "users": 8},
        "hardware": {"device": "seed-12core-disks-2012", "cpu_cores": 12}, "run": {"duration": "1s"}}


def scn(version="mysql-8.0", memory="64G", **server):
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = dict(server, version=version, innodb_dedicated_server=True)
    if memory:
        doc["hardware"]["memory"] = memory
    return scenario_from_dict(doc, "s.toml")


def test_c_round_takes_halves_away_from_zero():
    assert ds.c_round(10.5) == 11 and ds.c_round(7.5) == 8 and ds.c_round(7.49) == 7


def test_buffer_pool_from_memory():
    # innodb_buffer_pool_size_init: < 1 GB unchanged, <= 4 GB x 0.5, above x 0.75
    assert ds.buffer_pool_bytes(512 * M) is None
    assert ds.buffer_pool_bytes(1 * G) == 512 * M
    assert ds.buffer_pool_bytes(4 * G) == 2 * G
    assert ds.buffer_pool_bytes(64 * G) == 48 * G


def test_pool_alignment_as_buf_pool_size_align():
    assert buf_pool_size_align(1536 * M, 8) == 2 * G            # 128M x 8 = 1G steps
    assert buf_pool_size_align(512 * M, 1) == 512 * M
    assert buf_pool_size_align(100 * M, 1) == 100 * M            # the chunk shrinks to the pool
    assert buf_pool_size_align(int(47.1 * G), 8) == 48 * G
    assert buf_pool_size_align(4 * G, 8, 1 * G) == 4 * G         # 1G x 8 > 4G: chunks of 512M
    assert buf_pool_size_align(700 * M, startup_instances(700 * M, 8)) == 768 * M


@given(st.integers(5 * M, 1 << 40), st.integers(1, 64), st.integers(1, 4096))
def test_aligned_pool_is_the_least_whole_number_of_chunk_rows(pool, inst, chunk_mb):
    chunk = chunk_mb * M
    out = buf_pool_size_align(pool, inst, chunk)
    unit = out // inst if chunk * inst > pool else chunk * inst
    assert out >= pool and out - pool < max(unit, inst) and out % inst == 0


def pool_of(version, size, **server):
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = dict(server, version=version, innodb_buffer_pool_size=size)
    return scenario_from_dict(doc, "s.toml")


def test_scenario_pool_runs_rounded_on_5_7_and_later_only():
    s = pool_of("mysql-5.7", "1536M", innodb_buffer_pool_instances=8)
    assert s.server.innodb_buffer_pool_size_bytes == 2 * G
    assert any("1536M runs as 2G" in n for n in s.notes)
    assert "rounded up to a multiple of 128M x 8" in dict(s.origins)["server.innodb_buffer_pool_size"]
    assert pool_of("mysql-5.6", "1536M").server.innodb_buffer_pool_size_bytes == 1536 * M
    assert pool_of("mariadb-10.11", "1500M").server.innodb_buffer_pool_size_bytes == 1500 * M
    assert pool_of("mysql-8.0", "1536M", innodb_buffer_pool_chunk_size="64M").server.innodb_buffer_pool_size_bytes \
        == 1536 * M
    s = pool_of("mysql-8.0", "2G", innodb_buffer_pool_chunk_size="1500K")
    assert s.server.innodb_buffer_pool_chunk_size_bytes == 1 * M
    with pytest.raises(InputError, match="no such variable"):
        pool_of("mysql-5.6", "1G", innodb_buffer_pool_chunk_size="64M")


def test_log_files_80_from_the_pool_in_whole_gb():
    assert ds.log_files_80(64 * G, 48 * G, False) == (1024 * M, 36)
    assert ds.log_files_80(8 * G, 6 * G, False) == (512 * M, 6)
    assert ds.log_files_80(256 * G, 192 * G, False) == (2048 * M, 64)
    assert ds.log_files_80(3 * G, 1536 * M, False) == (512 * M, 2)     # 1 GB -> 1 file -> at least 2
    assert ds.log_files_80(20 * G, 14 * G, False) == (1024 * M, 11)    # round(10.5) = 11, as C rounds
    assert ds.log_files_80(4 * G, 900 * M, False) is None              # a pool under 1 GB: defaults
    # pool given: from the pool the memory would have given (truncated to whole GB)
    assert ds.log_files_80(64 * G, 8 * G, True) == (1024 * M, 36)
    assert ds.log_files_80(512 * M, 8 * G, True) == (1024 * M, 6)      # under 1 GB of memory: the given pool


def test_redo_capacity_8030_follows_the_manuals_table():
    assert ds.redo_capacity_8030(1536 * M, False) is None
    assert ds.redo_capacity_8030(3 * G, False) == 1 * G
    assert ds.redo_capacity_8030(5 * G // 2, True) == 512 * M
    assert ds.redo_capacity_8030(8 * G, False) == 3 * G                # round(6) x 0.5 GB
    assert ds.redo_capacity_8030(10 * G, False) == 4 * G               # round(7.5) = 8, x 0.5 GB
    assert ds.redo_capacity_8030(64 * G, False) == 36 * G              # round(36) x 1 GB
    assert ds.redo_capacity_8030(256 * G, False) == 128 * G


def test_redo_capacity_84_from_logical_processors():
    assert ds.redo_capacity_84(12) == 6 * G
    assert ds.redo_capacity_84(1) == 512 * M
    assert ds.redo_capacity_84(48) == 16 * G


@given(st.integers(16 * M, 1 << 42), st.integers(0, 1 << 40), st.booleans())
def test_sizes_grow_with_memory(mem, extra, pool_given):
    """More memory never gives a smaller pool or redo log, and the pool stays under the memory."""
    pool = ds.buffer_pool_bytes(mem) or 128 * M
    assert pool <= max(mem, 128 * M)
    assert (ds.buffer_pool_bytes(mem + extra) or 128 * M) >= pool
    cap = ds.redo_capacity_8030(mem, pool_given) or 100 * M
    assert (ds.redo_capacity_8030(mem + extra, pool_given) or 100 * M) >= cap


def test_scenario_8_0_sets_pool_log_files_and_flush_method():
    s = scn()
    assert s.server.innodb_buffer_pool_size_bytes == 48 * G
    assert s.server.innodb_buffer_pool_instances == 8
    assert (s.server.innodb_log_file_size_bytes, s.server.innodb_log_files_in_group) == (G, 36)
    assert s.server.innodb_flush_method == "O_DIRECT_NO_FSYNC"
    origins = dict(s.origins)
    assert origins["server.innodb_buffer_pool_size"] == "innodb_dedicated_server (hardware.memory 64G)"
    assert origins["server.innodb_flush_method"] == "innodb_dedicated_server"


def test_scenario_explicit_settings_win_with_the_servers_warning():
    s = scn(innodb_buffer_pool_size="8G", innodb_flush_method="O_DIRECT", innodb_log_files_in_group=4)
    assert s.server.innodb_buffer_pool_size_bytes == 8 * G
    assert s.server.innodb_flush_method == "O_DIRECT"
    assert s.server.innodb_log_files_in_group == 4
    assert s.server.innodb_log_file_size_bytes == G        # from the 48G the memory would give
    note = next(n for n in s.notes if "innodb_dedicated_server" in n)
    assert "is ignored for innodb_buffer_pool_size because innodb_buffer_pool_size=8G" in note
    assert "is ignored for innodb_flush_method" in note


def test_scenario_8_0_30_and_8_4():
    s = scn("mysql-8.0.30")
    assert s.server.innodb_redo_log_capacity_bytes == 36 * G
    assert s.server.innodb_flush_method == "O_DIRECT_NO_FSYNC"
    s = scn("mysql-8.4")
    assert s.server.innodb_redo_log_capacity_bytes == 6 * G           # 12 cores / 2
    assert s.server.innodb_flush_method == "O_DIRECT"                  # 8.4's own default, untouched
    assert s.server.innodb_buffer_pool_size_bytes == 48 * G
    # the deprecated pair, given, wins over the automatic capacity
    s = scn("mysql-8.0.30", innodb_log_file_size="1G", innodb_log_files_in_group=3)
    assert s.server.innodb_redo_log_capacity_bytes == 3 * G


def test_memory_is_required_only_when_something_is_sized_from_it():
    with pytest.raises(InputError, match="hardware.memory"):
        scn(memory=None)
    s = scn("mysql-8.4", memory=None, innodb_buffer_pool_size="4G")    # 8.4: redo from the cores
    assert s.server.innodb_redo_log_capacity_bytes == 6 * G
    s = scn("mysql-8.0.30", memory=None, innodb_buffer_pool_size="4G", innodb_redo_log_capacity="2G")
    assert s.server.innodb_redo_log_capacity_bytes == 2 * G


@pytest.mark.parametrize("version", ["mysql-5.6", "mysql-5.7", "mariadb-10.11"])
def test_versions_without_the_variable_refuse_it(version):
    with pytest.raises(InputError, match="no such variable"):
        scn(version)


def test_memory_alone_changes_nothing():
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = {"version": "mysql-8.0"}
    doc["hardware"]["memory"] = "64G"
    s = scenario_from_dict(doc, "s.toml")
    assert s.server.innodb_buffer_pool_size_bytes == 128 * M
    assert setting_value(s, "hardware", "memory") == 64 * G


def test_server_variables_keep_the_values_it_chose(tmp_path):
    p = tmp_path / "vars.tsv"
    p.write_text("version\t8.0.36\ninnodb_dedicated_server\tON\ninnodb_buffer_pool_size\t51539607552\n"
                 "innodb_redo_log_capacity\t38654705664\ninnodb_flush_method\tO_DIRECT_NO_FSYNC\n")
    name, cnf = settings_from_variables(str(p))
    assert name == "mysql-8.0.30"
    assert "innodb_dedicated_server" not in cnf.settings
    assert any("values it chose at startup" in n for n in cnf.notes)
    doc = {k: dict(v) for k, v in OLTP.items()}
    s = scenario_from_dict(doc, "s.toml", server_vars=str(p))           # no hardware.memory needed
    assert s.server.innodb_buffer_pool_size_bytes == 48 * G
    assert s.server.innodb_redo_log_capacity_bytes == 36 * G
    assert s.server.innodb_dedicated_server is False
