"""MariaDB 10.5+ flushing hand-offs that differ from MySQL's (buf/buf0flu.cc, buf/buf0lru.cc)."""

import simpy

from models.buf_flush import LIST, LRU, FlushBatches
from models.page_cleaner_mariadb import PageCleanerMariaDB


def test_writes_in_flight_hold_a_batch_only_in_mysql():
    """MySQL's buf_flush_start counts pending writes (n_flush); MariaDB's flush_list_active only
    covers the issuing of a batch."""
    env = simpy.Environment()
    for hold, expected in ((True, False), (False, True)):
        b = FlushBatches(env, 1, writes_hold_batch=hold)
        for t in (LIST, LRU):
            assert b.start(0, t)
            assert not b.start(0, t)            # being issued: refused in both
            b.n_flush[0][t] += 3                # the batch's writes are in flight
            b.end(0, t)
            assert b.start(0, t) is expected


def _cleaner():
    env = simpy.Environment()
    return PageCleanerMariaDB(env, None, None, None, None, None, None, None)


def test_async_flush_ahead_wakes_only_an_idle_cleaner():
    """buf_flush_ahead(furious=false) does not cut the 1 s sleep of a working cleaner."""
    pc = _cleaner()
    pc.idle = False
    pc.flush_ahead(100, furious=False)
    assert pc.async_lsn == 100 and not pc.event.triggered
    pc.idle = True
    pc.flush_ahead(200, furious=False)
    assert pc.async_lsn == 200 and pc.event.triggered and not pc.idle


def test_furious_flush_ahead_always_wakes():
    pc = _cleaner()
    pc.idle = False
    pc.flush_ahead(100, furious=True)
    assert pc.sync_lsn == 100 and pc.event.triggered


def test_short_free_list_wakes_only_a_waiting_cleaner():
    """buf_LRU_get_free_block calls page_cleaner_wakeup(true) when fewer than
    innodb_lru_scan_depth / 2 blocks are free, unless the cleaner is active."""
    from types import SimpleNamespace

    pc = _cleaner()
    inst = SimpleNamespace(lru_len=10_000, free=700)
    pc.pool = SimpleNamespace(inst=[inst])
    pc.s = SimpleNamespace(lru_scan_depth=1536)
    pc.waiting = False
    pc.wake_for_free()
    assert not pc.event.triggered               # in a pass
    pc.waiting = True
    inst.free = 768
    pc.wake_for_free()
    assert not pc.event.triggered               # free blocks not short
    inst.free = 767
    pc.wake_for_free()
    assert pc.event.triggered


def test_clean_pool_short_of_free_blocks_is_evicted_not_spun_on():
    """buf_flush_page_cleaner: with no dirty page (fully_unemployed) but free blocks short, the
    cleaner goes on to the LRU eviction (`if (!buf_pool.need_LRU_eviction()) continue;`). A
    read-only load over a pool smaller than its data once looped forever at one instant here
    (O_DIRECT_NO_FSYNC: its checkpoint takes no simulated time)."""
    import signal

    from sim.config import scenario_from_dict
    from sim.engine import Server
    from sim.metrics import summary

    doc = {"server": {"version": "mariadb-10.11", "innodb_buffer_pool_size": "512M",
                      "innodb_flush_method": "O_DIRECT_NO_FSYNC"},
           "hardware": {"device": "seed-12core-disks-2012", "filesystem": "xfs", "cpu_cores": 1},
           "workload": {"kind": "oltp", "profile": "dbt2", "data_size": "2G", "users": 8,
                        "pages_modified_per_txn": 0.0},
           "run": {"duration": "2s", "seed": 151346}}

    def give_up(*_):
        raise TimeoutError("the simulation made no progress in 60 s of wall time")

    old = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(60)
    try:
        res = Server(scenario_from_dict(doc, "test")).run()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert summary(res)["commits"] > 0
