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
    pc.pool = SimpleNamespace(inst=[inst], try_lru_scan=True)
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


class _Stubs:
    """Just enough of a buffer pool, flusher, log and checkpointer to step the cleaner's loop:
    each batch takes 1 ms and is recorded as (time, kind, pages)."""

    def __init__(self, env, free: int, oldest: int, lsn: int, dirty: int = 50_000):
        from types import SimpleNamespace

        self.env, self.calls = env, []
        self.i0 = SimpleNamespace(lru_len=100_000, free=free)
        self.inst = [self.i0]
        self.oldest, self.dirty = oldest, dirty
        self.try_lru_scan = True
        self.log = SimpleNamespace(lsn=lsn)
        self.dblwr = SimpleNamespace(wait_idle=self._nothing, flush_buffered=self._nothing)
        self.limits = SimpleNamespace(log_group_capacity=1 << 30, max_modified_age_async=900 << 20)

    # pool
    def oldest_modification_all(self):
        return self.oldest

    def dirty_pages(self):
        return self.dirty

    def lru_pages(self):
        return self.i0.lru_len

    def free_pages(self):
        return self.i0.free

    def count_below(self, i, lsn, cap):
        return cap

    # flusher, log_sys
    def _nothing(self, *a):
        return (yield self.env.timeout(0))

    def lru_batch(self, i, max_pages):
        yield self.env.timeout(0.001)
        self.calls.append((self.env.now, "lru", 10))
        self.i0.free = 1536
        return 10

    def flush_list_slot(self, i, quota, lsn_limit, kind):
        yield self.env.timeout(0.001)
        self.calls.append((self.env.now, kind, quota))
        return True, quota

    def checkpoint(self, sync):
        return (yield self.env.timeout(0))


def _stepped_cleaner(free: int, oldest: int, lsn: int, wake_race: float = 0.0, **settings):
    import numpy as np

    from models.server import Counters, ServerSettings

    env = simpy.Environment()
    st = _Stubs(env, free, oldest, lsn)
    s = ServerSettings(version="mariadb-10.11", lru_scan_depth=1536, io_capacity=400, io_capacity_max=800,
                       max_dirty_pages_pct=90, **settings)
    pc = PageCleanerMariaDB(env, st, st, st.log, st, Counters(), s, st.limits, wake_race=wake_race,
                            rng=np.random.default_rng(1))            # st is pool, flusher and logsys
    env.process(pc.run())
    return env, st, pc


def test_lru_wakeups_reset_the_one_second_deadline():
    """set_timespec(abstime, 1) after every wait: a cleaner woken for free blocks every 0.3 s never
    times out, so it makes LRU passes only (wake_race 0); with wake_race 1 every wake-up finds
    need_LRU_eviction() false and makes an adaptive pass, followed by its LRU flush."""
    for race, kinds in ((0.0, {"lru"}), (1.0, {"adaptive", "lru"})):
        env, st, pc = _stepped_cleaner(free=1536, oldest=1 << 20, lsn=400 << 20, wake_race=race)

        def consumer():
            while True:
                yield env.timeout(0.3)
                st.i0.free = 700
                pc.wake_for_free()

        env.process(consumer())
        env.run(until=5.0)
        seen = {k for _, k, _ in st.calls}
        assert seen == kinds, (race, seen)
        assert sum(k == "lru" for _, k, _ in st.calls) >= 15
        if race:
            assert sum(k == "adaptive" for _, k, _ in st.calls) >= 15
            assert pc.counters["buffer_flush_adaptive"] >= 15


def test_an_idle_free_list_still_times_out_once_a_second():
    """Without wake-ups the cleaner looks once a second and, the log being old enough
    (af_needed_for_redo), makes an adaptive pass."""
    env, st, pc = _stepped_cleaner(free=1536, oldest=1 << 20, lsn=400 << 20)
    env.run(until=3.5)
    times = [t for t, k, _ in st.calls if k == "adaptive"]
    assert len(times) == 3 and abs(times[0] - 1.001) < 1e-9


def test_a_met_flush_ahead_target_sends_the_pass_to_the_adaptive_branch():
    """soft_lsn_limit set but already passed by the oldest page: buf_flush_page_cleaner drops it
    and skips the LRU-only branch even though free blocks run short."""
    env, st, pc = _stepped_cleaner(free=700, oldest=250 << 20, lsn=400 << 20)
    pc.async_lsn = 200 << 20
    env.run(until=0.0025)
    assert [k for _, k, _ in st.calls][:2] == ["adaptive", "lru"]
    assert pc.async_lsn == 0


def test_an_unmet_flush_ahead_target_is_a_background_pass_and_lru_passes_count_toward_the_page_rate():
    env, st, pc = _stepped_cleaner(free=700, oldest=100 << 20, lsn=400 << 20)
    pc.async_lsn = 200 << 20
    env.run(until=0.0025)
    assert st.calls[0][1:] == ("background", 800)       # innodb_io_capacity_max below the target
    assert pc.async_lsn == 200 << 20                    # not met: kept
    assert pc.counters["buffer_flush_background"] == 1
    st.oldest = 250 << 20
    pc.async_lsn = 0
    st.i0.free = 700
    pc.wake_for_free()                                  # waiting again: woken for free blocks
    env.run(until=0.01)
    lru_only = [c for c in st.calls[2:] if c[1] == "lru"]
    assert lru_only and pc.last_pages == 10 * (1 + len(lru_only))   # last_pages += buf_flush_LRU's pages
