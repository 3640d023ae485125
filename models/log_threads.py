"""MySQL 8.0's redo log threads: log_writer, log_flusher and the notifiers (8.0.11 and later).

Mirrors log/log0write.cc of MySQL 8.0 (WL#10310; read in the mysql-server trees of 8.0.18 and
8.0.3x):

* log_writer writes the redo that is ready in the log buffer to the log file, one write at a time,
  each covering all that is ready when it starts (log_writer_write_buffer), and advances write_lsn.
  It never fsyncs. The log file is buffered in MySQL (innodb_flush_method's O_DIRECT is for the data
  files), so the write is a copy into the page cache; with O_DSYNC the file is opened O_SYNC and the
  write waits for the device.
* log_flusher fsyncs the log file whenever flushed_to_disk_lsn < write_lsn (log_flush_low; the fsync
  covers the write_lsn read before it), so fsyncs run back to back under load while the writer goes
  on writing. With innodb_flush_log_at_trx_commit = 1 the writer wakes it after each write; with 0
  or 2 it fsyncs once per innodb_flush_log_at_timeout, or when a thread asks (log_wait_for_flush
  sets flusher_event). With O_DSYNC it only advances flushed_to_disk_lsn.
* log_flush_notifier wakes the threads waiting for flushed_to_disk_lsn (flush_events, one per log
  block slot: log_compute_flush_event_slot); when the fsync advanced it within one slot the flusher
  wakes them itself (log_flush_low: first_slot == last_slot). log_write_notifier does the same for
  write_lsn, for threads that wait only for the write (innodb_flush_log_at_trx_commit = 2).
* A committing thread (log_write_up_to) sets writer_event and flusher_event and waits on its slot
  (log_wait_for_flush); with innodb_flush_log_at_trx_commit = 2 it waits for the write
  (log_wait_for_write).
* Spinning (Log_thread_waiting::wait): the writer and the flusher spin while they wait for work
  (innodb_log_writer_spin_delay, innodb_log_flusher_spin_delay rounds) when the server's user CPU,
  which srv_master_thread samples about once a second (srv_update_cpu_usage, utime_abs: percent of
  one core), is at least innodb_log_spin_cpu_abs_lwm, and log_write_up_to is called more than once
  per millisecond on average (log_write_to_file_requests_are_frequent). Otherwise they sleep on their
  events. With innodb_flush_log_at_trx_commit = 0 or 2 the flusher first sleeps on flusher_event
  until innodb_flush_log_at_timeout has passed since its last fsync (os_event_wait_time_low), so
  only the writer spins. The notifiers never spin (their spin delays default to 0).

In the simulation a thread that reacts from a spin does so at once, and one woken from sleep first
waits for a core (models.run_queue), as the 5.6 group commit's next leader does. While spinning,
the writer holds a core, and the flusher (trx_commit = 1) does whenever it is not in fsync: each step of the
user-thread model books that CPU on the cores the transactions use, at the share Linux gives a
runnable thread (all of a core while no more threads are runnable than there are cores, cores /
runnable otherwise). innodb_log_writer_threads = OFF (8.0.22+; Bug#30088404, mysql-server commit
9bfe602, for CPU-bound low-end servers) pauses these threads and each committing thread writes and
fsyncs the log itself (log_self_write_up_to); models.user_threads.LogWriter, the 5.6 group commit,
simulates that.

The writer writes whatever is ready, whether or not a thread waits (its stop condition:
write_lsn < ready_lsn): new redo wakes it when it is idle (`redo_ready`), as a commit's
writer_event does, and it goes on writing while more is ready. Simplified: a transaction's redo is
ready at its start here (models.user_threads appends it there), where the server's
mini-transactions add it all through the transaction, so the server writes more often in smaller
pieces; and the writer reacts to ready redo as it does to writer_event, where the server's sleeping
writer finds it at its next timeout (innodb_log_writer_timeout, 10 us, "at least 50us" by the
comment in log0constants.h). With innodb_flush_log_at_trx_commit = 0 or 2 the log is flushed once
per innodb_flush_log_at_timeout (srv_master_thread's call here, the flusher's timeout in the
server), and when a page write or a checkpoint needs it. The user threads' own spinning in
log_wait_for_flush (only while the server's CPU use is under innodb_log_spin_cpu_pct_hwm, so it
uses spare cores) is not modelled.
"""

from __future__ import annotations

import heapq

from models.run_queue import run_queue_wait_s

OS_FILE_LOG_BLOCK_SIZE = 512
LOG_FLUSH_EVENTS = 2048                 # innodb_log_events default (INNODB_LOG_EVENTS_DEFAULT, log0constants.h)
REQUESTS_FREQUENT_PER_S = 1000          # log_write_to_file_requests_are_frequent: interval < 1 ms
SPIN_CPU_ABS_LWM_PCT = 80               # innodb_log_spin_cpu_abs_lwm default (percent of one core)
CPU_SAMPLE_S = 1.0                      # srv_master_thread's active loop: srv_update_cpu_usage

# What a _FLUSH_DONE event of models.user_threads means here (its argument).
WRITE_DONE, FSYNC_DONE, FLUSHER_WAKE, NOTIFY_FLUSHED, NOTIFY_WRITTEN = -1, -2, -3, -4, -5


def flush_event_slot(lsn: int, n_events: int = LOG_FLUSH_EVENTS) -> int:
    """log_compute_wait_event_slot: the event of the log block holding lsn - 1."""
    return ((lsn - 1) // OS_FILE_LOG_BLOCK_SIZE) & (n_events - 1)


def flusher_notifies_directly(last_flushed_lsn: int, flushed_lsn: int, n_events: int = LOG_FLUSH_EVENTS) -> bool:
    """log_flush_low: the flusher sets the waiters' event itself when the fsync advanced
    flushed_to_disk_lsn within one slot; otherwise log_flush_notifier does."""
    return flush_event_slot(last_flushed_lsn + 1, n_events) == flush_event_slot(flushed_lsn, n_events)


def log_threads_spin(user_cpu_abs_pct: float, requests_per_s: float,
                     spin_cpu_abs_lwm_pct: float = SPIN_CPU_ABS_LWM_PCT) -> bool:
    """Log_thread_waiting::wait: the writer and flusher spin unless the server's user CPU is under
    innodb_log_spin_cpu_abs_lwm (percent of one core) or log_write_up_to is called at most once per
    millisecond on average."""
    return user_cpu_abs_pct >= spin_cpu_abs_lwm_pct and requests_per_s > REQUESTS_FREQUENT_PER_S


def spin_share(runnable: int, cores: int) -> float:
    """The share of a core one runnable thread gets when `runnable` threads share `cores`."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, not {cores}")
    return 1.0 if runnable <= cores else cores / runnable


class LogThreads:
    """The 8.0 redo path for models.user_threads.UserThreads (its `writer`).

    Events come back through the user-thread model's heap: _FLUSH_START starts the writer's write
    (start), _FLUSH_DONE ends a write, an fsync, a wake-up or a notifier's run (done, with one of
    WRITE_DONE, FSYNC_DONE, FLUSHER_WAKE, NOTIFY_FLUSHED, NOTIFY_WRITTEN)."""

    def __init__(self, users, spin_cpu_abs_lwm_pct: float = SPIN_CPU_ABS_LWM_PCT) -> None:
        from models.user_threads import _FLUSH_DONE, _FLUSH_START   # its event kinds (it imports this module)

        self.START, self.DONE = _FLUSH_START, _FLUSH_DONE
        self.u = users
        self.n_cores = len(users.cores)
        self.every_write_flushed = users.s.flush_log_at_trx_commit == 1   # the writer wakes the flusher
        # The threads that spin: log_writer, and log_flusher with innodb_flush_log_at_trx_commit = 1;
        # with 0 or 2 the flusher sleeps on flusher_event until innodb_flush_log_at_timeout has passed
        # since its last fsync (os_event_wait_time_low, no spinning), then flushes at once.
        self.n_spinners = 2 if self.every_write_flushed else 1
        self.spin_cpu_abs_lwm_pct = spin_cpu_abs_lwm_pct
        self.waiting: list[tuple[int, int]] = []          # (lsn, thread) in log_wait_for_flush
        self.write_waiting: list[tuple[int, int]] = []    # (lsn, thread) in log_wait_for_write
        self.simpy_flushed: list[tuple[int, object]] = []
        self.simpy_written: list[tuple[int, object]] = []
        self.write_target = 0            # the highest lsn a waiting thread needs written
        self.flush_target = 0            # ... and flushed
        self.writing = False             # the writer is awake (writing, or woken and about to)
        self.write_covered = 0
        self.flushing = False            # the flusher is awake
        self.flush_covered = 0
        self.notify_pending = {NOTIFY_FLUSHED: False, NOTIFY_WRITTEN: False}
        # Spinning, decided from the last CPU sample.
        self.spinning = False
        self.next_sample_s = CPU_SAMPLE_S
        self.sample_cpu_s = 0.0
        self.sample_requests = 0
        self.requests = 0                # log_write_up_to calls (write_to_file_requests_total)
        self.spin_cpu_s = 0.0            # CPU the spinning threads took
        self.spin_samples = 0            # CPU samples that found the threads spinning
        self.flusher_blocked_s = 0.0     # time in fsync not yet set against a step
        self.direct_notifies = 0         # fsyncs whose waiters the flusher woke itself

    # -- waits and wake-ups -------------------------------------------------------------------

    def _wait_s(self, spinners: int) -> float:
        """A sleeping thread's wait for a core once woken, with `spinners` log threads runnable too."""
        u = self.u
        runnable = u.n_cpu + spinners
        return run_queue_wait_s(runnable, self.n_cores, u.cpu_run_s) if runnable > self.n_cores else 0.0

    def _wake_s(self) -> float:
        """How long the writer or flusher takes to react to its event: at once while spinning."""
        return 0.0 if self.spinning else self._wait_s(0)

    def _hop_s(self) -> float:
        """A notifier's reaction (it sleeps on its event)."""
        return self._wait_s(self.n_spinners if self.spinning else 0)

    # -- log_write_up_to -----------------------------------------------------------------------

    def request(self, t: float, lsn: int, thread: int) -> None:
        """A commit at t waits for the log flushed up to lsn (log_wait_for_flush)."""
        self.requests += 1
        self.waiting.append((lsn, thread))
        if lsn > self.flush_target:
            self.flush_target = lsn
        if lsn > self.write_target:
            self.write_target = lsn
        self._kick(t)

    def request_write(self, t: float, lsn: int, thread: int) -> None:
        """A commit with innodb_flush_log_at_trx_commit = 2 waits for the write (log_wait_for_write)."""
        self.requests += 1
        self.write_waiting.append((lsn, thread))
        if lsn > self.write_target:
            self.write_target = lsn
        self._kick(t)

    def _kick(self, t: float, inline: bool = True) -> None:
        """Wake the writer, or the flusher when all that is asked for is written. `inline`: a
        thread that reacts at once runs now (inside UserThreads.advance); from the SimPy side
        (False) every wake-up goes through the heap, taken at the next drain."""
        log = self.u.log
        if self.write_target > log.written_lsn:
            if not self.writing:
                self._wake_writer(t, inline)
        elif self.flush_target > log.flushed_lsn and not self.flushing:
            self._wake_flusher(t, inline)

    def redo_ready(self, t: float) -> None:
        """Redo was added to the log buffer at t: an idle writer wakes and writes it (through the
        heap: called from inside a batch start)."""
        if not self.writing and self.u.log.lsn > self.u.log.written_lsn:
            self._wake_writer(t, inline=False)

    def _wake_writer(self, t: float, inline: bool = True) -> None:
        self.writing = True
        wake_s = self._wake_s()
        if inline and wake_s == 0.0:
            self.start(t)
        else:
            self.u.push(t + wake_s, self.START, -1)

    def _simpy_wait(self, lsn: int, waiters: list, flush: bool):
        u = self.u
        ev = u.env.event()
        log = u.log
        if lsn <= (log.flushed_lsn if flush else log.written_lsn):
            return ev.succeed()
        self.requests += 1
        waiters.append((lsn, ev))
        if lsn > self.write_target:
            self.write_target = lsn
        if flush and lsn > self.flush_target:
            self.flush_target = lsn
        self._kick(u.env.now, inline=False)
        return ev

    def wait_flushed(self, lsn: int):
        """SimPy event fired once the log is flushed up to lsn (WAL before a page write, checkpoint)."""
        return self._simpy_wait(lsn, self.simpy_flushed, True)

    def wait_written(self, lsn: int):
        """SimPy event fired once the log is written up to lsn."""
        return self._simpy_wait(lsn, self.simpy_written, False)

    def background_flush(self) -> None:
        """The flush once per innodb_flush_log_at_timeout (the flusher's timeout in 8.0)."""
        log = self.u.log
        if log.lsn > log.flushed_lsn:
            self.requests += 1
            self.write_target = max(self.write_target, log.lsn)
            self.flush_target = max(self.flush_target, log.lsn)
            self._kick(self.u.env.now, inline=False)

    def flushed_elsewhere(self, t: float) -> None:
        """A user thread wrote and flushed the log itself at t (the single-page flush's WAL rule,
        computed inline by models.user_threads): the waits it satisfied end, through the
        notifiers, in heap order."""
        u = self.u
        log = u.log
        if self.simpy_flushed:
            self.simpy_flushed = tell_at(u.env, t, log.flushed_lsn, self.simpy_flushed)
        if self.simpy_written:
            self.simpy_written = tell_at(u.env, t, log.written_lsn, self.simpy_written)
        for which, waiting in ((NOTIFY_FLUSHED, self.waiting), (NOTIFY_WRITTEN, self.write_waiting)):
            if waiting and not self.notify_pending[which]:
                self.notify_pending[which] = True
                u.push(t, self.DONE, which)

    # -- log_writer ------------------------------------------------------------------------------

    def start(self, t: float) -> None:
        """The writer writes everything ready (log_writer_write_buffer)."""
        u = self.u
        log = u.log
        covered = log.lsn
        nbytes = covered - log.written_lsn
        if nbytes <= 0:
            self.writing = False
            return
        end = u.fil.log_write_done_s(t, nbytes)
        u.counters.values["Innodb_os_log_written"] += nbytes
        self.write_covered = covered
        if self.simpy_written:
            self.simpy_written = tell_at(u.env, end, covered, self.simpy_written)
        heap = u.heap
        if end <= u.until_s and (not heap or end < heap[0][0]):
            self._written(end)          # the next event out: run at once instead of through the heap
        else:
            heapq.heappush(heap, (end, u._next_seq(), self.DONE, WRITE_DONE))

    def _written(self, t: float) -> None:
        log = self.u.log
        if self.write_covered > log.written_lsn:
            log.written_lsn = self.write_covered
        if self.write_waiting:
            self._notify(t, NOTIFY_WRITTEN)
        if not self.flushing and log.written_lsn > log.flushed_lsn and (
                self.every_write_flushed or self.flush_target > log.flushed_lsn):
            self._wake_flusher(t)
        if log.lsn > log.written_lsn:
            self.start(t)                           # more is ready: the writer goes on at once
        else:
            self.writing = False

    # -- log_flusher ------------------------------------------------------------------------------

    def _wake_flusher(self, t: float, inline: bool = True) -> None:
        self.flushing = True
        wake_s = self._wake_s()
        if inline and wake_s == 0.0:
            self._fsync(t)
        else:
            self.u.push(t + wake_s, self.DONE, FLUSHER_WAKE)

    def _fsync(self, t: float) -> None:
        """log_flush_low: fsync up to the write_lsn read now."""
        u = self.u
        log = u.log
        covered = log.written_lsn
        if covered <= log.flushed_lsn:
            self.flushing = False
            return
        end = u.fil.log_fsync_done_s(t, covered - log.flushed_lsn)
        self.flusher_blocked_s += end - t
        self.flush_covered = covered
        if self.simpy_flushed:
            self.simpy_flushed = tell_at(u.env, end, covered, self.simpy_flushed)
        heapq.heappush(u.heap, (end, u._next_seq(), self.DONE, FSYNC_DONE))

    def _fsynced(self, t: float) -> None:
        log = self.u.log
        last = log.flushed_lsn
        if self.flush_covered > last:
            log.flushed_lsn = self.flush_covered
        if self.waiting:
            if flusher_notifies_directly(last, log.flushed_lsn):
                self.direct_notifies += 1
                self._deliver(t, NOTIFY_FLUSHED)
            else:
                self._notify(t, NOTIFY_FLUSHED)
        if log.written_lsn > log.flushed_lsn and (self.every_write_flushed or self.flush_target > log.flushed_lsn):
            self._fsync(t)                          # awake: the next fsync at once
        else:
            self.flushing = False

    # -- the notifiers ---------------------------------------------------------------------------

    def _notify(self, t: float, which: int) -> None:
        if self.notify_pending[which]:
            return                                  # its run to come covers these waiters too
        hop_s = self._hop_s()
        if hop_s > 0.0:
            self.notify_pending[which] = True
            self.u.push(t + hop_s, self.DONE, which)
        else:
            self._deliver(t, which)

    def _deliver(self, t: float, which: int) -> None:
        """Wake the waiters the flushed (or written) lsn now covers, in the order they asked."""
        u = self.u
        log = u.log
        self.notify_pending[which] = False
        if which == NOTIFY_FLUSHED:
            upto, waiting = log.flushed_lsn, self.waiting
            self.waiting = []
        else:
            upto, waiting = log.written_lsn, self.write_waiting
            self.write_waiting = []
        still = wake_covered(u, waiting, upto, t)
        if which == NOTIFY_FLUSHED:
            self.waiting = still + self.waiting
        else:
            self.write_waiting = still + self.write_waiting

    def done(self, t: float, what: int) -> None:
        """A _FLUSH_DONE event of the user-thread model."""
        if what == FSYNC_DONE:
            self._fsynced(t)
        elif what == WRITE_DONE:
            self._written(t)
        elif what == FLUSHER_WAKE:
            self._fsync(t)
        else:
            self._deliver(t, what)

    # -- spinning ----------------------------------------------------------------------------------

    def step(self, t: float) -> None:
        """Once per user-thread step: the CPU sample each second, and the spinning threads' CPU for
        the step to come, booked on the cores."""
        u = self.u
        if t >= self.next_sample_s:
            elapsed = t - (self.next_sample_s - CPU_SAMPLE_S)
            cpu_s = u.cpu_busy_s + self.spin_cpu_s
            requests = self.requests
            self.spinning = log_threads_spin(100.0 * (cpu_s - self.sample_cpu_s) / elapsed,
                                             (requests - self.sample_requests) / elapsed,
                                             self.spin_cpu_abs_lwm_pct)
            self.spin_samples += int(self.spinning)
            self.sample_cpu_s, self.sample_requests = cpu_s, requests
            self.next_sample_s = t + CPU_SAMPLE_S
        if not self.spinning:
            self.flusher_blocked_s = 0.0
            return
        step_s = u.step_s
        share = spin_share(u.n_cpu + self.n_spinners, self.n_cores)
        blocked = min(step_s, self.flusher_blocked_s)
        self.flusher_blocked_s -= blocked
        cores = u.cores
        runs = (share * step_s, share * (step_s - blocked)) if self.n_spinners == 2 else (share * step_s,)
        for run_s in runs:
            if run_s > 0.0:
                free = cores[0]
                heapq.heapreplace(cores, (t if free < t else free) + run_s)
                self.spin_cpu_s += run_s

    def stats(self) -> dict:
        """The run so far: the threads that spin, CPU samples taken and those that found them
        spinning, the CPU the spinning took, the simulated seconds, and the fsyncs whose waiters the
        flusher woke itself."""
        return {"spinners": "log_writer and log_flusher" if self.n_spinners == 2 else "log_writer",
                "cpu_samples": int(self.u.env.now // CPU_SAMPLE_S), "spin_samples": self.spin_samples,
                "spin_cpu_s": self.spin_cpu_s, "sim_s": float(self.u.env.now),
                "direct_notifies": self.direct_notifies}

    def stranded(self) -> int:
        """Threads still waiting for redo that is flushed (or written) with no notifier run to
        come: a lost wake-up (0 always; the engine's invariant checks call this)."""
        log = self.u.log
        n = 0
        if not self.notify_pending[NOTIFY_FLUSHED]:
            n += sum(1 for lsn, _ in self.waiting if lsn <= log.flushed_lsn)
        if not self.notify_pending[NOTIFY_WRITTEN]:
            n += sum(1 for lsn, _ in self.write_waiting if lsn <= log.written_lsn)
        return n


def wake_covered(users, waiting: list[tuple[int, int]], upto: int, t: float) -> list[tuple[int, int]]:
    """The threads of `waiting` ((lsn, thread), in the order they asked) whose lsn `upto` covers
    go on at t (UserThreads._durable); returns the others, in order."""
    still = []
    for lsn, th in waiting:
        if lsn <= upto:
            users._durable(th, t)
        else:
            still.append((lsn, th))
    return still


def tell_at(env, end: float, covered: int, waiters: list[tuple[int, object]]) -> list[tuple[int, object]]:
    """Fire the SimPy waiters ((lsn, event), in order) that `covered` satisfies at `end`; returns
    the others."""
    still = []
    for lsn, ev in waiters:
        if lsn <= covered:
            if end <= env.now:
                ev.succeed()
            else:
                env.timeout(end - env.now).callbacks.append(lambda _e, ev=ev: ev.succeed())
        else:
            still.append((lsn, ev))
    return still
