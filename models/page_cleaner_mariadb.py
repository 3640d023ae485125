"""The MariaDB 10.5+ page cleaner: buf_flush_page_cleaner, one thread over the one buffer pool.

Mirrors MariaDB 10.11/11.x buf/buf0flu.cc (buf_flush_page_cleaner, buf_flush_sync_for_checkpoint,
page_cleaner_flush_pages_recommendation, af_needed_for_redo, buf_flush_ahead; spec
shared/research/innodb-flushing.md 4.4), iteration by iteration:
1. furious flushing while buf_flush_sync_lsn is set (innodb_flush_sync): up to
   innodb_io_capacity_max pages below it, wait for those writes, fsync, checkpoint; no sleep;
2. no dirty page: checkpoint, idle;
3. a pending flush-ahead target (buf_flush_async_lsn): up to innodb_io_capacity_max pages below it;
4. else, free pages short (need_LRU_eviction): wait for the writes in flight, one LRU flush of up
   to innodb_io_capacity_max pages, push the doublewrite slot, checkpoint, and start the next
   pass at once while free pages stay short;
5. else work only when dirty % reaches innodb_max_dirty_pages_pct (or its lwm when set) or the
   modified age passes innodb_adaptive_flushing_lwm % of log_capacity; then the adaptive request;
6. an LRU flush until the free list holds innodb_lru_scan_depth pages;
7. the doublewrite slot is pushed and a checkpoint written (about once a second when busy).
Batches are refused only while another is being issued (buf_pool.flush_list_active), not while
the last one's writes are in flight (models.buf_flush.FlushBatches, writes_hold_batch=False).
An idle cleaner with innodb_max_dirty_pages_pct_lwm = 0 waits without timeout in the server;
here it looks once a second whether one of the wake-up conditions holds.

The cadence of the adaptive pass is an open difference. Read as written, 10.11.18 resets its
1-second deadline (set_timespec(abstime, 1)) after every wait, so a cleaner that user threads wake
for free blocks more often than once a second never times out and finds need_LRU_eviction() true
at every wake: it would make no adaptive pass at all. Measured, it does: with the kit's 256M pool
under sysbench, LRU passes came every 0.3 s and adaptive passes 0.1-0.23 times a second
(validation/live/cleaner_probe.py, 100 ms samples; README, "Validation status"). At 20 ms every
adaptive pass began as the free list reached the wake-up point (median 783 free pages before it,
against innodb_lru_scan_depth / 2 = 768): LRU wake-ups where need_LRU_eviction() read false at the
check, about one in 25, a race rather than a timeout. Without what returns a block between the
wake-up and the check, the cadence stays as it was: the deadline moves only when reached, so the
adaptive branch is tried about once a second (more often than measured).
"""

from __future__ import annotations

from models.adaptive_flushing import (AdaptiveState57, af_needed_for_redo_mariadb, averages_57, modified_ratio_pct_57,
                                      pct_for_lsn, recommendation_mariadb)
from models.buffer_pool import BUF_LRU_MIN_LEN
from models.page_cleaner import LSN_MAX, cleaner_gauges


class PageCleanerMariaDB:
    def __init__(self, env, flusher, pool, log, logsys, counters, settings, limits) -> None:
        self.env = env
        self.flusher = flusher
        self.pool = pool
        self.log = log
        self.logsys = logsys
        self.counters = counters
        self.s = settings
        self.limits = limits
        self.state = AdaptiveState57()
        self.last_pages = 0
        self.sync_lsn = 0                  # buf_flush_sync_lsn
        self.async_lsn = 0                 # buf_flush_async_lsn
        self.idle = True
        self.waiting = False               # in its timed wait (not page_cleaner_active)
        self.event = env.event()
        self.done_event = env.event()      # buf_pool.done_flush_list
        self.gauges = cleaner_gauges()

    def wake(self) -> None:
        if not self.event.triggered:
            self.event.succeed()

    def flush_ahead(self, lsn: int, furious: bool) -> None:
        """buf_flush_ahead: raise the sync (furious) target and wake the cleaner, or raise the
        async target and wake the cleaner only if it is idle."""
        if furious:
            if lsn > self.sync_lsn:
                self.sync_lsn = lsn
                self.idle = False
                self.wake()
        elif lsn > self.async_lsn:
            self.async_lsn = lsn
            if self.idle:       # non-furious: wakes an idle cleaner, never cuts its 1 s sleep short
                self.idle = False
                self.wake()

    def wake_for_free(self) -> None:
        """After a user thread took a free block (buf_LRU_get_free_block): page_cleaner_wakeup(true)
        when free blocks run short (need_LRU_eviction); a cleaner in the middle of a pass is left
        alone."""
        if self.waiting and self._need_lru():
            self.idle = False
            self.wake()

    def _oldest(self) -> int:
        return self.pool.oldest_modification_all() or self.log.lsn

    def _need_lru(self) -> bool:
        """buf_pool_t::need_LRU_eviction: fewer than innodb_lru_scan_depth / 2 free blocks."""
        c = self.pool.inst[0]
        return c.lru_len > BUF_LRU_MIN_LEN and c.free < self.s.lru_scan_depth // 2

    def _signal_done(self) -> None:
        ev, self.done_event = self.done_event, self.env.event()
        ev.succeed()

    def run(self):
        env, s, pool = self.env, self.s, self.pool
        next_loop_s = env.now + 1.0
        while True:
            if not (self.sync_lsn and s.flush_sync) and not self._need_lru():
                if next_loop_s > env.now:
                    ev = self.event
                    self.waiting = True
                    yield env.any_of([env.timeout(next_loop_s - env.now), ev])
                    self.waiting = False
                    if ev.triggered:
                        self.event = env.event()
                if env.now >= next_loop_s:
                    next_loop_s = env.now + 1.0
            lsn = self.log.lsn
            if self.sync_lsn and s.flush_sync:
                yield from self.furious()
                continue
            if not pool.dirty_pages():
                yield from self.logsys.checkpoint(sync=False)
                self.idle = True
                self.async_lsn = 0
                self._signal_done()
                if not self._need_lru():
                    continue
                # fully_unemployed, but free blocks run short: on to the LRU eviction below (a
                # clean pool is evicted by the LRU batch; without it this loop would spin).
            oldest = self._oldest()
            n = 0
            if self.async_lsn > oldest:
                _, n = yield from self.flusher.flush_list_slot(0, s.io_capacity_max, self.async_lsn, "background")
                if self._oldest() >= self.async_lsn:
                    self.async_lsn = 0
            elif self._need_lru():
                # Free pages first: wait for the writes in flight, one LRU flush, then the
                # doublewrite slot and a checkpoint; the next pass starts at once while free pages
                # stay short (buf_flush_page_cleaner's need_LRU_eviction branch).
                yield from self.flusher.dblwr.wait_idle()       # os_aio_wait_until_no_pending_writes
                t0 = env.now
                n = yield from self.flusher.lru_batch(0, s.io_capacity_max)
                yield from self.flusher.dblwr.flush_buffered()
                yield from self.logsys.checkpoint(sync=False)
                self._signal_done()
                if n == 0 and env.now == t0 and self._need_lru():
                    yield env.timeout(0.001)    # nothing to free yet: the server spins, we poll
                continue
            else:
                dirty_pct = modified_ratio_pct_57(pool.dirty_pages(), pool.lru_pages(), pool.free_pages())
                age = lsn - oldest
                if s.max_dirty_pages_pct_lwm:
                    work = dirty_pct >= s.max_dirty_pages_pct_lwm
                else:
                    work = dirty_pct >= s.max_dirty_pages_pct
                work = work or af_needed_for_redo_mariadb(age, self.limits.log_group_capacity,
                                                          s.adaptive_flushing_lwm_pct)
                if not work:
                    self.idle = True
                elif not s.adaptive_flushing:
                    _, n = yield from self.flusher.flush_list_slot(0, s.io_capacity, LSN_MAX, "background")
                else:
                    self.idle = False
                    first = self.state.prev_lsn == 0
                    self.state, _ = averages_57(self.state, lsn, env.now, self.last_pages, s.flushing_avg_loops)
                    p_lsn = pct_for_lsn(age, self.limits.log_group_capacity, self.limits.max_modified_age_async,
                                        s.io_capacity, s.io_capacity_max, s.adaptive_flushing_lwm_pct, True)
                    below = pool.count_below(0, oldest + 3 * self.state.lsn_avg_rate, s.io_capacity_max)
                    req = recommendation_mariadb(self.state, p_lsn, below, dirty_pct, pool.dirty_pages(), s, first)
                    g = self.gauges
                    g["buffer_flush_n_to_flush_requested"] = req
                    g["buffer_flush_pct_for_lsn"] = p_lsn
                    g["buffer_flush_avg_page_rate"] = self.state.avg_page_rate
                    g["buffer_flush_lsn_avg_rate"] = self.state.lsn_avg_rate
                    _, n = yield from self.flusher.flush_list_slot(0, req, LSN_MAX, "adaptive")
                    self.last_pages = n
            if pool.inst[0].free < s.lru_scan_depth:
                budget = max(s.io_capacity_max - n, min(s.io_capacity_max, s.lru_scan_depth))
                yield from self.flusher.lru_batch(0, budget)
            yield from self.flusher.dblwr.flush_buffered()
            yield from self.logsys.checkpoint(sync=False)
            self._signal_done()

    def furious(self):
        """buf_flush_sync_for_checkpoint (SimPy generator)."""
        s, target = self.s, self.sync_lsn
        if self._need_lru():
            yield from self.flusher.lru_batch(0, s.io_capacity)
        _, n = yield from self.flusher.flush_list_slot(0, s.io_capacity_max, target, "sync")
        self.counters.add("buffer_flush_sync")
        yield from self.flusher.dblwr.wait_idle()
        yield from self.logsys.checkpoint(sync=False)
        if self._oldest() >= target:
            if self.sync_lsn == target:
                self.sync_lsn = 0
            if self.async_lsn <= target:
                self.async_lsn = 0
        self._signal_done()
        if n == 0:
            yield self.env.timeout(0.001)
