"""MariaDB 10.5+ redo margins: flush-ahead at mtr commit, users waiting in 1 MiB steps.

Mirrors (MariaDB 10.11/11.x mtr/mtr0mtr.cc: log_close, mtr_t::commit -> buf_flush_ahead;
log/log0log.cc: log_checkpoint_margin; buf/buf0flu.cc: buf_flush_wait_flushed; spec
shared/research/innodb-flushing.md 3.4):
* log_close: past max_modified_age_async the mtr asks the page cleaner to flush ahead up to
  lsn - max_modified_age_async (buf_flush_async_lsn); past max_checkpoint_age the request is
  "furious" (buf_flush_sync_lsn) and log_sys.check_for_checkpoint is set. The mtr does not wait.
* log_free_check -> log_checkpoint_margin: while lsn > checkpoint + max_checkpoint_age the thread
  waits until the oldest page is 1 MiB of redo past the checkpoint (buf_flush_wait_flushed: one
  buffer_flush_sync_waits, the page cleaner raised to furious flushing, then a checkpoint written
  if none covers the target) and sleeps 10 ms.
Checkpoints are written by the page cleaner at the end of each iteration (models.page_cleaner_mariadb).
"""

from __future__ import annotations

from models.log_sys import LogSys56

MIB = 1 << 20
THUNDERING_HERD_SLEEP_S = 0.01


class LogSysMariaDB(LogSys56):
    cleaner = None                        # models.page_cleaner_mariadb.PageCleanerMariaDB

    def log_close(self) -> None:
        st, lim = self.st, self.limits
        if st.lsn - st.last_checkpoint_lsn <= lim.max_modified_age_async:
            return
        self.cleaner.flush_ahead(st.lsn - lim.max_modified_age_async, self.log_close_check())

    def log_close_check(self) -> bool:
        """log_close's flag test only: at furious flushing (max_checkpoint_age) set the flag and
        return True. Its flush-ahead request is made once per batch of mtrs, by log_close."""
        st = self.st
        furious = st.lsn - st.last_checkpoint_lsn >= self.limits.max_checkpoint_age
        if furious:
            st.check_flush_or_checkpoint = True
        return furious

    at_capacity = ("MariaDB's log_close prints \"Crash recovery is broken due to insufficient "
                   "innodb_log_file_size\" there (log_overwrite_warning) and goes on")
    capacity_name = "log_capacity"

    def log_check_margins(self, on_wait):
        """log_checkpoint_margin (SimPy generator). on_wait: see LogSys56.log_check_margins."""
        st, lim, env = self.st, self.limits, self.env
        self.in_margin += 1
        try:
            on_wait("margin" if st.lsn > st.last_checkpoint_lsn + lim.max_checkpoint_age else None)
            while st.lsn > st.last_checkpoint_lsn + lim.max_checkpoint_age:
                target = min(st.last_checkpoint_lsn + lim.max_checkpoint_age, st.last_checkpoint_lsn + MIB)
                yield from self.buf_flush_wait_flushed(target)
                yield env.timeout(THUNDERING_HERD_SLEEP_S)
            st.check_flush_or_checkpoint = False
        finally:
            self.in_margin -= 1

    def buf_flush_wait_flushed(self, target: int):
        if self.oldest() < target:
            self.counters.add("buffer_flush_sync_waits")
            self.cleaner.flush_ahead(target, True)
            while self.oldest() < target:
                yield self.cleaner.done_event
        if self.st.last_checkpoint_lsn < target:
            yield from self.checkpoint(sync=False)
