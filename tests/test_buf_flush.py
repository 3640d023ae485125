"""Neighbour flushing and LRU write completion: MySQL's rules against MariaDB 10.11's
(buf_flush_try_neighbors, buf_flush_check_neighbor, buf_flush_LRU_list_batch, buf_page_write_complete)."""

from types import SimpleNamespace

import numpy as np
import simpy

from models.buf_flush import LRU, FlushBatches, Flusher
from models.buffer_pool import ABSENT, OLD, YOUNG, BufferPool
from models.server import Counters

AREA = 64


def _pool(resident: int, frames: int = 1024, depth: int = 64) -> BufferPool:
    """One instance, one tablespace; pages 0..resident-1 loaded, the highest at the LRU tail."""
    pool = BufferPool(4096, 1, frames, 4096, lru_scan_depth=depth)
    pool.preload(np.arange(resident))
    return pool


def _dirty(pool: BufferPool, pages) -> None:
    pages = np.asarray(list(pages), dtype=np.int64)
    pool.modify_lsns(pages, np.arange(100, 100 + len(pages), dtype=np.int64),
                     np.full(len(pages), 1000, dtype=np.int64))


def test_preload_puts_the_highest_pages_in_the_old_sublist_and_at_the_tail():
    pool = _pool(1024)
    assert pool.where[1023] == OLD and pool.where[0] == YOUNG
    assert pool.old[0].at(pool.old[0].lo)[0] == 1023


def test_lru_neighbours_old_only_in_mysql_any_resident_in_mariadb():
    """5.6-8.4: an LRU flush takes only neighbours in the old sublist (buf_page_is_old);
    MariaDB 10.5+ buf_flush_check_neighbor asks only resident, dirty and not io-fixed."""
    pool = _pool(1024)
    lo = 640                                           # the 64-page area 640..703
    young = [p for p in range(lo, lo + AREA) if pool.where[p] == YOUNG]
    assert young and young[-1] < 660 and pool.where[660] == OLD
    _dirty(pool, range(lo, 670))
    mysql = pool.neighbours(665, 1, old_only=True)
    assert mysql == [p for p in range(young[-1] + 1, 670) if p != 665]
    pool.unfix(mysql)
    mariadb = pool.neighbours(665, 1, old_only=False)
    assert mariadb == [p for p in range(lo, 670) if p != 665]
    pool.unfix(mariadb)
    # Mode 2 (every dirty page of the area, not only the contiguous run) follows the same rule.
    _dirty(pool, [690])
    assert 690 in pool.neighbours(665, 2, old_only=False)


def test_lru_tail_scan_reports_the_free_list_when_each_dirty_page_was_chosen():
    pool = _pool(1024)
    _dirty(pool, [1023 - 5, 1023 - 9])                 # six and ten entries from the tail
    seen: list[int] = []
    _, dirty = pool.lru_tail_scan(0, max_scan=20, evict_clean=True, want_dirty=5, free_target=64,
                                  free_seen=seen)
    assert dirty == [1018, 1014]
    assert seen == [5, 8]                              # clean pages evicted before each


class _Dblwr:
    """Completes every write at once (the device is not what these tests look at)."""

    def __init__(self) -> None:
        self.flusher = None
        self.written: list[int] = []

    def add(self, page, t, kind):
        self.written.append(page)
        self.flusher.on_write_complete(page, t, kind)
        return
        yield

    def flush_buffered(self, i=0, t=None):
        return
        yield


def _flusher(pool: BufferPool, mariadb: bool, depth: int = 64) -> tuple[Flusher, _Dblwr, simpy.Environment]:
    env = simpy.Environment()
    dblwr = _Dblwr()
    settings = SimpleNamespace(flush_neighbors=1, page_checksum_s=0.0, lru_scan_depth=depth)
    log = SimpleNamespace(flushed_lsn=1 << 60, lsn=1 << 40, writer=None)
    f = Flusher(env, pool, dblwr, FlushBatches(env, 1, writes_hold_batch=not mariadb), Counters(), settings, log,
                mariadb=mariadb)
    dblwr.flusher = f
    return f, dblwr, env


def _lru_batch(f: Flusher, env: simpy.Environment, max_pages: int, max_scan: int) -> int:
    out = {}

    def run():
        out["n"] = yield from f.lru_batch(0, max_pages, max_scan=max_scan)

    env.process(run())
    env.run()
    return out["n"]


def test_mariadb_lru_flush_skips_neighbours_while_free_pages_are_short():
    """MariaDB 10.11 buf_flush_LRU_list_batch: neighbours only once the free list holds half of
    innodb_lru_scan_depth; MySQL flushes them whatever the free list holds."""
    for mariadb, expected in ((False, 64), (True, 1)):
        pool = _pool(1024)                             # no free frame
        _dirty(pool, range(960, 1024))                 # the tail's whole area
        f, dblwr, env = _flusher(pool, mariadb)
        assert _lru_batch(f, env, max_pages=100, max_scan=1) == expected
        assert dblwr.written[0] == 1023
    pool = _pool(992)                                  # 32 free frames: half the target of 64
    _dirty(pool, range(960, 992))
    f, dblwr, env = _flusher(pool, mariadb=True)
    assert _lru_batch(f, env, max_pages=100, max_scan=1) == 32


def test_lru_written_pages_are_freed_at_write_completion_only_in_mysql():
    """MySQL frees a page an LRU flush wrote when its write completes; MariaDB 10.11's
    buf_page_write_complete frees none, and the next LRU batch evicts it from the tail."""
    for mariadb in (False, True):
        pool = _pool(1024)
        _dirty(pool, range(1000, 1024))
        f, dblwr, env = _flusher(pool, mariadb)
        n = _lru_batch(f, env, max_pages=100, max_scan=1)
        assert n == (24 if not mariadb else 1)
        written = np.array(dblwr.written)
        assert (pool.oldest_lsn[written] == 0).all()
        if mariadb:
            assert (pool.where[written] != ABSENT).all() and pool.inst[0].free == 0
            evicted, _ = pool.lru_tail_scan(0, max_scan=1, evict_clean=True, want_dirty=0, free_target=64)
            assert evicted == 1 and pool.where[1023] == ABSENT
        else:
            assert (pool.where[written] == ABSENT).all() and pool.inst[0].free == 24
        pool.check_invariants()


def test_mariadb_lru_flush_evicts_once_more_when_its_write_quota_runs_out():
    """MariaDB 10.11 buf_flush_LRU: `if (pages >= max_n) buf_do_LRU_batch(0, &n)`, a second scan
    from the tail that evicts clean pages, passes over pages being written and stops at the first
    dirty page it could write. Here the written pages have completed (the test's writes complete
    at once), so it evicts them and the clean pages after them, up to the next dirty one. MySQL
    makes no second scan."""
    for mariadb in (False, True):
        pool = _pool(1024)                             # no free frame
        _dirty(pool, range(1020, 1024))                # 4 dirty pages at the tail,
        _dirty(pool, [1010])                           # then 9 clean ones, then a dirty one
        f, dblwr, env = _flusher(pool, mariadb)
        assert _lru_batch(f, env, max_pages=4, max_scan=None) == 4
        if mariadb:
            assert pool.inst[0].free == 4 + 9          # the 4 written, now clean, and 1011..1019
            assert pool.where[1010] != ABSENT and pool.io_fix[1010] == 0
        else:
            assert pool.inst[0].free == 4              # the written pages, freed on completion
        pool.check_invariants()


def test_wait_batch_end_returns_once_the_batch_it_waited_for_ends():
    """os_event_wait on no_flush returns once the event was set after the wait began, even if
    another batch started on the instance in the same instant (signal_count, os0sync.cc)."""
    from models.buf_flush import LIST

    env = simpy.Environment()
    b = FlushBatches(env, 1)
    assert b.start(0, LIST)
    b.n_flush[0][LIST] = 1
    b.end(0, LIST)                       # issued, one write in flight
    done = []

    def waiter():
        yield from b.wait_end(0, LIST)
        done.append(env.now)

    def writer():
        yield env.timeout(1.0)
        b.write_done(0, LIST)            # the batch ends ...
        assert b.start(0, LIST)          # ... and another starts before the waiter runs

    env.process(waiter())
    env.process(writer())
    env.run(until=5.0)
    assert done == [1.0]
    assert b.busy(0, LIST)
