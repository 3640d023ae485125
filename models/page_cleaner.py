"""The MySQL 5.6 page cleaner: buf_flush_page_cleaner_thread (buf/buf0flu.cc), one thread.

Loop with a 1 s period (spec 4.1): sleep until next_loop_time unless the server is idle and the
previous pass flushed nothing; if there was server activity since the last pass (srv_check_activity),
flush the LRU tails (buf_flush_LRU_tail) and then the flush lists adaptively
(page_cleaner_flush_pages_if_needed); if idle, flush up to PCT_IO(100) pages below LSN_MAX
(background flushing). The LRU part runs first: a slow LRU pass delays adaptive flushing.
A pass that overruns the period starts the next one at once; buf_flush_start then refuses any
instance whose last list batch still has page writes in flight (with one instance, the cleaner's
own last doublewrite batch), that pass flushes nothing, and the cleaner sleeps a full second.
The adaptive arithmetic is models.adaptive_flushing; this module only schedules.
With several instances one thread flushes them in index order, so batches on the first instances
cannot move the checkpoint while the oldest page waits in a later one; MySQL's WL#6642 (multiple
page_cleaner threads, 5.7) names this as the cause of the sync flushing seed 000 measured.
"""

from __future__ import annotations

from models.adaptive_flushing import AdaptiveState56, adaptive_request_56, after_batch_56, pct_io

LSN_MAX = 1 << 62


def cleaner_gauges() -> dict:
    """The page cleaner's last published values (INNODB_METRICS names), every version's."""
    return {"buffer_flush_n_to_flush_requested": 0, "buffer_flush_pct_for_lsn": 0, "buffer_flush_pct_for_dirty": 0,
            "buffer_flush_avg_page_rate": 0, "buffer_flush_lsn_avg_rate": 0}


class PageCleaner56:
    def __init__(self, env, flusher, pool, log, counters, settings, limits) -> None:
        self.env = env
        self.flusher = flusher
        self.pool = pool
        self.log = log
        self.counters = counters
        self.limits = limits
        self.s = settings
        self.state = AdaptiveState56()
        self.gauges = cleaner_gauges()

    def run(self):
        """buf_flush_page_cleaner_thread (SimPy process)."""
        env = self.env
        next_loop_s = env.now + 1.0
        last_activity = self.counters["commits"]
        n_flushed = 0
        while True:
            active = self.counters["commits"] != last_activity
            if active or n_flushed == 0:
                if next_loop_s > env.now:          # page_cleaner_sleep_if_needed
                    yield env.timeout(next_loop_s - env.now)
            next_loop_s = env.now + 1.0
            if self.counters["commits"] != last_activity:
                last_activity = self.counters["commits"]
                n_flushed = yield from self.flusher.buf_flush_LRU_tail()
                n_flushed += yield from self.flush_pages_if_needed()
            else:
                self.counters.add("buffer_flush_background")
                _, n_flushed = yield from self.flusher.buf_flush_list(pct_io(self.s.io_capacity, 100), LSN_MAX,
                                                                      "background")

    def flush_pages_if_needed(self):
        """page_cleaner_flush_pages_if_needed (5.6)."""
        lsn = self.log.lsn
        oldest = self.pool.oldest_modification_all()
        dirty_pct = self.pool.modified_ratio_pct()
        self.state, req = adaptive_request_56(self.state, lsn, oldest, dirty_pct,
                                              self.limits.log_group_capacity,
                                              self.limits.max_modified_age_async, self.s)
        if req is None:
            return 0
        g = self.gauges
        g["buffer_flush_n_to_flush_requested"] = req.n_pages
        g["buffer_flush_pct_for_lsn"] = req.pct_for_lsn
        g["buffer_flush_pct_for_dirty"] = req.pct_for_dirty
        g["buffer_flush_avg_page_rate"] = self.state.avg_page_rate
        g["buffer_flush_lsn_avg_rate"] = self.state.lsn_avg_rate
        n = 0
        if req.n_pages > 0:
            self.counters.add("buffer_flush_adaptive")
            _, n = yield from self.flusher.buf_flush_list(req.n_pages, req.lsn_limit, "adaptive")
        self.state = after_batch_56(self.state, self.log.lsn, n)
        return n
