"""Page checksums: per-page cost, per-version values and defaults, and where the engine spends it."""

import pytest
from hypothesis import given, settings, strategies as st

from models.checksum import ALL_ALGORITHMS, CHECKSUM_S_PER_16K, page_checksum_s, written_as
from models.errors import InputError
from sim.config import scenario_from_dict
from sim.engine import settings_from
from sim.metrics import summary
from tests.test_engine import assert_engine_invariants, run_checked, small_doc


def oltp(version, **server):
    return {"server": {"version": version, **server},
            "workload": {"kind": "oltp", "warehouses": 1}}


def test_cost_per_page_follows_algorithm_and_page_size():
    assert page_checksum_s("innodb", 16384) == pytest.approx(30.8e-6)
    assert page_checksum_s("crc32", 16384) == pytest.approx(1.9e-6)
    assert page_checksum_s("innodb", 4096) == pytest.approx(30.8e-6 / 4)
    assert page_checksum_s("none", 16384) == 0.0
    assert page_checksum_s("full_crc32", 8192) == pytest.approx(0.95e-6)
    # innodb_checksums = OFF is algorithm none (innobase_init).
    assert page_checksum_s("innodb", 16384, checksums=False) == 0.0
    with pytest.raises(ValueError):
        page_checksum_s("fletcher", 16384)


@given(st.sampled_from(ALL_ALGORITHMS), st.sampled_from((4096, 8192, 16384)))
def test_strict_forms_write_what_their_base_writes(algorithm, page):
    base = algorithm.removeprefix("strict_")
    assert written_as(algorithm) == base
    assert page_checksum_s(algorithm, page) == page_checksum_s(base, page)
    assert page_checksum_s(algorithm, page) == CHECKSUM_S_PER_16K[base] * page / 16384


def test_defaults_per_version():
    got = {v: scenario_from_dict(oltp(v), "t").server.innodb_checksum_algorithm
           for v in ("mysql-5.6", "mysql-5.7", "mysql-8.0", "mysql-8.0.30", "mysql-8.4", "mariadb-10.11")}
    assert got == {"mysql-5.6": "innodb", "mysql-5.7": "crc32", "mysql-8.0": "crc32", "mysql-8.0.30": "crc32",
                   "mysql-8.4": "crc32", "mariadb-10.11": "full_crc32"}
    s56, _ = settings_from(scenario_from_dict(oltp("mysql-5.6"), "t"))
    s57, _ = settings_from(scenario_from_dict(oltp("mysql-5.7"), "t"))
    assert s56.page_checksum_s == pytest.approx(30.8e-6) and s57.page_checksum_s == pytest.approx(1.9e-6)
    off, _ = settings_from(scenario_from_dict(oltp("mysql-5.7", innodb_checksums=False), "t"))
    assert off.page_checksum_s == 0.0


def test_values_and_variables_a_version_lacks_are_refused():
    with pytest.raises(InputError) as err:
        scenario_from_dict(oltp("mariadb-10.11", innodb_checksum_algorithm="innodb"), "t")
    assert err.value.field == "server.innodb_checksum_algorithm" and "full_crc32" in err.value.allowed
    with pytest.raises(InputError) as err:
        scenario_from_dict(oltp("mysql-8.0", innodb_checksum_algorithm="full_crc32"), "t")
    assert "strict_none" in err.value.allowed
    for version in ("mysql-8.0", "mysql-8.4", "mariadb-10.11"):
        with pytest.raises(InputError) as err:
            scenario_from_dict(oltp(version, innodb_checksums=False), "t")
        assert "unknown variable" in err.value.problem
    scenario_from_dict(oltp("mariadb-10.11", innodb_checksum_algorithm="strict_crc32"), "t")


def _run(algorithm, **over):
    srv, res = run_checked(small_doc(server__innodb_checksum_algorithm=algorithm, **over), every=0.1)
    assert_engine_invariants(srv, res)
    return summary(res)


def test_device_reads_pay_the_verification():
    """A read-only load with a pool smaller than the data: no page is ever written, so only
    buf_page_is_corrupted on each read separates the algorithms. Its CPU goes with the
    transaction's CPU phase (tests/test_os_page_cache.py checks the amount where cores bind)."""
    over = dict(server__innodb_buffer_pool_size="8M", workload__data_size="256M", hardware__device="fusionio-2012",
                workload__pages_modified_per_txn=0.0, workload__redo_bytes_per_txn=0, run__duration="2s")
    none, inno = _run("none", **over), _run("innodb", **over)
    assert none["pages_flushed_per_s_total"] == inno["pages_flushed_per_s_total"] == 0
    assert inno["commits"] < none["commits"]


def test_user_threads_pay_it_for_the_pages_they_sync_flush():
    """shared/seeds/002: when a query forces a checkpoint, the checksums are computed in the
    foreground thread. A 2 x 1 MB log keeps user threads in sync flushing; on the Fusion-io card the
    page writes are fast enough for the checksums to show: 13% more thread time over seeds 1-4
    (6-22% each) and 4.3% fewer commits (one seed alone is too noisy for either: seed 3 commits
    0.5% more with the checksums)."""
    ratios, commits = [], {"none": 0, "innodb": 0}
    for seed in (1, 2, 3, 4):
        over = dict(server__innodb_log_file_size="1M", run__duration="3s", hardware__device="fusionio-2012",
                    run__seed=seed)
        none, inno = _run("none", **over), _run("innodb", **over)
        assert none["sync_flush_thread_s"] > 0
        commits["none"] += none["commits"]
        commits["innodb"] += inno["commits"]
        ratios.append(inno["sync_flush_thread_s"] / none["sync_flush_thread_s"])
    assert commits["innodb"] < commits["none"]
    assert sum(ratios) / len(ratios) > 1.03


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(("innodb", "crc32", "none")), st.sampled_from(("4M", "1M")), st.integers(1, 50))
def test_invariants_hold_with_every_algorithm(algorithm, log_size, seed):
    _run(algorithm, server__innodb_log_file_size=log_size, run__seed=seed, run__duration="2s")
