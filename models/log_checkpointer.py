"""MySQL 8.0 checkpoints and redo-space waits: the log_checkpointer thread and log_free_check.

Mirrors (MySQL 8.0.27 log/log0chkp.cc, include/log0log.ic; 8.0.30+ the same logic, spec
shared/research/innodb-flushing.md 3.3, 6.2, 6.3):
* log_free_check / log_free_check_wait: a user thread past the free-check limit (checkpoint
  LSN + free-check capacity) requests a checkpoint at lsn - capacity and waits until the
  checkpoint has moved far enough for the LSN it saw on entry (the server polls every 100 us; here
  the waiters wake at each checkpoint write). User threads never flush pages for redo space.
  Counter log_on_file_space_waits.
* log_checkpointer: wakes every innodb_log_checkpoint_every (1 s) or on request; wakes the page
  cleaner when sync flushing is needed (log_consider_sync_flush); when the server was busy and no
  checkpoint is requested it waits 7 s between checkpoints (log_busy_checkpoint_interval),
  otherwise it writes one each second, and at once past the aggressive checkpoint age.
* The checkpoint LSN is available_for_checkpoint_lsn: the oldest dirty page less the flush-order
  lag (innodb_log_recent_closed_size; 8.0 lets mini-transactions add to the flush lists out of
  order within it), never below the last checkpoint.
"""

from __future__ import annotations

from models.adaptive_flushing import log_sync_flush_lsn_80
from models.log_sys import LogSys56

LOG_CHECKPOINT_EVERY_S = 1.0
LOG_BUSY_CHECKPOINT_INTERVAL = 7
REQUEST_RETRY_S = 0.01      # a waiting thread renews its checkpoint request this often (approximation)


class LogSys80(LogSys56):
    cleaner = None                        # the page cleaner coordinator (set by the engine)

    def __init__(self, *args, flush_order_lag: int = 0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lag = flush_order_lag
        self.requested_checkpoint_lsn = 0
        self.ckpt_event = self.env.event()
        self.request_event = self.env.event()

    def oldest(self) -> int:
        """log_compute_available_for_checkpoint_lsn (simplified to the oldest page less the lag)."""
        o = self.pool.oldest_modification_all()
        if not o:
            return self.st.lsn
        return max(self.st.last_checkpoint_lsn, o - self.lag)

    def checkpoint_written(self) -> None:
        ev, self.ckpt_event = self.ckpt_event, self.env.event()
        ev.succeed()

    def log_close(self) -> None:
        """The free_check_limit_sn test of log_free_check, evaluated once per batch of mtrs."""
        if self.st.lsn - self.st.last_checkpoint_lsn > self.limits.max_checkpoint_age:
            self.st.check_flush_or_checkpoint = True

    def capacity_limit(self) -> int:
        """8.0 has no log_close check; its log writer stops at the checkpoint plus the capacity."""
        return self.limits.capacity_bytes

    at_capacity = ("the log writer does not write past the checkpoint plus the redo capacity: it waits "
                   "for the checkpointer (log_writer_wait_on_checkpoint, log/log0write.cc), which innosim "
                   "does not simulate")
    capacity_name = "the redo capacity"

    def _request_checkpoint(self, lsn: int) -> None:
        if lsn > self.requested_checkpoint_lsn:
            self.requested_checkpoint_lsn = lsn
            self.cleaner.requested_checkpoint_lsn = lsn
        if not self.request_event.triggered:
            self.request_event.succeed()
        self.cleaner.wake()

    def log_check_margins(self, on_wait):
        """log_free_check_wait (SimPy generator). on_wait: see LogSys56.log_check_margins."""
        st, cap = self.st, self.limits.max_checkpoint_age
        self.in_margin += 1
        try:
            lsn = st.lsn
            on_wait("margin" if lsn - st.last_checkpoint_lsn > cap else None)
            if lsn - st.last_checkpoint_lsn > cap:
                self.counters.add("log_on_file_space_waits")
            while lsn - st.last_checkpoint_lsn > cap:
                self._request_checkpoint(lsn - cap)
                yield self.env.any_of([self.ckpt_event, self.env.timeout(REQUEST_RETRY_S)])
            st.check_flush_or_checkpoint = st.lsn - st.last_checkpoint_lsn > cap
        finally:
            self.in_margin -= 1

    def checkpointer(self):
        """log_checkpointer (SimPy process)."""
        env, st, lim = self.env, self.st, self.limits
        last_write_s = 0.0
        last_activity = self.counters["commits"]
        while True:
            ev = self.request_event
            yield env.any_of([env.timeout(LOG_CHECKPOINT_EVERY_S), ev])
            if ev.triggered:
                self.request_event = env.event()
            busy = self.counters["commits"] != last_activity
            last_activity = self.counters["commits"]
            requested = self.requested_checkpoint_lsn > st.last_checkpoint_lsn
            age = st.lsn - st.last_checkpoint_lsn
            aggressive = lim.max_checkpoint_age_async is not None and age >= lim.max_checkpoint_age_async
            if busy and not requested and not aggressive and env.now - last_write_s < LOG_BUSY_CHECKPOINT_INTERVAL:
                continue
            if self.s.flush_sync and log_sync_flush_lsn_80(st.lsn, self.oldest(), lim, self.requested_checkpoint_lsn,
                                                            self.lag):
                self.cleaner.wake()                                  # log_consider_sync_flush
            if env.now - last_write_s >= LOG_CHECKPOINT_EVERY_S or aggressive or requested:
                if self.oldest() > st.last_checkpoint_lsn:
                    yield from self.checkpoint(sync=False)
                    last_write_s = env.now
