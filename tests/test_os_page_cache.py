"""The OS page cache under buffered InnoDB data files (models/os_page_cache.py) and its use by the
engine: which reads it serves, what they cost, and that O_DIRECT bypasses it."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from models.os_page_cache import OsPageCache
from sim.metrics import summary
from tests.test_engine import assert_engine_invariants, run_checked, small_doc


def test_clock_gives_a_referenced_page_a_second_chance():
    c = OsPageCache(capacity_pages=3, n_pages=10)
    assert [c.read(p) for p in (0, 1, 2)] == [False] * 3
    assert c.read(0)                                 # hit: 0 is referenced
    assert not c.read(3)                             # evicts 1: the hand passes 0 and clears its bit
    assert not c.cached[1] and c.cached[0] and c.cached[2] and c.cached[3]
    assert not c.read(4)                             # evicts 2 (unreferenced); 0 survives until its bit is gone
    assert not c.read(5)                             # now 0 goes
    assert sorted(c.ring) == [3, 4, 5] and (c.hits, c.misses) == (1, 6)


def test_writes_cache_pages_and_preload_stops_when_full():
    c = OsPageCache(capacity_pages=4, n_pages=100)
    c.write(7)
    assert c.read(7) and c.hits == 1 and c.misses == 0
    c.preload(range(50))
    assert len(c) == 4 and sorted(c.ring) == [0, 1, 2, 7]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.lists(st.tuples(st.booleans(), st.integers(0, 29)), max_size=300))
def test_cache_state_stays_consistent(capacity, ops):
    """Never over capacity; the ring and the cached flags agree; a read hits iff the page was
    cached; with room for every page nothing is evicted."""
    c = OsPageCache(capacity_pages=capacity, n_pages=30)
    seen = set()
    for is_write, page in ops:
        was = bool(c.cached[page])
        if is_write:
            c.write(page)
        else:
            assert c.read(page) == was
        assert c.cached[page]
        seen.add(page)
        assert len(c) <= capacity and len(set(c.ring)) == len(c.ring)
        assert sum(c.cached) == len(c.ring) and all(c.cached[p] for p in c.ring)
    if capacity >= 30:
        assert set(c.ring) == seen


def _read_only(**over):
    doc = dict(server__innodb_buffer_pool_size="8M", workload__data_size="128M", hardware__device="fusionio-2012",
               workload__pages_modified_per_txn=0.0, workload__redo_bytes_per_txn=0, run__duration="2s",
               workload__hot_data_pct=100.0, workload__hot_access_pct=100.0,     # uniform: most reads miss the pool
               server__innodb_flush_method="fsync", hardware__page_cache="256M", workload__warm_start=True)
    doc.update(over)
    srv, res = run_checked(small_doc(**doc), every=0.1)
    assert_engine_invariants(srv, res)
    return srv, res


def test_a_warm_page_cache_serves_every_read_and_o_direct_bypasses_it():
    srv, res = _read_only(server__innodb_checksum_algorithm="none")
    reads = srv.counters["Innodb_buffer_pool_reads"]
    assert reads > 10_000 and srv.counters["os_page_cache_read_hits"] == reads == srv.fil.os_cache.hits
    assert srv.fil.os_cache.misses == 0
    direct, res_d = _read_only(server__innodb_checksum_algorithm="none", server__innodb_flush_method="O_DIRECT")
    assert direct.fil.os_cache is None and direct.counters["os_page_cache_read_hits"] == 0
    assert summary(res)["commits"] > 1.5 * summary(res_d)["commits"]   # no device time per read
    cold, _ = _read_only(server__innodb_checksum_algorithm="none", workload__warm_start=False)
    assert 0 < cold.fil.os_cache.misses <= cold.n_pages                # each page comes from the device once
    small, _ = _read_only(server__innodb_checksum_algorithm="none", hardware__page_cache="16M")
    assert len(small.fil.os_cache) == 1024 and small.fil.os_cache.misses > 0


def test_reads_pay_copy_and_verification_on_a_core():
    """Reads served by the page cache leave the load CPU-bound (8 threads, 4 cores), so throughput
    falls by the CPU each transaction's reads add: the copy (FsCosts) and, with `innodb`, the
    checksum (buf_page_is_corrupted)."""
    none, r_none = _read_only(server__innodb_checksum_algorithm="none")
    inno, r_inno = _read_only(server__innodb_checksum_algorithm="innodb")
    cpu = none.profile.cpu_s_per_txn
    copy_s, verify_s = none.fil.copy_s, inno.settings.page_checksum_s
    per_txn = none.counters["Innodb_buffer_pool_reads"] / summary(r_none)["commits"]
    expected = (cpu + per_txn * (copy_s + verify_s)) / (cpu + per_txn * copy_s)
    measured = summary(r_none)["commits"] / summary(r_inno)["commits"]
    assert expected > 1.2
    assert abs(measured / expected - 1.0) < 0.03
