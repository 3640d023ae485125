"""The MySQL 5.7 / 8.0 page cleaner: a coordinator and workers, one slot per buffer pool instance.

Mirrors buf_flush_page_cleaner_coordinator, buf_flush_page_cleaner_worker, pc_request,
pc_flush_slot, pc_wait_finished, pc_sleep_if_needed (MySQL 5.7.44 buf/buf0flu.cc) and, for 8.0,
buf_flush_page_coordinator_thread with its sync-flush mode (MySQL 8.0.27 buf/buf0flu.cc,
log_sync_flush_lsn in log/log0chkp.cc); spec shared/research/innodb-flushing.md 4.2 and 4.3.

* min(innodb_page_cleaners, instances) threads take the slots of a request one by one; for its
  instance a slot runs an LRU batch (buf_flush_LRU_list) and then one flush-list batch of the
  slot's page count. The coordinator waits until every slot is done, so a round lasts as long as
  its slowest slot.
* The loop sleeps on buf_flush_event until the next second. A wake-up by the event (a user
  thread's sync request or free-page shortage) is served at once: 5.7 with innodb_flush_sync
  flushes every instance up to buf_flush_sync_lsn without a page limit; other event wake-ups
  are LRU-only passes. A timed-out wake-up of an active server runs adaptive flushing
  (page_cleaner_flush_pages_recommendation: models.adaptive_flushing); an idle server flushes
  PCT_IO(100) (8.0: innodb_idle_flush_pct) pages.
* 8.0: every round first asks log_sync_flush_lsn; past the sync age the coordinator runs
  back-to-back sync rounds (no sleep) of at least innodb_io_capacity and at most
  2 x innodb_io_capacity_max pages below the sync limit, until the age is back below it.
"""

from __future__ import annotations

from models.adaptive_flushing import (AdaptiveState57, averages_57, log_sync_flush_lsn_80, modified_ratio_pct_57,
                                      pages_for_lsn_cap_80, pct_for_dirty_57, pct_for_lsn, pct_io,
                                      recommendation_57)
from models.buf_flush import ULINT_MAX
from models.page_cleaner import LSN_MAX, cleaner_gauges


class PageCleanerCoordinator:
    def __init__(self, env, flusher, pool, log, counters, settings, limits, mode_80: bool,
                 flush_order_lag: int = 0) -> None:
        self.env = env
        self.flusher = flusher
        self.pool = pool
        self.log = log
        self.counters = counters
        self.s = settings
        self.limits = limits
        self.mode_80 = mode_80
        self.lag = flush_order_lag
        self.n_threads = max(1, min(settings.page_cleaners, pool.n_instances))
        self.state = AdaptiveState57()
        self.last_pages = 0
        self.sync_lsn = 0                      # buf_flush_sync_lsn (5.7)
        self.requested_checkpoint_lsn = 0      # 8.0: log.requested_checkpoint_lsn (set by log_free_check)
        self.in_sync_mode = False
        self.event = env.event()               # buf_flush_event
        self.gauges = cleaner_gauges()

    # -- requests from other threads --------------------------------------------------------------

    def wake(self) -> None:
        """os_event_set(buf_flush_event)."""
        if not self.event.triggered:
            self.event.succeed()

    def request_force(self, lsn_limit: int) -> None:
        """buf_flush_request_force (5.7): raise buf_flush_sync_lsn to lsn_limit + 3 x lsn_avg_rate."""
        target = lsn_limit + 3 * self.state.lsn_avg_rate
        if target > self.sync_lsn:
            self.sync_lsn = target
        self.wake()

    # -- the coordinator --------------------------------------------------------------------------

    def available_for_checkpoint(self) -> int:
        oldest = self.pool.oldest_modification_all()
        if not oldest:
            return self.log.lsn
        return max(self.log.last_checkpoint_lsn, oldest - self.lag)

    def run(self):
        env = self.env
        next_loop_s = env.now + 1.0
        last_activity = self.counters["commits"]
        while True:
            timed_out = True
            if not self.in_sync_mode and next_loop_s > env.now:      # pc_sleep_if_needed
                ev = self.event
                yield env.any_of([env.timeout(next_loop_s - env.now), ev])
                if ev.triggered:
                    self.event = env.event()
                    timed_out = False
            if timed_out:
                next_loop_s = env.now + 1.0
            active = self.counters["commits"] != last_activity
            last_activity = self.counters["commits"]
            if self.mode_80:
                limit = 0
                if self.s.flush_sync:
                    limit = log_sync_flush_lsn_80(self.log.lsn, self.available_for_checkpoint(), self.limits,
                                                  self.requested_checkpoint_lsn, self.lag)
                self.in_sync_mode = limit > 0
                if self.in_sync_mode:
                    limit += 3 * self.state.lsn_avg_rate
                    req = self.recommend(sync=True, limit=limit)
                    n = yield from self.pc_request(list(req.per_slot), limit, "sync")
                    self.counters.add("buffer_flush_sync")
                    if n == 0:                                      # nothing writable yet
                        yield env.timeout(0.001)
                    continue
            elif not timed_out and self.s.flush_sync and self.sync_lsn > 0:
                limit, self.sync_lsn = self.sync_lsn, 0
                yield from self.pc_request([ULINT_MAX] * self.pool.n_instances, limit, "sync")
                self.counters.add("buffer_flush_sync")
                continue
            if active:
                self.counters.add("buffer_flush_adaptive")
                if timed_out:
                    req = self.recommend(sync=False)
                    per_slot = list(req.per_slot) if req is not None else [0] * self.pool.n_instances
                    self.last_pages = yield from self.pc_request(per_slot, LSN_MAX, "adaptive")
                else:
                    yield from self.pc_request(None, LSN_MAX, "adaptive")
            elif timed_out:
                pct = self.s.idle_flush_pct if self.mode_80 else 100
                self.counters.add("buffer_flush_background")
                yield from self.flusher.buf_flush_list(pct_io(self.s.io_capacity, pct), LSN_MAX, "background")

    def recommend(self, sync: bool, limit: int = 0):
        """page_cleaner_flush_pages_recommendation (5.7) / Adaptive_flush::page_recommendation (8.0)."""
        pool, log, s = self.pool, self.log, self.s
        lsn = log.lsn
        if not sync:
            self.state, go = averages_57(self.state, lsn, self.env.now, self.last_pages, s.flushing_avg_loops)
            if not go:
                return None
        # 5.7 buf_pool_get_oldest_modification, 8.0 buf_pool_get_oldest_modification_approx: 0 when
        # every flush list is empty, so the age is then the whole LSN (the server's arithmetic).
        oldest = pool.oldest_modification_all()
        age = lsn - oldest if lsn > oldest else 0
        dirty_pct = modified_ratio_pct_57(pool.dirty_pages(), pool.lru_pages(), pool.free_pages())
        p_dirty = pct_for_dirty_57(dirty_pct, s.max_dirty_pages_pct, s.max_dirty_pages_pct_lwm)
        p_lsn = pct_for_lsn(age, self.limits.log_group_capacity, self.limits.max_modified_age_async,
                            s.io_capacity, s.io_capacity_max, s.adaptive_flushing_lwm_pct, s.adaptive_flushing)
        target = limit if sync else oldest + 3 * self.state.lsn_avg_rate
        cap = pages_for_lsn_cap_80(s.io_capacity_max, pool.n_instances, sync) if self.mode_80 else ULINT_MAX
        below = [pool.count_below(i, target, cap) for i in range(pool.n_instances)]
        req = recommendation_57(below, p_dirty, p_lsn, self.state.avg_page_rate, s, sync=sync,
                                per_slot_plus_one=self.mode_80)
        g = self.gauges
        g["buffer_flush_n_to_flush_requested"] = req.n_pages
        g["buffer_flush_pct_for_lsn"] = p_lsn
        g["buffer_flush_pct_for_dirty"] = p_dirty
        g["buffer_flush_avg_page_rate"] = self.state.avg_page_rate
        g["buffer_flush_lsn_avg_rate"] = self.state.lsn_avg_rate
        return req

    def pc_request(self, per_slot, lsn_limit: int, kind: str):
        """pc_request + the workers' pc_flush_slot + pc_wait_finished. per_slot None: LRU only.
        Returns the flush-list pages written (SimPy generator)."""
        env, flusher = self.env, self.flusher
        todo = list(range(self.pool.n_instances))
        flushed = [0]

        def worker():
            while todo:
                i = todo.pop(0)
                yield from flusher.buf_flush_LRU_list(i)
                if per_slot is not None and per_slot[i] > 0:
                    _, n = yield from flusher.flush_list_slot(i, per_slot[i], lsn_limit, kind)
                    flushed[0] += n

        procs = [env.process(worker()) for _ in range(min(self.n_threads, len(todo)))]
        yield env.all_of(procs)
        return flushed[0]
