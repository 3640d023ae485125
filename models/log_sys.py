"""MySQL 5.6 log_sys: LSN, group commit, checkpoints, and what a user thread does at log_free_check.

* LSN: the redo byte stream in 512-byte blocks with a 12-byte header and 4-byte trailer
  (LOG_BLOCK_HDR_SIZE, LOG_BLOCK_TRL_SIZE), starting at LOG_START_LSN = 8192 (log/log0log.cc).
* Group commit (log_write_up_to with flush): one log write + fsync at a time; commits arriving
  while it runs wait for the next one, which covers everything written by the time it starts.
* log_checkpoint (spec 6.2): fsync the data files, then write the checkpoint block; the checkpoint
  LSN is the oldest dirty page's oldest_modification at the call (or the current LSN).
* srv_master_thread (srv/srv0srv.cc, spec 6.3): every second; when the server was active a
  checkpoint every SRV_MASTER_CHECKPOINT_INTERVAL = 7 s, when idle every second.
* log_check_margins -> log_checkpoint_margin (spec 3.1): run by every user thread that finds
  check_flush_or_checkpoint set. The flag is cleared as soon as checkpoint age <= max_checkpoint_age;
  beyond max_modified_age_sync the thread preflushes every instance in turn to oldest + 2 x overshoot
  (log_preflush_pool_modified_pages = buf_flush_list(ULINT_MAX, target) then
  buf_flush_wait_batch_end(NULL, LIST)); if an instance was busy it counts buffer_flush_sync_waits,
  sets the flag again and loops. Beyond max_checkpoint_age_async it writes a checkpoint (and waits
  for it, looping, beyond max_checkpoint_age). log_check_margins repeats all this while the flag is
  set (its do-while), so a thread whose preflush succeeded goes round again when another thread's
  log_close set the flag meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.buf_flush import LIST, ULINT_MAX
from models.redo import log_checkpoint_margin_56, log_checkpoint_margin_57, log_close_needs_check_56

LOG_START_LSN = 8192
OS_FILE_LOG_BLOCK_SIZE = 512
LOG_BLOCK_HDR_SIZE = 12
LOG_BLOCK_TRL_SIZE = 4
LOG_BLOCK_DATA = OS_FILE_LOG_BLOCK_SIZE - LOG_BLOCK_HDR_SIZE - LOG_BLOCK_TRL_SIZE
SRV_MASTER_CHECKPOINT_INTERVAL_S = 7


def lsn_bounds(lsn: int, data_bytes: int, n: int) -> list[int]:
    """[lsn, then the LSN after each of n appends of data_bytes of redo records].

    Block headers and trailers are part of the LSN space, as log_write_low lays them out: a block
    that fills moves the LSN past its trailer and the next block's header. Computed in the
    data-byte space (an LSN's block number times the bytes a block holds, plus its offset past the
    header), where n appends are n additions, then mapped back to LSNs. tests/test_engine.py checks
    it against a block-by-block walk from every start offset (header, data area, trailer).
    """
    block, off = divmod(lsn, OS_FILE_LOG_BLOCK_SIZE)
    d = block * LOG_BLOCK_DATA + (off - LOG_BLOCK_HDR_SIZE if off > LOG_BLOCK_HDR_SIZE else 0)
    out = [lsn]
    for _ in range(n):
        d += data_bytes
        b, r = divmod(d, LOG_BLOCK_DATA)
        out.append(b * OS_FILE_LOG_BLOCK_SIZE + LOG_BLOCK_HDR_SIZE + r)
    return out


def lsn_after(lsn: int, data_bytes: int) -> int:
    """The LSN after one append of data_bytes of redo records at lsn: lsn_bounds(lsn, data_bytes, 1)[1]."""
    off = lsn % OS_FILE_LOG_BLOCK_SIZE
    if LOG_BLOCK_HDR_SIZE <= off and off + data_bytes < OS_FILE_LOG_BLOCK_SIZE - LOG_BLOCK_TRL_SIZE:
        return lsn + data_bytes                    # stays inside the block's data area
    return lsn_bounds(lsn, data_bytes, 1)[1]


@dataclass
class LogState:
    lsn: int = LOG_START_LSN
    flushed_lsn: int = LOG_START_LSN
    written_lsn: int = LOG_START_LSN
    last_checkpoint_lsn: int = LOG_START_LSN
    check_flush_or_checkpoint: bool = False
    n_pending_checkpoint_writes: int = 0
    writer: "object" = None        # the group-commit writer (models.user_threads.LogWriter)


class LogSys56:
    """Checkpoints and the user-thread margin loop (SimPy processes)."""

    def __init__(self, env, state: LogState, pool, flusher, fil, counters, limits, settings) -> None:
        self.env = env
        self.st = state
        self.pool = pool
        self.flusher = flusher
        self.fil = fil
        self.counters = counters
        self.limits = limits
        self.s = settings
        self.in_margin = 0          # user threads inside log_check_margins
        self.over_capacity: dict | None = None   # see check_capacity

    def oldest(self) -> int:
        o = self.pool.oldest_modification_all()
        return o if o else self.st.lsn

    def log_close(self) -> None:
        """log_close (5.6): set check_flush_or_checkpoint after an mtr commit when needed."""
        st = self.st
        half_full = st.lsn - st.written_lsn > self.s.log_buffer_size_bytes // 2
        if not half_full and st.lsn - st.last_checkpoint_lsn <= self.limits.max_modified_age_sync:
            return
        o = self.pool.oldest_modification_all()
        if log_close_needs_check_56(st.lsn, st.last_checkpoint_lsn, o if o else None, self.limits, half_full):
            st.check_flush_or_checkpoint = True

    def log_close_check(self) -> None:
        """log_close's flag test at a log_free_check. The server commits mini-transactions all
        through each transaction, so a flag that a thread in log_checkpoint_margin cleared is set
        again within microseconds while the age stays past the limit; here the redo of a whole
        transaction is appended at its start, so the test runs again before each batch checks
        the flag."""
        self.log_close()

    def capacity_limit(self) -> int:
        """The checkpoint age the server reports as too large: log_group_capacity (5.6/5.7
        log_close; MariaDB's log_capacity, log_close -> log_overwrite_warning)."""
        return self.limits.log_group_capacity

    def check_capacity(self) -> None:
        """After a batch of mtr commits: note when the checkpoint age reaches `capacity_limit`.

        The server checks log_free_check before every mini-transaction and reserves room for about
        4 pages of redo per thread (log_calc_max_ages), so it gets here only through a single
        mini-transaction larger than that (5.6/5.7 log_close then prints "the age of the last
        checkpoint is N, which exceeds the log group capacity M"). innosim checks once per
        transaction, so many users with large transactions overshoot where the server would have
        stopped them; the engine reports it (capacity_warning) rather than pass it off as the server's.
        """
        st = self.st
        age = st.lsn - st.last_checkpoint_lsn
        if age < self.capacity_limit():
            return
        o = self.over_capacity
        if o is None:
            self.over_capacity = o = {"first_s": self.env.now, "batches": 0, "max_age": 0, "overwritten": False}
        o["batches"] += 1
        o["max_age"] = max(o["max_age"], age)
        if age > self.limits.capacity_bytes:
            o["overwritten"] = True

    # What the server does at capacity_limit (the warning names it).
    at_capacity = ("5.6/5.7 log_close prints \"the age of the last checkpoint is N, which exceeds the log "
                   "group capacity M\" there and goes on")
    capacity_name = "log_group_capacity"

    def capacity_warning(self) -> str | None:
        o = self.over_capacity
        if o is None:
            return None
        over = ("; redo was written over before its pages were flushed (crash recovery would fail)"
                if o["overwritten"] else "")
        return (f"checkpoint age reached {self.capacity_name} {self.capacity_limit():,} (up to {o['max_age']:,}, "
                f"first at {o['first_s']:.2f} s, in {o['batches']:,} batches of commits){over}. In the server, "
                f"{self.at_capacity}; it checks log_free_check before every mini-transaction, innosim once per "
                f"transaction, so many concurrent transactions with this much redo overshoot here where the "
                f"server would have made them wait: results from that time on are not faithful. Use a larger "
                f"redo log, fewer users or less redo per transaction")

    # -- checkpoints ----------------------------------------------------------------------------

    def checkpoint(self, sync: bool):
        """log_checkpoint(sync, FALSE) (SimPy generator). Returns True when one was written or
        nothing new was to be written, False when another checkpoint write was pending."""
        st = self.st
        oldest = self.oldest()
        yield from self.fil.fsync_data_files()
        if st.flushed_lsn < oldest:
            yield st.writer.wait_flushed(oldest)
        if st.last_checkpoint_lsn >= oldest:
            return True
        if st.n_pending_checkpoint_writes:
            if sync:
                while st.n_pending_checkpoint_writes:
                    yield self.env.timeout(0.001)
            return False
        st.n_pending_checkpoint_writes += 1
        yield from self.fil.write_checkpoint_block()
        st.n_pending_checkpoint_writes -= 1
        if oldest > st.last_checkpoint_lsn:
            st.last_checkpoint_lsn = oldest
        self.counters.add("log_checkpoints")
        self.checkpoint_written()
        return True

    def checkpoint_written(self) -> None:
        """Called after each checkpoint write (8.0 and MariaDB wake their waiters here)."""

    def master_thread(self, checkpoints: bool = True):
        """srv_master_thread (5.6/5.7): each second, the log flush once innodb_flush_log_at_timeout
        seconds have passed since the last one (srv_sync_log_buffer_in_background), and a
        checkpoint each 7 s when active. 8.0 (its log_flusher's timeout) and MariaDB write
        checkpoints elsewhere (checkpoints=False): only the log flush."""
        env = self.env
        last_activity = self.counters["commits"]
        seconds = 0
        last_flush_s = 0
        timeout_s = max(1, int(round(self.s.flush_log_at_timeout_s)))
        while True:
            yield env.timeout(1.0)
            seconds += 1
            active = self.counters["commits"] != last_activity
            last_activity = self.counters["commits"]
            if seconds - last_flush_s >= timeout_s:
                last_flush_s = seconds
                self.st.writer.background_flush()
            if checkpoints and (not active or seconds % SRV_MASTER_CHECKPOINT_INTERVAL_S == 0):
                yield from self.checkpoint(sync=False)

    # -- the user thread at log_free_check ------------------------------------------------------

    def log_check_margins(self, on_wait):
        """log_check_margins (5.6/5.7) for one user thread (SimPy generator).

        on_wait(kind) tells the caller what the thread waits for from now on: "log"
        (log_flush_margin's log write), "margin" (a preflush, a checkpoint, 5.7's
        log_margin_checkpoint_age), or None (passing the checks, which costs no time in the server).
        """
        st, lim = self.st, self.limits
        self.in_margin += 1
        try:
            on_wait(None)
            yield from self.before_margins(on_wait)
            while st.check_flush_or_checkpoint:
                if st.lsn - st.written_lsn > self.s.log_buffer_size_bytes // 2:   # log_flush_margin
                    on_wait("log")
                    yield st.writer.wait_written(st.lsn)
                    on_wait(None)
                o = self.pool.oldest_modification_all()
                action = self.checkpoint_margin(st.lsn, st.last_checkpoint_lsn, o if o else None, lim)
                if action.checkpoint != "sync":
                    st.check_flush_or_checkpoint = False
                if action.preflush_to_lsn is not None:
                    on_wait("margin")
                    success = yield from self.preflush(action.preflush_to_lsn)
                    on_wait(None)
                    if not success:
                        st.check_flush_or_checkpoint = True
                        continue
                if action.checkpoint is not None:
                    on_wait("margin")
                    yield from self.checkpoint(sync=action.checkpoint == "sync")
                    on_wait(None)
                # log_check_margins loops while the flag is set: another thread's log_close may
                # have set it again while this one flushed or wrote the checkpoint.
        finally:
            self.in_margin -= 1

    checkpoint_margin = staticmethod(log_checkpoint_margin_56)

    def before_margins(self, on_wait):
        """Nothing in 5.6 (5.7 checks its mtr-level stop here)."""
        return
        yield

    def preflush(self, target_lsn: int):
        """log_preflush_pool_modified_pages (5.6): buf_flush_list(ULINT_MAX, target) in this thread,
        then wait for every list batch; False (one buffer_flush_sync_waits) when an instance was busy."""
        success, _ = yield from self.flusher.buf_flush_list(ULINT_MAX, target_lsn, "sync")
        yield from self.flusher.batches.wait_all_end(LIST)
        self.counters.add("buffer_flush_sync")
        if not success:
            self.counters.add("buffer_flush_sync_waits")
        return success


LOG_MTR_STOP_SLEEP_S = 0.1              # log_margin_checkpoint_age: os_thread_sleep(100000)
BUF_FLUSH_WAIT_FLUSHED_SLEEP_S = 0.01   # buf_flush_wait_flushed_sleep_time (5.7)


class LogSys57(LogSys56):
    """MySQL 5.7 (log/log0log.cc 5.7.44): the same log_close flag and checkpoint thresholds as 5.6;
    past max_modified_age_sync a user thread asks the page cleaner for a sync flush up to
    oldest + the overshoot (buf_flush_request_force, with innodb_flush_sync) and polls every 10 ms,
    per instance, until that instance's oldest page is past the target (buf_flush_wait_flushed,
    one buffer_flush_sync_waits per sleep). New in 5.7, log_margin_checkpoint_age: past
    log_group_capacity (90 % of the log) a thread sleeps 100 ms if the pages are not flushed far
    enough and then writes a checkpoint synchronously. Here that check runs at log_free_check
    rather than before each mini-transaction's redo is written.
    """

    cleaner = None                        # the page cleaner coordinator (set by the engine)

    def log_close(self) -> None:
        super().log_close()
        if self.st.lsn - self.st.last_checkpoint_lsn > self.limits.log_group_capacity:
            self.st.check_flush_or_checkpoint = True

    checkpoint_margin = staticmethod(log_checkpoint_margin_57)

    def before_margins(self, on_wait):
        """log_margin_checkpoint_age: past log_group_capacity, sleep 100 ms when the pages are not
        flushed far enough, then write a checkpoint and wait for it."""
        st, lim = self.st, self.limits
        if st.lsn - st.last_checkpoint_lsn > lim.log_group_capacity:
            on_wait("margin")
            if st.lsn - self.oldest() > lim.log_group_capacity:
                yield self.env.timeout(LOG_MTR_STOP_SLEEP_S)
            yield from self.checkpoint(sync=True)
            on_wait(None)

    def preflush(self, target_lsn: int):
        """log_preflush_pool_modified_pages (5.7): buf_flush_request_force, then
        buf_flush_wait_flushed: each instance polled every 10 ms until its oldest page is past."""
        pool, env = self.pool, self.env
        if self.s.flush_sync:
            self.cleaner.request_force(target_lsn)
        for i in range(pool.n_instances):
            while 0 < pool.oldest_modification(i) < target_lsn:
                yield env.timeout(BUF_FLUSH_WAIT_FLUSHED_SLEEP_S)
                self.counters.add("buffer_flush_sync_waits")
        return True
