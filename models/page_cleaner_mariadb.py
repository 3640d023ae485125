"""The MariaDB 10.5+ page cleaner: buf_flush_page_cleaner, one thread over the one buffer pool.

Mirrors MariaDB 10.11/11.x buf/buf0flu.cc (buf_flush_page_cleaner, buf_flush_sync_for_checkpoint,
page_cleaner_flush_pages_recommendation, af_needed_for_redo, buf_flush_ahead; read in 10.11.18;
spec shared/research/innodb-flushing.md 4.4), iteration by iteration:
0. unless free blocks run short (need_LRU_eviction), wait for a wake-up or for the 1-second
   deadline, which is set anew after every wait (set_timespec(abstime, 1)); user threads wake it
   when a block they take leaves fewer than innodb_lru_scan_depth / 2 free
   (buf_LRU_get_free_block -> page_cleaner_wakeup(true));
1. furious flushing while buf_flush_sync_lsn is set (innodb_flush_sync): up to
   innodb_io_capacity_max pages below it, wait for those writes, fsync, checkpoint; no sleep. With
   innodb_flush_sync = OFF the target is taken as a soft one (step 3);
2. no dirty page: checkpoint, idle;
3. a flush-ahead target (buf_flush_async_lsn, soft_lsn_limit): up to innodb_io_capacity_max pages
   below it. A target the oldest page has already passed is dropped, and the pass goes on to step
   5, not to the LRU-only step 4 (a background pass whose writes complete after it is over leaves
   one such target behind: the measured B-then-A pairs);
4. else, free pages short: wait for the writes in flight, one LRU flush of up to
   innodb_io_capacity_max pages, push the doublewrite slot, checkpoint, and start over;
5. else work only when dirty % reaches innodb_max_dirty_pages_pct (or its lwm when set) or the
   modified age passes innodb_adaptive_flushing_lwm % of log_capacity; then the adaptive request,
   whose page rate (avg_page_rate) averages every page the cleaner wrote, LRU batches included
   (last_pages accumulates buf_flush_LRU's pages between adaptive passes);
6. an LRU flush until the free list holds innodb_lru_scan_depth pages;
7. a met flush-ahead target is dropped, the doublewrite slot pushed and a checkpoint written.
Batches are refused only while another is being issued (buf_pool.flush_list_active), not while
the last one's writes are in flight (models.buf_flush.FlushBatches, writes_hold_batch=False).
An idle cleaner with innodb_max_dirty_pages_pct_lwm = 0 waits without timeout in the server;
here it looks once a second whether one of the wake-up conditions holds.

Step 0 means that a cleaner woken for free blocks more often than once a second never times out,
and reaches step 5 only when need_LRU_eviction() reads false at its check. Measured with the kit's
256M pool under sysbench (validation/live/cleaner_probe.py, 20 ms samples), that happens at about
one wake-up in 18: the adaptive passes begin as the free list reaches the wake-up point (median
783 free pages before them, against 768). The capture's counters suggest where the slack comes from:
buf_LRU_get_free_block is called about 3 times a transaction more than pages are read or created
(buffer_LRU_get_free_search against buffer_pool_reads + buffer_pages_created: 3.1-3.2 a transaction
at 32M, 96M and 384M) without taking one from the free list for good. Some are copies taken and
given back at once (btr_page_reorganize_low: 0.1 a transaction by index_page_reorg_attempts); the
rest were not traced. A block that crosses the wake-up point can so be back on the free list
before the cleaner looks. How often depends on the workload and on how soon the cleaner runs, which the
simulator does not model; it is the input workload.cleaner_wake_race (CLEANER_WAKE_RACE by
default, measured on three 384M captures), drawn once per free-block wake-up.
"""

from __future__ import annotations

import numpy as np

from models.adaptive_flushing import (AdaptiveState57, af_needed_for_redo_mariadb, averages_57, modified_ratio_pct_57,
                                      pct_for_lsn, recommendation_mariadb)
from models.buffer_pool import BUF_LRU_MIN_LEN
from models.device import Draws
from models.page_cleaner import LSN_MAX, cleaner_gauges

# Share of the cleaner's free-block wake-ups at which need_LRU_eviction() reads false: adaptive
# passes / LRU-only passes of the kit's 256M pool with a 384M log under sysbench oltp_read_write,
# INNODB_METRICS over (30 s, 180 s]: log-size-384m-repeat 23/403, -probe 32/527, -probe-20ms 15/337
# (0.057, 0.061, 0.045; the median). The registered log-size-384m capture (0.057) is not used.
CLEANER_WAKE_RACE = 0.057


class PageCleanerMariaDB:
    def __init__(self, env, flusher, pool, log, logsys, counters, settings, limits,
                 wake_race: float = 0.0, rng: np.random.Generator | None = None) -> None:
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
        self.lru_woken = False             # woken by page_cleaner_wakeup(true) since the last check
        self.wake_race = wake_race
        self.race_draws = Draws(lambda n: rng.random(n)) if rng is not None else None

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
            self.lru_woken = True
            self.wake()

    def _oldest(self) -> int:
        return self.pool.oldest_modification_all() or self.log.lsn

    def _need_lru(self) -> bool:
        """buf_pool_t::need_LRU_eviction: a user thread waits for free blocks (!try_LRU_scan), or
        fewer than innodb_lru_scan_depth / 2 are free."""
        c = self.pool.inst[0]
        return not self.pool.try_lru_scan or (c.lru_len > BUF_LRU_MIN_LEN and c.free < self.s.lru_scan_depth // 2)

    def _signal_done(self) -> None:
        ev, self.done_event = self.done_event, self.env.event()
        ev.succeed()

    def run(self):
        env, s, pool = self.env, self.s, self.pool
        deadline_s = env.now + 1.0
        while True:
            if not (self.sync_lsn and s.flush_sync) and not self._need_lru():
                ev = self.event
                self.waiting = True
                yield env.any_of([env.timeout(max(0.0, deadline_s - env.now)), ev])
                self.waiting = False
                if ev.triggered:
                    self.event = env.event()
            deadline_s = env.now + 1.0          # set_timespec(abstime, 1) after every wait
            lru_now = self._need_lru()
            if lru_now and self.lru_woken and self.wake_race and self.race_draws.next() < self.wake_race:
                lru_now = False                 # the free list was back at the wake-up point
            self.lru_woken = False
            lsn = self.log.lsn
            if self.sync_lsn and s.flush_sync:
                yield from self.furious()
                continue
            if not pool.dirty_pages():
                yield from self.logsys.checkpoint(sync=False)
                self.idle = True
                self.sync_lsn = 0
                self.async_lsn = 0
                self._signal_done()
                if not self._need_lru():
                    continue
                # fully_unemployed, but free blocks run short: on to the LRU eviction below (a
                # clean pool is evicted by the LRU batch; without it this loop would spin).
            oldest = self._oldest()
            soft = self.async_lsn
            if self.sync_lsn:                   # innodb_flush_sync = OFF: the target is a soft one
                if oldest >= self.sync_lsn:
                    self.sync_lsn = 0
                    self._signal_done()
                elif self.sync_lsn > soft:
                    soft = self.sync_lsn
            n = 0
            if soft:
                if oldest >= soft:
                    self.async_lsn = soft = 0   # met: on to the adaptive branch, not the LRU one
            elif lru_now:
                # Free pages first: wait for the writes in flight, one LRU flush, then the
                # doublewrite slot and a checkpoint; the next pass starts at once while free pages
                # stay short (buf_flush_page_cleaner's need_LRU_eviction branch).
                yield from self.flusher.dblwr.wait_idle()       # os_aio_wait_until_no_pending_writes
                t0 = env.now
                n = yield from self.flusher.lru_batch(0, s.io_capacity_max)
                self.last_pages += n
                yield from self._almost_idle()
                if n == 0 and env.now == t0 and self._need_lru():
                    yield env.timeout(0.001)    # nothing to free yet: the server spins, we poll
                continue
            if soft:
                self.counters.add("buffer_flush_background")
                _, n = yield from self.flusher.flush_list_slot(0, s.io_capacity_max, soft, "background")
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
                    self.counters.add("buffer_flush_background")
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
                    if req:
                        self.counters.add("buffer_flush_adaptive")
                        _, n = yield from self.flusher.flush_list_slot(0, req, LSN_MAX, "adaptive")
                        self.last_pages = n
                    elif self.async_lsn <= oldest and not self._need_lru():
                        yield from self._almost_idle()
                        continue
                    else:
                        yield from self.flusher.dblwr.wait_idle()
            if pool.inst[0].free < s.lru_scan_depth:
                budget = max(s.io_capacity_max - n, min(s.io_capacity_max, s.lru_scan_depth))
                self.last_pages += yield from self.flusher.lru_batch(0, budget)
            yield from self._almost_idle()

    def _almost_idle(self):
        """check_oldest_and_set_idle / set_almost_idle: drop a met flush-ahead target, push the
        doublewrite slot, write a checkpoint (SimPy generator)."""
        if self.async_lsn and self._oldest() >= self.async_lsn:
            self.async_lsn = 0
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
        self.last_pages = 0
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
