"""5.6 redo thresholds and adaptive-flushing arithmetic against the spec's worked numbers
(shared/research/innodb-flushing.md sections 2.5 and 10bis)."""

import math
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models import adaptive_flushing as af
from models.errors import InputError
from models.server import ServerSettings
from models.redo import (log_calc_max_ages_56, log_checkpoint_margin_56, log_close_needs_check_56,
                         oldest_or_lsn)

MIB = 1 << 20
GIB = 1 << 30
PAGE = 16384


def test_worked_numbers_2x48m():
    lim = log_calc_max_ages_56(48 * MIB, 2, PAGE)
    total = 96 * MIB
    assert lim.max_modified_age_async / MIB == pytest.approx(67.4, abs=0.05)
    assert lim.max_modified_age_sync / MIB == pytest.approx(72.3, abs=0.05)
    assert lim.max_checkpoint_age_async / MIB == pytest.approx(74.7, abs=0.05)
    assert lim.max_checkpoint_age / MIB == pytest.approx(77.1, abs=0.05)
    assert 100 * lim.max_modified_age_async / total == pytest.approx(70.3, abs=0.05)
    assert 100 * lim.max_modified_age_sync / total == pytest.approx(75.3, abs=0.05)
    assert 100 * lim.max_checkpoint_age_async / total == pytest.approx(77.8, abs=0.05)
    assert 100 * lim.max_checkpoint_age / total == pytest.approx(80.3, abs=0.05)


def test_worked_numbers_2x1g():
    lim = log_calc_max_ages_56(GIB, 2, PAGE)
    total = 2 * GIB
    for value, pct in ((lim.max_modified_age_async, 70.8), (lim.max_modified_age_sync, 75.9),
                       (lim.max_checkpoint_age_async, 78.4), (lim.max_checkpoint_age, 81.0)):
        assert 100 * value / total == pytest.approx(pct, abs=0.05)


def test_exact_integer_values_2x48m():
    # C = (48 MiB - 2 KiB) x 2; capacity - C/10; free = 768 KiB; margin - margin/10; ratios 8/16/32.
    lim = log_calc_max_ages_56(48 * MIB, 2, PAGE)
    assert lim.capacity_bytes == 100_659_200
    assert lim.log_group_capacity == 90_593_280
    assert lim.max_checkpoint_age == 80_826_164
    assert lim.max_modified_age_async == 70_722_894
    assert lim.max_modified_age_sync == 75_774_529
    assert lim.max_checkpoint_age_async == 78_300_347


def test_log_too_small_for_threads_is_refused():
    with pytest.raises(InputError, match="too small for innodb_thread_concurrency 1000") as err:
        log_calc_max_ages_56(48 * MIB, 2, PAGE, thread_concurrency=1000)
    assert err.value.field == "innodb_log_file_size"
    log_calc_max_ages_56(48 * MIB, 2, PAGE, thread_concurrency=100)   # still fits


@given(size_mib=st.integers(2, 8192), files=st.integers(2, 16), page=st.sampled_from([4096, 8192, 16384]))
def test_thresholds_are_ordered_and_below_capacity(size_mib, files, page):
    try:
        lim = log_calc_max_ages_56(size_mib * MIB, files, page)
    except InputError:
        return
    assert (0 < lim.max_modified_age_async < lim.max_modified_age_sync < lim.max_checkpoint_age_async
            < lim.max_checkpoint_age < lim.log_group_capacity < lim.capacity_bytes)


def test_log_close_flag():
    lim = log_calc_max_ages_56(48 * MIB, 2, PAGE)
    lsn = 10 * GIB
    below_sync = lsn - lim.max_modified_age_sync
    assert not log_close_needs_check_56(lsn, below_sync, below_sync, lim)
    assert log_close_needs_check_56(lsn, below_sync, below_sync, lim, log_buffer_half_full=True)
    ckpt = lsn - lim.max_modified_age_sync - 1
    assert log_close_needs_check_56(lsn, ckpt, ckpt, lim)                      # modified age too
    assert not log_close_needs_check_56(lsn, ckpt, lsn - 1000, lim)            # pages flushed, ckpt lags
    ckpt_far = lsn - lim.max_checkpoint_age_async - 1
    assert log_close_needs_check_56(lsn, ckpt_far, lsn - 1000, lim)            # checkpoint overdue
    assert log_close_needs_check_56(lsn, ckpt, None, lim)                      # nothing dirty


def test_checkpoint_margin_preflushes_twice_the_overshoot():
    lim = log_calc_max_ages_56(GIB, 2, PAGE)
    lsn = 50 * GIB
    oldest = lsn - lim.max_modified_age_sync - 8 * MIB
    act = log_checkpoint_margin_56(lsn, oldest, oldest, lim)
    assert act.preflush_to_lsn == oldest + 16 * MIB       # 10bis: overshoot 8 MiB -> oldest + 16 MiB
    assert act.checkpoint is None
    ckpt = lsn - lim.max_checkpoint_age - 1
    assert log_checkpoint_margin_56(lsn, ckpt, lsn, lim).checkpoint == "sync"
    ckpt = lsn - lim.max_checkpoint_age_async - 1
    assert log_checkpoint_margin_56(lsn, ckpt, lsn, lim) == log_checkpoint_margin_56(lsn, ckpt, None, lim)
    assert log_checkpoint_margin_56(lsn, ckpt, None, lim).checkpoint == "async"
    assert oldest_or_lsn(None, 5) == 5


@pytest.mark.parametrize("f,ratio,expected", [
    (13, 10, 62), (13, 5, 31), (13, 1, 6),
    (50, 10, 471), (50, 5, 235), (50, 1, 47),
    (80, 10, 954), (80, 5, 477), (80, 1, 95),
    (100, 10, 1333), (100, 5, 666), (100, 1, 133),
    (107, 10, 1475), (107, 5, 737), (107, 1, 147),
])
def test_pct_for_lsn_worked_table(f, ratio, expected):
    ref = 1_000_000
    io_cap = 200 if ratio in (10, 5) else 1000
    io_max = io_cap * ratio
    assert af.pct_for_lsn(f * ref // 100, 10 * ref, ref, io_cap, io_max, adaptive_flushing_lwm_pct=0) == expected


def test_pct_for_lsn_lwm_and_off_switch():
    cap, ref = 10_000_000, 7_000_000
    assert af.pct_for_lsn(999_999, cap, ref, 200, 2000) == 0                 # below 10% of capacity
    assert af.pct_for_lsn(1_000_000, cap, ref, 200, 2000) > 0
    assert af.pct_for_lsn(5_000_000, cap, ref, 200, 2000, adaptive_flushing=False) == 0
    assert af.pct_for_lsn(ref, cap, ref, 200, 2000, adaptive_flushing=False) == 1333
    # io_capacity_max / io_capacity is an integer division: 1500/1000 -> 1.
    assert af.pct_for_lsn(ref, cap, ref, 1000, 1500) == 133


def test_pct_for_dirty_56():
    assert af.pct_for_dirty_56(10, 0, 0) == 100
    assert af.pct_for_dirty_56(75, 75, 0) == 0
    assert af.pct_for_dirty_56(76, 75, 0) == 100
    assert af.pct_for_dirty_56(50, 75, 10) == 50 * 100 // 76
    assert af.pct_for_dirty_56(10, 75, 10) == 0
    assert af.modified_ratio_pct_56(500, 900, 99) == 50


def test_request_example_10bis():
    """io_capacity 200, max 1000 (ratio 5), age at the async reference, avg_page_rate 600:
    PCT_IO(666) = 1332 -> n = (1332 + 600) / 2 = 966 (spec rounds PCT_IO to 1333), 121 per instance of 8."""
    s = ServerSettings(io_capacity=200, io_capacity_max=1000)
    ref, cap = 70_000_000, 90_000_000
    state = af.AdaptiveState56(prev_lsn=1, avg_page_rate=600, lsn_avg_rate=1_000_000)
    cur = 500_000_000
    state, req = af.adaptive_request_56(state, cur, cur - ref, 0, cap, ref, s)
    assert req.pct_for_lsn == 666 and req.pct_for_dirty == 0
    assert req.n_pages == 966
    assert af.per_instance_quota(req.n_pages, 8) == 121
    assert req.lsn_limit == cur - ref + 1_000_000            # no age factor on the first pass
    state = af.after_batch_56(state, cur, 200)
    # Next pass, more than lsn_avg_rate/2 of redo later: age factor = 966 // 201 = 4.
    cur2 = cur + 600_000
    state, req2 = af.adaptive_request_56(state, cur2, cur - ref, 0, cap, ref, s)
    assert req2.lsn_limit == cur - ref + 1_000_000 * 5


def test_request_first_call_and_idle_and_cap():
    s = ServerSettings(io_capacity=200, io_capacity_max=2000)
    st0 = af.AdaptiveState56()
    st1, req = af.adaptive_request_56(st0, 1000, 0, 0, 10_000, 7_000, s)
    assert req is None and st1.prev_lsn == 1000
    st2, req = af.adaptive_request_56(st1, 1000, 0, 0, 10_000, 7_000, s)
    assert req is None and st2 == st1
    _, req = af.adaptive_request_56(st1, 50_000, 1000, 0, 10_000, 7_000, s)   # far past the reference
    assert req.n_pages == 2000


def test_averages_update_every_avg_loops():
    s = ServerSettings(flushing_avg_loops=3)
    st = af.AdaptiveState56(prev_lsn=1000)
    lsn = 1000
    for i in range(3):
        lsn += 3000
        st, req = af.adaptive_request_56(st, lsn, lsn - 10, 0, 10**9, 10**8, s)
        st = af.after_batch_56(st, lsn, 30)
    # After 3 loops: lsn_rate = 9000/3 = 3000 -> avg (0+3000)//2; page rate (60//3 + 0)//2 = 10
    # (sum_pages was reset at the third call, before its own batch added 30).
    assert st.lsn_avg_rate == 1500
    assert st.avg_page_rate == 10
    assert st.n_iterations == 0 and st.sum_pages == 30
    assert math.isclose(st.prev_lsn, lsn)


def test_margin_loop_runs_again_when_another_thread_set_the_flag_meanwhile():
    """log_check_margins (5.6/5.7) is a do-while on check_flush_or_checkpoint: a thread whose
    preflush succeeded flushes again when another thread's log_close set the flag meanwhile."""
    import simpy
    from models.log_sys import LogState, LogSys56

    lim = log_calc_max_ages_56(GIB, 2, PAGE)
    env = simpy.Environment()
    lsn = 50 * GIB
    st = LogState(lsn=lsn, flushed_lsn=lsn, written_lsn=lsn, last_checkpoint_lsn=lsn - lim.max_modified_age_sync - MIB,
                  check_flush_or_checkpoint=True)
    oldest = [lsn - lim.max_modified_age_sync - MIB]
    pool = SimpleNamespace(oldest_modification_all=lambda: oldest[0])
    calls = []

    class Probe(LogSys56):
        def preflush(self, target_lsn):
            calls.append(target_lsn)
            yield env.timeout(0.01)
            oldest[0] = target_lsn
            if len(calls) == 1:      # meanwhile another thread's mtr commit finds the age past sync
                st.lsn += 4 * MIB
                st.check_flush_or_checkpoint = True
            return True

    ls = Probe(env, st, pool, None, None, None, lim, SimpleNamespace(log_buffer_size_bytes=16 * MIB))
    env.process(ls.log_check_margins(lambda kind: None))
    env.run()
    assert len(calls) == 2
    assert not st.check_flush_or_checkpoint
    assert ls.in_margin == 0


def test_log_free_check_sees_the_flag_other_threads_mtrs_would_set():
    """log_close_check: the age test of log_close, run at a log_free_check (5.6: past the sync age
    the flag is set again at once; MariaDB: only at furious flushing, without a flush-ahead request)."""
    import simpy
    from models.log_sys import LogState, LogSys56
    from models.log_sys_mariadb import LogSysMariaDB

    lim = log_calc_max_ages_56(GIB, 2, PAGE)
    lsn = 50 * GIB
    oldest = lsn - lim.max_modified_age_sync - MIB
    st = LogState(lsn=lsn, flushed_lsn=lsn, written_lsn=lsn, last_checkpoint_lsn=oldest)
    pool = SimpleNamespace(oldest_modification_all=lambda: oldest)
    settings = SimpleNamespace(log_buffer_size_bytes=16 * MIB)
    LogSys56(simpy.Environment(), st, pool, None, None, None, lim, settings).log_close_check()
    assert st.check_flush_or_checkpoint
    st2 = LogState(lsn=lsn, flushed_lsn=lsn, written_lsn=lsn, last_checkpoint_lsn=lsn - MIB)
    LogSys56(simpy.Environment(), st2, pool, None, None, None, lim, settings).log_close_check()
    assert not st2.check_flush_or_checkpoint         # checkpoint age under the sync age: no check
    mdb = LogSysMariaDB(simpy.Environment(), st2, pool, None, None, None,
                        SimpleNamespace(max_checkpoint_age=2 * MIB), settings)
    mdb.log_close_check()                            # cleaner is None: a flush-ahead call would fail
    assert not st2.check_flush_or_checkpoint
    st2.lsn += 2 * MIB
    mdb.log_close_check()
    assert st2.check_flush_or_checkpoint


class _EmptyPool:
    """A buffer pool with every flush list empty (buf_pool_get_oldest_modification returns 0)."""
    n_instances = 2

    def oldest_modification_all(self):
        return 0

    def modified_ratio_pct(self):
        return 0

    def dirty_pages(self):
        return 0

    def lru_pages(self):
        return 1000

    def free_pages(self):
        return 1000

    def count_below(self, i, target, cap):
        return 0


def test_no_dirty_page_is_an_age_of_the_whole_lsn_56():
    """5.6 page_cleaner_flush_pages_if_needed: with every flush list empty, oldest_lsn is 0 and the
    age is cur_lsn, so pct_for_lsn is at its top and the request (capped at io_capacity_max) becomes
    prev_pages: the next pass's age factor is io_capacity_max / 1."""
    from models.page_cleaner import PageCleaner56

    s = ServerSettings(io_capacity=200, io_capacity_max=2000)
    limits = SimpleNamespace(log_group_capacity=90_000_000, max_modified_age_async=70_000_000)
    asked = []

    class Flusher:
        def buf_flush_list(self, n, lsn_limit, kind):
            asked.append((n, lsn_limit))
            return True, 0
            yield

    cleaner = PageCleaner56(None, Flusher(), _EmptyPool(), SimpleNamespace(lsn=500_000_000),
                            SimpleNamespace(add=lambda *a: None), s, limits)
    cleaner.state = af.AdaptiveState56(prev_lsn=1, lsn_avg_rate=1_000_000)
    gen = cleaner.flush_pages_if_needed()
    with pytest.raises(StopIteration):
        next(gen)
    assert cleaner.gauges["buffer_flush_pct_for_lsn"] == af.pct_for_lsn(500_000_000, 90_000_000, 70_000_000, 200, 2000)
    assert asked == [(2000, 1_000_000)]            # n capped; lsn_limit = 0 + lsn_avg_rate x 1
    assert cleaner.state.prev_pages == 2000 and cleaner.state.last_pages == 1


def test_no_dirty_page_is_an_age_of_the_whole_lsn_57():
    """5.7 buf_pool_get_oldest_modification / 8.0 _approx return 0 for empty flush lists: the
    recommendation sees age = cur_lsn, as page_cleaner_flush_pages_recommendation does."""
    from models.page_cleaner_coordinator import PageCleanerCoordinator

    class Env:
        now = 5.0

        def event(self):
            return SimpleNamespace(triggered=False)

    s = ServerSettings(io_capacity=200, io_capacity_max=2000)
    limits = SimpleNamespace(log_group_capacity=90_000_000, max_modified_age_async=70_000_000)
    for mode_80 in (False, True):
        c = PageCleanerCoordinator(Env(), None, _EmptyPool(), SimpleNamespace(lsn=500_000_000), None, s, limits,
                                   mode_80)
        c.state = af.AdaptiveState57(prev_lsn=1, prev_time_s=4.0, lsn_avg_rate=1_000_000)
        req = c.recommend(sync=False)
        assert c.gauges["buffer_flush_pct_for_lsn"] == af.pct_for_lsn(500_000_000, 90_000_000, 70_000_000, 200, 2000)
        assert req.n_pages > 0
