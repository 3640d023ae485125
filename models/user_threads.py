"""User threads (client sessions) running OLTP transactions, and group commit of the redo log.

Each of `users` threads loops: with innodb_thread_concurrency, a seat inside InnoDB
(models.srv_conc, srv_conc_enter_innodb; given up when the transaction asks to commit), then
log_free_check, then a transaction (buffer-pool accesses, reads of
missing pages with buf_LRU_get_free_block when no frame is free, the transaction's mini-transactions
advancing the LSN and dirtying pages, CPU on one of `cores`, a pass through a server-wide critical
section, entered in the order the threads finish their CPU work), then commit per
innodb_flush_log_at_trx_commit, then think time. With `workload.rate` the load is an open loop
instead (sysbench --rate): transactions arrive at exponential gaps, wait in a FIFO queue for an idle
thread, and their latency counts from the arrival, so a stall shows as a queue and late commits.

For speed the threads are not SimPy processes: their events (start, CPU start, latch, commit
request, log flush end) sit in one heap that a SimPy process drains every `step_s` of
simulated time, so a thread reacts to flushing and checkpoint state at most `step_s` late. What
follows an event at the same moment runs at once instead of through the heap: an idle log
writer starts when a commit asks for it, and the commits a log write makes durable go on when
it ends (a log write the SimPy side asks for, for a page write or a checkpoint, is still a heap
event, taken at the next drain).
Threads that find check_flush_or_checkpoint set run log_check_margins as a real SimPy process
(models.log_sys), since that path waits on flush batches.
log_free_check runs before every row operation, not once a transaction (row0ins.cc
row_ins_clust_index_entry / row_ins_sec_index_entry, row0upd.cc row_upd_clust_step /
row_upd_sec_step: one call per row and per index entry changed). The CPU phase is cut into the
profile's `log_free_checks_per_txn` pieces; once per step the flag is tested (log_close's test, as
the mtr commits in between would run it) and a thread whose next piece boundary fell in the step
stops there, hands its core to the thread queued for it, runs log_check_margins and then the
CPU it has left. Each thread
entering log_check_margins first runs log_close's test itself, as its own last mtr commit did just
before: a flag another thread cleared while the age is still past the limit is set again.

Mirrors (MySQL 5.6): log_free_check (include/log0log.ic), buf_LRU_get_free_block
(buf/buf0lru.cc: free list, LRU scan, from the third round a 100 ms sleep, then
buf_flush_single_page_from_LRU; Innodb_buffer_pool_wait_free per round), log_write_up_to with
group commit (log/log0log.cc), trx_commit_complete_for_mysql (flush_log_at_trx_commit 0/1/2; MariaDB
also 3: with the binary log, 1 flushes at prepare only, as the commit is ordered by the binlog
(trx->active_commit_ordered), and 3 flushes the commit's redo again after the binlog group commit;
without the binary log 3 is 1).
Page checksums (models.checksum): each page a thread reads is verified when the read completes
(buf_page_io_complete -> buf_page_is_corrupted), each page it writes alone is checksummed first.
The CPU work of a transaction's reads (the verification, and with buffered data files the copy out
of the OS page cache, models.os_page_cache) runs on one of `cores` with the transaction's CPU
phase, so it competes with the other threads' CPU; a read the page cache serves takes no device
time.
Redo: a transaction's mini-transactions append its redo when its pages are touched, except the
commit's own record (trx_commit: undo log state, rollback segment history), appended when the
thread asks to commit; so each commit with innodb_flush_log_at_trx_commit = 1 waits for a log
write that starts after its commit record, and log writes follow the commit groups.
TRX_COMMIT_REDO_BYTES is measured (MariaDB 10.11.19 here, 27 Nov 2026: the LSN rose by 42 bytes at
COMMIT of a transaction that updated, deleted and inserted rows, five times alike); every version
uses it.
Not modelled: waiting for a running LRU batch before the LRU scan (the thread scans at once).
Versions (models/versions.py): 5.7 and 8.0 sleep 10 ms instead of 100 ms (buf/buf0lru.cc); in
MariaDB 10.11 the user thread wakes the page cleaner and waits for a freed block, modelled here
as the same single-page write without a sleep (the cleaner's LRU write, done on the thread's behalf);
a MariaDB thread that leaves fewer than innodb_lru_scan_depth / 2 free blocks wakes a waiting
page cleaner (buf_LRU_get_free_block, page_cleaner_wakeup).
"""

from __future__ import annotations

import heapq
import itertools
import math
from array import array
from collections import deque

import numpy as np

from models import detached
from models.device import Draws
from models.log_sys import lsn_after, lsn_bounds
from models.log_threads import LogThreads, tell_at, wake_covered
from models.oltp import pages_per_txn_array
from models.run_queue import CPU_RUN_S, log_write_blocking_calls, run_queue_wait_s
from models.srv_conc import SrvConc

# Thread states, accounted in thread-seconds per tick. READ_WAIT: a transaction waits for the data
# pages it misses to be read (5.6 buf_read_page -> buf_read_page_low with sync = true: the thread
# waits in fil_io until the read completes; MariaDB 10.11 buf_read_page the same).
RUN, THINK, LOG_WAIT, MARGIN, FREE_WAIT, CONC_WAIT, BINLOG_WAIT, READ_WAIT = range(8)
# What a thread in log_check_margins waits for (models.log_sys.LogSys56.log_check_margins).
_MARGIN_STATE = {None: RUN, "log": LOG_WAIT, "margin": MARGIN}
STATE_NAMES = ("running", "think", "log write wait", "sync flush", "free-page wait", "innodb queue",
               "binlog wait", "page read wait")

# Event kinds.
_START, _CPU, _COMMIT_REQ, _RESUME, _FLUSH_START, _FLUSH_DONE, _LATCH, _ENTER, _BINLOG_START, \
    _BINLOG_DONE, _ARRIVAL, _CPU_RESUME = range(12)
_MAX_FREE_ROUNDS = 1000
LRU_SCAN_FREE_PAGES_MARIADB = 100   # buf_LRU_get_free_block's first scan: buf_LRU_scan_and_free_block(100)
TRX_COMMIT_REDO_BYTES = 42          # the commit's own redo record (module docstring: measured)
_INTERVAL_BUFFER = 1 << 18


class Gaps:
    """Running count, sum and sum of squares of the gaps between successive times."""

    __slots__ = ("last_s", "n", "sum_s", "sq_s2")

    def __init__(self) -> None:
        self.last_s, self.n, self.sum_s, self.sq_s2 = -1.0, 0, 0.0, 0.0

    def add(self, t: float) -> None:
        if self.last_s >= 0.0:
            gap = t - self.last_s
            self.n += 1
            self.sum_s += gap
            self.sq_s2 += gap * gap
        self.last_s = t

    def cv(self) -> float:
        """Coefficient of variation of the gaps (1 for a Poisson stream); NaN under two gaps."""
        if self.n < 2 or self.sum_s <= 0.0:
            return float("nan")
        mean = self.sum_s / self.n
        return math.sqrt(max(0.0, self.sq_s2 / self.n - mean * mean)) / mean


class LogWriter:
    """Group commit: one log write + fsync at a time (log_write_up_to with flush).

    The thread doing the write (the group's leader) blocks in each of its blocking system calls
    and, once the call returns, waits for a core (models.run_queue) when more threads than cores
    are in a CPU phase; the write's waiters are told after the last wait. A write that leaves
    commits waiting hands over to one of them, which was asleep and waits for a core too before
    it starts the next write (MySQL 5.6 log_write_up_to: the waiters wake on
    log_sys->no_flush_event and one becomes the writer; MariaDB 10.11 group_commit_lock::release
    wakes the next leader). Waits are taken from the state when the write starts."""

    def __init__(self, users: "UserThreads", blocking_calls: int = 1) -> None:
        self.u = users
        self.n_cores = len(users.cores)
        self.blocking_calls = blocking_calls
        self.core_waits = 0                # waits for a core taken (each blocking call, each hand-over)
        self.core_wait_s = 0.0             # and their sum
        self.busy = False
        self.waiting: list[tuple[int, int]] = []       # (lsn, thread)
        self.simpy_waiting: list[tuple[int, object]] = []

    def _core_wait_s(self, calls: int) -> float:
        """The leader's waits for a core after `calls` wake-ups now (models.run_queue), counted.
        Twice a log write: with no more threads in a CPU phase than cores the wait is 0.0, as
        run_queue_wait_s gives it, without the calls."""
        u = self.u
        cores = self.n_cores
        wait_s = calls * run_queue_wait_s(u.n_cpu, cores, u.cpu_run_s) if u.n_cpu > cores else 0.0
        self.core_waits += calls
        self.core_wait_s += wait_s
        return wait_s

    def mean_core_wait_s(self) -> float:
        """Mean wait for a core a wake-up so far; NaN before the first write."""
        return self.core_wait_s / self.core_waits if self.core_waits else float("nan")

    def request(self, t: float, lsn: int, thread: int) -> None:
        """A commit at t (inside UserThreads.advance) waits for the log up to lsn; an idle writer
        starts at once, as the _FLUSH_START event it would push for t would be the next one out."""
        self.waiting.append((lsn, thread))
        if not self.busy:
            self.busy = True
            self.start(t)

    def wait_flushed(self, lsn: int):
        """SimPy event fired once the log is flushed up to lsn (WAL before a page write, checkpoint)."""
        ev = self.u.env.event()
        if lsn <= self.u.log.flushed_lsn:
            return ev.succeed()
        self.simpy_waiting.append((lsn, ev))
        if not self.busy:
            self.busy = True
            self.u.push(self.u.env.now, _FLUSH_START, -1)
        return ev

    wait_written = wait_flushed

    def background_flush(self) -> None:
        """srv_master_thread's once-a-second log_buffer_sync_in_background."""
        if self.u.log.lsn > self.u.log.flushed_lsn and not self.busy:
            self.busy = True
            self.u.push(self.u.env.now, _FLUSH_START, -1)

    def start(self, t: float) -> None:
        u, log = self.u, self.u.log
        covered = log.lsn
        nbytes = covered - log.written_lsn
        end = u.fil.log_flush_done_s(t, max(nbytes, 512)) + self._core_wait_s(self.blocking_calls)
        log.written_lsn = covered
        u.counters.values["Innodb_os_log_written"] += nbytes
        if self.simpy_waiting:
            self.simpy_waiting = tell_at(u.env, end, covered, self.simpy_waiting)
        heapq.heappush(u.heap, (end, u._next_seq(), _FLUSH_DONE, covered))     # u.push, written out

    def done(self, t: float, covered: int) -> None:
        """The write covering `covered` is durable at t: its waiters commit, in the order they
        asked, and the next write starts if anyone waits (done at once: the _COMMIT and
        _FLUSH_START events this would push for t would be the next ones out, in this order)."""
        u = self.u
        if covered > u.log.flushed_lsn:
            u.log.flushed_lsn = covered
        waiting, self.waiting = self.waiting, []
        self.waiting = wake_covered(u, waiting, covered, t) + self.waiting
        if self.waiting or self.simpy_waiting:
            wake_s = self._core_wait_s(1)
            if wake_s > 0.0:
                u.push(t + wake_s, _FLUSH_START, -1)          # the next leader, once it has a core
            else:
                self.start(t)
        else:
            self.busy = False


class BinlogWriter:
    """The binary log's group commit (MYSQL_BIN_LOG::ordered_commit, 5.6+): transactions whose redo
    is durable queue; the leader writes the whole queue's events to the binlog in one append, and
    fsyncs it every `sync_binlog` groups (0: never), one group at a time; the group then commits.
    With binlog_group_commit_sync_delay (5.7.5+) the leader first waits that long, or until
    binlog_group_commit_sync_no_delay_count transactions have queued, so that more join the group
    (Stage_manager::wait_count_or_timeout in the sync stage; here before the group's append).
    MariaDB's binlog_commit_wait_count / _usec are the same wait (wait_for_sufficient_commits)."""

    def __init__(self, users: "UserThreads", bytes_per_txn: int, sync_every: int,
                 delay_s: float = 0.0, no_delay_count: int = 0) -> None:
        self.u = users
        self.bytes_per_txn = bytes_per_txn
        self.sync_every = sync_every
        self.delay_s = delay_s
        self.no_delay_count = no_delay_count
        self.busy = False
        self.waiting = False                 # the leader is in its delay before the next group
        self.token = 0                       # tells a stale delayed start from the current one
        self.queue: list[int] = []
        self.group: list[int] = []
        self.groups = 0

    def request(self, t: float, thread: int) -> None:
        self.queue.append(thread)
        if not self.busy:
            self.busy = True
            self._next(t)
        elif self.waiting and self._enough_queued():
            self._go(t)                      # no need to wait longer

    def _enough_queued(self) -> bool:
        """binlog_group_commit_sync_no_delay_count commits have queued (never, when it is 0)."""
        return 0 < self.no_delay_count <= len(self.queue)

    def _next(self, t: float) -> None:
        """The leader takes the next group now, or after the sync delay."""
        if self.delay_s > 0.0 and not self._enough_queued():
            self.waiting = True
            self.token += 1
            self.u.push(t + self.delay_s, _BINLOG_START, self.token)
        else:
            self._go(t)

    def _go(self, t: float) -> None:
        self.waiting = False
        self.token += 1
        self.u.push(t, _BINLOG_START, self.token)

    def start(self, t: float, token: int) -> None:
        if token != self.token:
            return                           # a delay cut short by the count
        self.waiting = False
        u = self.u
        self.group, self.queue = self.queue, []
        self.groups += 1
        nbytes = self.bytes_per_txn * len(self.group)
        sync = self.sync_every > 0 and self.groups % self.sync_every == 0
        end = u.fil.binlog_group_done_s(t, nbytes, sync)
        c = u.counters
        c.add("Binlog_commits", len(self.group))
        c.add("Binlog_group_commits")
        c.add("Binlog_bytes_written", nbytes)
        if sync:
            c.add("binlog_fsyncs")
        u.push(end, _BINLOG_DONE, -1)

    def done(self, t: float) -> None:
        u = self.u
        for th in self.group:
            u._binlog_committed(th, t)
        self.group = []
        if self.queue:
            self._next(t)
        else:
            self.busy = False


class _BatchShape:
    """What follows from a batch's page counts per transaction (read nr_a, modified nm_a): each
    transaction's page total (sizes), where the modified pages sit (modified_layout), and, per
    modified page, its transaction's count (m_rep) and index (owner_rep). With whole page counts
    every batch of n transactions has the same shape, so UserThreads keeps one per n."""

    __slots__ = ("sizes", "total", "n_mod", "mod_pos", "mod_rank", "m_rep", "owner_rep")

    def __init__(self, nr_a: np.ndarray, nm_a: np.ndarray) -> None:
        self.sizes = (nr_a + nm_a).tolist()
        self.total = sum(self.sizes)
        self.n_mod = int(nm_a.sum())
        self.mod_pos, self.mod_rank = modified_layout(nr_a, nm_a)
        self.m_rep = nm_a.repeat(nm_a)
        self.owner_rep = np.arange(len(nm_a)).repeat(nm_a)


class UserThreads:
    def __init__(self, env, *, n_users: int, cores: int, profile, sampler, pool, log, logsys, fil, counters,
                 settings, rng: np.random.Generator, think_s: float, tick_s: float, n_ticks: int,
                 step_s: float = 0.002, cpu_cv: float = 0.5, rate_tps: float = 0.0,
                 cpu_run_s: float = CPU_RUN_S) -> None:
        self.env = env
        self.n = n_users
        self.prof = profile
        # Batch shapes by size, when both page counts per transaction are whole (see _BatchShape).
        whole = all(float(x).is_integer() for x in (profile.pages_read_per_txn, profile.pages_modified_per_txn))
        self._whole_shapes: dict[int, _BatchShape] | None = {} if whole else None
        self.sampler = sampler
        self.pool = pool
        self.log = log
        self.logsys = logsys
        self.fil = fil
        self.counters = counters
        self.s = settings
        self.rng = rng
        self.think_s = think_s
        self.tick_s = tick_s
        self.n_ticks = n_ticks
        self.step_s = step_s
        self.free_block_sleep_s = 0.1
        self.commit_redo_bytes = min(TRX_COMMIT_REDO_BYTES, profile.redo_bytes_per_txn)
        # MariaDB 10.11+ buf_LRU_get_free_block: called after a thread takes a free block (the
        # page cleaner decides whether free blocks run short); None: never.
        self.free_wake = None
        self.cores = [0.0] * max(1, cores)
        self.cpu_run_s = cpu_run_s            # CPU a thread runs each time it has a core (models.run_queue)
        self.n_cpu = 0                        # threads in a CPU phase: running or queued for a core
        self.read_cpu_s = [0.0] * n_users      # CPU of the transaction's reads, spent in its CPU phase
        # log_free_check before each row operation: the CPU phase runs in this many pieces, and a
        # thread that meets check_flush_or_checkpoint between two of them waits there.
        self.mtr_checks = max(1, round(profile.log_free_checks_per_txn))
        self.in_cpu: dict[int, tuple[float, float]] = {}   # thread -> (begin, end) of its CPU piece run
        self.cpu_piece_s = [0.0] * n_users
        self.cpu_left_s = [-1.0] * n_users    # CPU still to run after a wait at a log_free_check
        # (thread, end, event kind) of CPU runs cut short or moved: how many such events to skip
        self.cancelled: dict[tuple[int, float, int], int] = {}
        self.queued_on: dict[float, int] = {}  # a core's booked end -> the thread queued to start then
        self.cpu_ready_s = [0.0] * n_users     # when the thread asked for a core
        self.checked_to_s = 0.0               # log_free_checks are evaluated up to this time
        # What follows a CPU run: the server-wide critical section, or the commit when there is none.
        self.cpu_end_kind = _LATCH if profile.serial_s_per_txn > 0.0 else _COMMIT_REQ
        self.latch_free_s = 0.0
        # innodb_thread_concurrency (models.srv_conc); None: no limit.
        self.conc = (SrvConc(settings.thread_concurrency, settings.thread_sleep_delay_us,
                             settings.adaptive_max_sleep_delay_us) if settings.thread_concurrency > 0 else None)
        access = settings.file_access()
        self.cpu_busy_s = 0.0                 # CPU the transactions have run (srv_update_cpu_usage's utime)
        # MySQL 8.0's log_writer / log_flusher threads (models.log_threads), or the committing
        # threads' own group commit (5.6-5.7, MariaDB, 8.0.22+ with innodb_log_writer_threads = OFF).
        self.log_threads = settings.log_writer_threads
        self.writer = (LogThreads(self, settings.log_spin_cpu_abs_lwm) if self.log_threads else
                       LogWriter(self, log_write_blocking_calls(access.log_write_through, access.log_direct)))
        # log_bin: commits go through the binary log's group commit once their redo is durable.
        self.binlog = (BinlogWriter(self, profile.binlog_bytes_per_txn, settings.sync_binlog,
                                    settings.binlog_group_commit_sync_delay_us * 1e-6,
                                    settings.binlog_group_commit_sync_no_delay_count)
                       if settings.log_bin else None)
        # MariaDB's innodb_flush_log_at_trx_commit = 3 with the binary log: per thread, whether
        # the log write it waits for is its commit's second flush (after the binlog group).
        self.commit_flush = [False] * n_users if settings.log_bin and settings.flush_log_at_trx_commit == 3 else None
        log.writer = self.writer
        self.heap: list = []
        self.until_s = 0.0                    # the drain in progress runs the events up to this time
        self.pending: list[tuple[float, int]] = []
        self._next_seq = itertools.count(1).__next__   # ties in time go in the order pushed
        # Per thread: state, since, transaction start, commit LSN.
        self.state = [THINK] * n_users
        self.since = [0.0] * n_users
        self.txn_start = [0.0] * n_users
        self.commit_lsn = [0] * n_users
        self.resumed = [False] * n_users
        self.acc = np.zeros((len(STATE_NAMES), n_ticks + 1))
        self._iv_state, self._iv_t0, self._iv_t1 = array("b"), array("d"), array("d")
        self.commit_t: list[float] = []
        self.commit_gaps = Gaps()              # between commit requests: how regular they come
        self.latency_s: list[float] = []
        sigma2 = math.log1p(cpu_cv * cpu_cv)
        self._cpu_mu, self._cpu_sigma = -0.5 * sigma2, math.sqrt(sigma2)
        # Drawn at construction, in this order (the run's random stream depends on it).
        self._u = Draws(lambda n: rng.random(n), prefill=True)
        self._cpu = Draws(lambda n: rng.lognormal(self._cpu_mu, self._cpu_sigma, n), prefill=True)
        self._think = Draws(lambda n: rng.exponential(1.0, n), prefill=True)
        # Open loop (workload.rate, as sysbench --rate): transactions arrive at exponential gaps
        # and wait in a FIFO queue for an idle thread; latency runs from the arrival.
        self.rate_tps = rate_tps
        self.queue: deque[float] = deque()       # arrival times of transactions no thread has taken
        self.idle: list[int] = []                 # threads with no transaction to run
        self.arrivals = 0
        if rate_tps > 0.0:
            self._gap = Draws(lambda n: rng.exponential(1.0 / rate_tps, n), prefill=True)
            self.idle = list(range(n_users - 1, -1, -1))
            self.push(self._gap.next(), _ARRIVAL, -1)
        else:
            for th in range(n_users):
                # Stagger the first transactions over one mean think time (or 10 ms).
                self.push(self._u.next() * max(think_s, 0.01), _START, th)

    # -- plumbing ----------------------------------------------------------------------------

    def push(self, t: float, kind: int, arg: int) -> None:
        heapq.heappush(self.heap, (t, self._next_seq(), kind, arg))

    def _account(self, th: int, t: float, new_state: int) -> None:
        t0 = self.since[th]
        if t > t0:
            self._iv_state.append(self.state[th])
            self._iv_t0.append(t0)
            self._iv_t1.append(t)
            self.since[th] = t
            if len(self._iv_t0) >= _INTERVAL_BUFFER:
                self._bin_intervals()
        self.state[th] = new_state

    def _acc_interval(self, state: int, t0: float, t1: float) -> None:
        self._iv_state.append(state)
        self._iv_t0.append(t0)
        self._iv_t1.append(t1)

    def _bin_intervals(self) -> None:
        """Add the buffered (state, t0, t1) intervals to the per-tick thread-seconds."""
        if not self._iv_t0:
            return
        states = np.frombuffer(self._iv_state, dtype=np.int8)
        t0 = np.frombuffer(self._iv_t0, dtype=np.float64)
        t1 = np.frombuffer(self._iv_t1, dtype=np.float64)
        for k in np.unique(states).tolist():
            sel = states == k
            self.acc[k] += thread_seconds_per_tick(t0[sel], t1[sel], self.tick_s, self.n_ticks)
        self._iv_state, self._iv_t0, self._iv_t1 = array("b"), array("d"), array("d")

    # -- the SimPy side -------------------------------------------------------------------------

    def run(self):
        """SimPy process: drain the heap up to the current time every step_s."""
        env = self.env
        writer_step = self.writer.step if self.log_threads else None
        while True:
            yield env.timeout(self.step_s)
            self.advance(env.now)
            if writer_step is not None:
                writer_step(env.now)

    def advance(self, until: float) -> None:
        """Process every event up to `until`; transaction starts are gathered and run as a batch."""
        heap = self.heap
        pop = heapq.heappop
        self.until_s = until
        # A commit request that follows the latch comes after the CPU run's end (the _LATCH
        # event), which is the event a cut or a move cancels.
        after_latch = self.cpu_end_kind == _LATCH
        while True:
            while heap and heap[0][0] <= until:
                t, _, kind, arg = pop(heap)
                # Most frequent kinds first (one commit request, latch and log write done a
                # transaction or so).
                if kind == _COMMIT_REQ:
                    if after_latch or self._cpu_run_over(arg, t, kind):
                        self._commit_req(arg, t)
                elif kind == _LATCH:
                    if self._cpu_run_over(arg, t, kind):
                        self._latch(arg, t)
                elif kind == _FLUSH_DONE:
                    self.writer.done(t, arg)
                elif kind == _START:
                    self._arrive(arg, t)
                elif kind == _CPU:                          # its page reads are done
                    self._account(arg, t, RUN)
                    self._cpu_phase(arg, t)
                elif kind == _RESUME:
                    self._account(arg, t, RUN)
                    self.resumed[arg] = True
                    self.pending.append((t, arg))
                elif kind == _CPU_RESUME:
                    self._account(arg, t, RUN)
                    self._cpu_phase(arg, t)
                elif kind == _ENTER:
                    self.conc.woke(arg)
                    self._enter(arg, t)
                elif kind == _BINLOG_START:
                    self.binlog.start(t, arg)
                elif kind == _BINLOG_DONE:
                    self.binlog.done(t)
                elif kind == _FLUSH_START:
                    self.writer.start(t)
                else:
                    self._arrival(t)
            if not self.pending:
                if self.in_cpu:
                    self._mtr_free_checks(until)
                self.checked_to_s = until
                return
            self._start_batch()

    def _mtr_free_checks(self, until: float) -> None:
        """log_free_check at the row operations inside CPU phases, from checked_to_s to until.

        The server commits mini-transactions all through a transaction, and each row operation
        (row_ins_clust_index_entry, row_ins_sec_index_entry, row_upd_clust_step, row_upd_sec_step)
        calls log_free_check first; a thread that finds check_flush_or_checkpoint set there runs
        log_check_margins before going on. Here the flag is evaluated once per step (log_close's
        test, as the mtr commits between would make it), and each thread whose next check point
        fell in the step stops at that point."""
        self.logsys.log_close_check()
        if not self.log.check_flush_or_checkpoint:
            return
        lo = self.checked_to_s
        todo = list(self.in_cpu)
        i = 0
        while i < len(todo):
            th = todo[i]
            i += 1
            entry = self.in_cpu.get(th)
            if entry is None:
                continue                                   # cut earlier in this step
            begin, end = entry
            if begin >= until:
                continue                                   # still queued for a core
            piece = self.cpu_piece_s[th]
            k = 1 if lo <= begin else math.floor((lo - begin) / piece) + 1
            tc = begin + k * piece
            if tc <= until and tc < end - 1e-12:
                # The threads queued behind th start earlier on its core; a check point of theirs
                # may now fall in this step, so they are looked at (again).
                todo.extend(self._cut_cpu(th, tc, end))

    def _skip(self, th: int, t: float, kind: int) -> bool:
        """True for the event of a CPU run that was cut short or moved (and forget one of them)."""
        key = (th, t, kind)
        n = self.cancelled.get(key)
        if not n:
            return False
        if n == 1:
            del self.cancelled[key]
        else:
            self.cancelled[key] = n - 1
        return True

    def _cancel(self, th: int, t: float, kind: int) -> None:
        key = (th, t, kind)
        self.cancelled[key] = self.cancelled.get(key, 0) + 1

    def _cpu_run_over(self, th: int, t: float, kind: int) -> bool:
        """A CPU run's end event (cpu_end_kind): False for the end of a run that was cut short or
        moved, which is skipped; else the run is over."""
        if self.cancelled and self._skip(th, t, kind):
            return False
        self.n_cpu -= 1
        if self.in_cpu:
            self._cpu_done(th)
        return True

    def _cpu_done(self, th: int) -> None:
        """Thread th's CPU run is over (or cut): it no longer holds or waits for a core."""
        entry = self.in_cpu.pop(th, None)
        if entry is not None and self.queued_on.get(entry[0]) == th:
            del self.queued_on[entry[0]]

    def _cut_cpu(self, th: int, tc: float, end: float) -> list[int]:
        """Thread th stops its CPU phase at a log_free_check at tc and runs log_check_margins;
        returns the threads whose CPU run moved earlier.

        Its core is free from tc: the thread queued to start on it at `end` starts as soon as it
        is free and ready instead, and so on down the queue (the scheduler gives a blocked
        thread's core to the next runnable one); the last booking moves in the cores heap."""
        self._cpu_done(th)
        self.n_cpu -= 1
        free, old = tc, end
        end_kind = self.cpu_end_kind
        moved: list[int] = []
        while True:
            nxt = self.queued_on.pop(old, None)
            if nxt is None:
                cores = self.cores
                try:
                    cores[cores.index(old)] = free
                    heapq.heapify(cores)
                except ValueError:                         # taken by a thread not in a CPU phase
                    pass
                break
            b, e = self.in_cpu[nxt]
            nb = max(free, self.cpu_ready_s[nxt])
            ne = e - (b - nb)
            self.in_cpu[nxt] = (nb, ne)
            if nb > self.cpu_ready_s[nxt]:
                self.queued_on[nb] = nxt
            self._cancel(nxt, e, end_kind)
            self.push(ne, end_kind, nxt)
            moved.append(nxt)
            free, old = ne, e
        self.cpu_left_s[th] = end - tc
        self._cancel(th, end, end_kind)
        self._account(th, tc, MARGIN)
        detached.start(self.env, self._margin(th, _CPU_RESUME))
        return moved

    def _margin(self, th: int, resume: int = _RESUME):
        first = True

        def on_wait(kind: str | None) -> None:
            nonlocal first
            if first:           # from the thread's arrival at log_free_check (up to step_s ago)
                first = False
                self.state[th] = _MARGIN_STATE[kind]
            else:
                self._account(th, self.env.now, _MARGIN_STATE[kind])
        # The thread's own last mtr commit ran log_close's test just before this log_free_check,
        # so a flag another thread cleared meanwhile is set again while the age is past the limit.
        self.logsys.log_close_check()
        yield from self.logsys.log_check_margins(on_wait)
        self.push(self.env.now, resume, th)

    # -- a transaction ------------------------------------------------------------------------

    def _start_batch(self, pend: list | None = None) -> None:
        """Start every pending transaction (sorted by time) with vectorised buffer-pool work."""
        if pend is None:
            pend = self.pending
            self.pending = []
            pend.sort()
        log = self.log
        self.logsys.log_close_check()
        if log.check_flush_or_checkpoint:                      # log_free_check
            for t, th in pend:
                if not self.resumed[th]:
                    self.txn_start[th] = t
                self._account(th, t, MARGIN)
                detached.start(self.env, self._margin(th))
            return
        prof, pool, c = self.prof, self.pool, self.counters
        n = len(pend)
        u = self.rng.random(2 * n)
        shape = self._whole_shapes.get(n) if self._whole_shapes is not None else None
        if shape is None:
            shape = _BatchShape(pages_per_txn_array(prof.pages_read_per_txn, u[:n]),
                                pages_per_txn_array(prof.pages_modified_per_txn, u[n:]))
            if self._whole_shapes is not None:
                # Whole means: every transaction has the same counts, so a batch's shape depends
                # only on n (the draws in u are still taken: the random stream stays the same).
                self._whole_shapes[n] = shape
        sizes, total, n_mod = shape.sizes, shape.total, shape.n_mod
        mod_pos, mod_rank = shape.mod_pos, shape.mod_rank
        pages = self.sampler.draw(total)
        c.add("Innodb_buffer_pool_read_requests", total)
        t_last = pend[-1][0]
        ready = [t for t, _ in pend]
        waited = [0.0] * n
        cpu_extra = [0.0] * n
        modify = self.sampler.modify
        if modify is not None and n_mod:
            # Modifications drawn from their own page weights (access = "sysbench").
            pages = pages.copy()
            pages[mod_pos] = modify.draw(len(mod_pos))
        pinned: list[int] = []
        miss_pos = np.flatnonzero(pool.where[pages] == 0)
        if len(miss_pos):
            to_pin: set[int] = set()
            if n_mod:
                # The pages to be modified are buffer-fixed from their read (or now, if resident)
                # until they are dirtied below: in the server the mini-transaction that reads a page
                # modifies it under the same fix, so no other read of the batch can evict it between
                # (a page only read was used when it was read).
                mod_pages = np.unique(pages[mod_pos])
                if n > 1 and len(mod_pages) > pool.frames_per_instance // 4:
                    self._start_batch(pend[: n // 2])           # too many to fix at once: halves
                    self._start_batch(pend[n // 2:])
                    return
                resident = pool.where[mod_pages] != 0
                fix_now = mod_pages[resident & (pool.io_fix[mod_pages] == 0)]
                pool.io_fix[fix_now] = 1
                pinned = fix_now.tolist()
                to_pin = set(mod_pages[~resident].tolist())
            starts = np.cumsum([0] + sizes[:-1])
            owner = np.searchsorted(starts, miss_pos, side="right") - 1
            miss_pages = pages[miss_pos]
            # Where each missing page occurs first, in batch order (np.unique's return_index,
            # sorted; a set is cheaper than its sort for the few misses of a batch).
            seen: set[int] = set()
            first = [k for k, p in enumerate(miss_pages.tolist()) if not (p in seen or seen.add(p))]
            inst_of = pool.inst_of
            counters = pool.inst
            read_done = self.fil.read_done_s
            os_cache = self.fil.os_cache
            # buf_page_is_corrupted, plus the copy out of the page cache for buffered data files.
            read_cpu_s = self.s.page_checksum_s + (self.fil.copy_s if os_cache is not None else 0.0)
            hits = 0
            add = pool.add_read_page
            free_wake = self.free_wake
            n_read = 0
            touched = set()
            io_fix = pool.io_fix
            deferred_at = None
            firsts = miss_pages[first]
            for page, j, i in zip(firsts.tolist(), owner[first].tolist(), inst_of[firsts].tolist()):
                tr = ready[j]
                c_i = counters[i]
                if c_i.free > 0:                                # buf_LRU_get_free_only
                    c_i.free -= 1
                    tf = tr
                    if free_wake is not None:
                        free_wake()
                else:
                    tf = self._get_free_block(i, tr)
                    if tf is None:                              # every frame fixed: the batch waits
                        deferred_at = tr
                        break
                    if tf > tr:
                        self._acc_interval(FREE_WAIT, tr, tf)
                        waited[j] += tf - tr
                if os_cache is not None and os_cache.read(page):
                    tr = tf                                     # served by the OS page cache
                    hits += 1
                else:
                    tr = read_done(tf)
                cpu_extra[j] += read_cpu_s
                add(page, tr, False)
                if page in to_pin:
                    io_fix[page] = 1
                    pinned.append(page)
                touched.add(i)
                ready[j] = tr
                n_read += 1
            pool.adjust_old(touched)
            c.add("Innodb_buffer_pool_reads", n_read)
            c.add("Innodb_data_reads", n_read)
            if hits:
                c.add("os_page_cache_read_hits", hits)
            if deferred_at is not None:
                pool.unfix(pinned)
                self._defer_batch(pend, deferred_at)
                return
        if pool.lru_order_matters:
            pool.touch(pages, t_last)                          # LRU upkeep of the hits
        # The transactions' mini-transactions, in start order: redo appended, pages dirtied.
        bounds = lsn_bounds(log.lsn, prof.redo_bytes_per_txn - self.commit_redo_bytes, n)
        commit_lsn = self.commit_lsn
        for j in range(n):
            commit_lsn[pend[j][1]] = bounds[j + 1]
        log.lsn = bounds[n]
        if n_mod:
            # Page k of transaction j's modified pages gets start_j + k * span_j // m_j.
            b = np.asarray(bounds, dtype=np.int64)
            starts_rep, ends_rep = b[:-1][shape.owner_rep], b[1:][shape.owner_rep]
            mod_lsn = starts_rep + (mod_rank * (ends_rep - starts_rep)) // shape.m_rep
            pool.modify_lsns(pages[mod_pos], mod_lsn, ends_rep)
        if pinned:
            pool.io_fix[pinned] = 0                            # dirty now: the fix is released
        self.logsys.log_close()
        self.logsys.check_capacity()
        account, resumed, read_cpu_s, cpu_phase = self._account, self.resumed, self.read_cpu_s, self._cpu_phase
        for j in range(n):
            t, th = pend[j]
            # Until its reads are done the thread waits for them (the free-page waits among them are
            # accounted already, so the wait is counted from t plus those).
            account(th, t, READ_WAIT if ready[j] > t else RUN)
            if waited[j]:
                self.since[th] = t + waited[j]     # the free-page wait is accounted already
            if not resumed[th]:
                self.txn_start[th] = t             # a resumed thread keeps its start (latency includes the wait)
            resumed[th] = False
            read_cpu_s[th] = cpu_extra[j]
            if ready[j] > t:
                self.push(ready[j], _CPU, th)
            else:
                cpu_phase(th, t)
        if self.log_threads:
            self.writer.redo_ready(t_last)                 # log_writer writes the batch's redo

    def _defer_batch(self, pend: list, t: float) -> None:
        """No frame can be freed at t: every transaction of the batch sleeps (buf_LRU_get_free_block's
        os_thread_sleep) and starts again; the pages read so far stay in the pool, clean."""
        retry = t + max(self.free_block_sleep_s, self.step_s)
        for t0, th in pend:
            if not self.resumed[th]:
                self.txn_start[th] = t0            # the retry keeps the start: latency includes the wait
            self._account(th, t0, FREE_WAIT)
            self.push(max(retry, t0 + self.step_s), _RESUME, th)

    def _cpu_phase(self, th: int, t: float) -> None:
        self.n_cpu += 1
        cores = self.cores
        free = cores[0]                                    # the core that frees first
        begin = t if free < t else free
        left = self.cpu_left_s[th]
        if left < 0.0:
            work = self.prof.cpu_s_per_txn * self._cpu.next() + self.read_cpu_s[th]
            self.cpu_piece_s[th] = work / self.mtr_checks
        else:                                              # the rest, after a log_free_check wait
            work = left
            self.cpu_left_s[th] = -1.0
        end = begin + work
        self.cpu_busy_s += work
        heapq.heapreplace(cores, end)
        if self.mtr_checks > 1:
            self.in_cpu[th] = (begin, end)
            self.cpu_ready_s[th] = t
            if begin > t:
                self.queued_on[begin] = th
        heapq.heappush(self.heap, (end, self._next_seq(), self.cpu_end_kind, th))     # push, written out

    def _latch(self, th: int, t: float) -> None:
        """The server-wide critical section, entered in the order the threads reach it."""
        begin = t if self.latch_free_s < t else self.latch_free_s
        end = self.latch_free_s = begin + self.prof.serial_s_per_txn
        heapq.heappush(self.heap, (end, self._next_seq(), _COMMIT_REQ, th))        # push, written out

    def _commit_req(self, th: int, t: float) -> None:
        self.commit_gaps.add(t)
        if self.conc is not None:
            self.conc.exit()                                # the statement ended: out of InnoDB
        mode = self.s.flush_log_at_trx_commit
        log = self.log
        if self.commit_redo_bytes:
            # trx_commit's mini-transaction: the commit record goes after everything logged so far.
            lsn = log.lsn = lsn_after(log.lsn, self.commit_redo_bytes)
            self.commit_lsn[th] = lsn
            logsys = self.logsys
            logsys.log_close()
            logsys.check_capacity()
        else:
            lsn = self.commit_lsn[th]
        if (mode == 1 or mode == 3) and lsn > log.flushed_lsn:
            self._account(th, t, LOG_WAIT)
            self.writer.request(t, lsn, th)
            return
        if mode == 2 and lsn > log.written_lsn:
            if self.log_threads:                            # log_wait_for_write
                self._account(th, t, LOG_WAIT)
                self.writer.request_write(t, lsn, th)
                return
            log.written_lsn = lsn                           # write() to the OS, no fsync
            self.fil.count_log_write()
        elif self.log_threads:
            self.writer.redo_ready(t)                       # the commit record: the writer writes it
        self._durable(th, t)

    def _durable(self, th: int, t: float) -> None:
        """The transaction's redo is as durable as innodb_flush_log_at_trx_commit makes it: with
        the binary log it now queues for the binlog group commit, else it commits."""
        if self.binlog is None:
            self._commit(th, t)
            return
        if self.commit_flush is not None and self.commit_flush[th]:
            self.commit_flush[th] = False              # the second flush (mode 3) is done
            self._commit(th, t)
            return
        self._account(th, t, BINLOG_WAIT)
        self.binlog.request(t, th)

    def _binlog_committed(self, th: int, t: float) -> None:
        """The binlog group holding th is written (and synced): InnoDB's commit. MariaDB's
        innodb_flush_log_at_trx_commit = 3 writes the commit's redo record (the prepare wrote
        one of the same kind before the binlog) and flushes the log to it; 1 does not."""
        if self.commit_flush is None:
            self._commit(th, t)
            return
        log = self.log
        lsn = log.lsn = lsn_after(log.lsn, self.commit_redo_bytes)
        self.logsys.log_close()
        self.logsys.check_capacity()
        if lsn <= log.flushed_lsn:
            self._commit(th, t)
            return
        self.commit_flush[th] = True
        self._account(th, t, LOG_WAIT)
        self.writer.request(t, lsn, th)

    def _commit(self, th: int, t: float) -> None:
        self.counters.values["commits"] += 1
        self.commit_t.append(t)
        self.latency_s.append(t - self.txn_start[th])
        if self.rate_tps > 0.0:
            if self.queue:
                self._take(th, self.queue.popleft(), t)
            else:
                self._account(th, t, THINK)
                self.idle.append(th)
        elif self.think_s > 0.0:
            self._account(th, t, THINK)
            self.push(t + self.think_s * self._think.next(), _START, th)
        else:
            self._arrive(th, t)

    # -- open loop (workload.rate) ------------------------------------------------------------------

    def _arrival(self, t: float) -> None:
        """A transaction arrives: an idle thread takes it, else it queues."""
        self.arrivals += 1
        self.push(t + self._gap.next(), _ARRIVAL, -1)
        if self.idle:
            self._take(self.idle.pop(), t, t)
        else:
            self.queue.append(t)

    def _take(self, th: int, arrived: float, t: float) -> None:
        """Thread th starts the transaction that arrived at `arrived`: its latency counts from then."""
        self.txn_start[th] = arrived
        self.resumed[th] = True
        self._arrive(th, t)

    @property
    def queued(self) -> int:
        return len(self.queue)

    # -- innodb_thread_concurrency ----------------------------------------------------------------

    def _arrive(self, th: int, t: float) -> None:
        """A transaction begins: into InnoDB (srv_conc_enter_innodb when innodb_thread_concurrency
        is set), then its log_free_check and pages with the batch."""
        if self.conc is None:
            self.pending.append((t, th))
        else:
            self._enter(th, t)

    def _enter(self, th: int, t: float) -> None:
        conc = self.conc
        if conc.try_enter(th):
            if self.state[th] == CONC_WAIT:
                self._account(th, t, RUN)
                self.resumed[th] = True            # keeps its start: latency includes the wait
            self.pending.append((t, th))
            return
        if self.state[th] != CONC_WAIT:
            self._account(th, t, CONC_WAIT)
            if not self.resumed[th]:               # an open-loop transaction keeps its arrival
                self.txn_start[th] = t
        self.push(t + conc.sleep_s(), _ENTER, th)

    # -- buf_LRU_get_free_block -------------------------------------------------------------------

    def _get_free_block(self, i: int, t: float) -> float | None:
        """A frame in instance i for a page read at t; returns when the frame is available.

        None when no page of the instance can be freed now: every one is fixed, by a write in
        flight or by the batch's own transactions (the server's thread sleeps and retries until
        writes complete; the caller defers the batch, as those completions are simulated events).
        """
        pool, c, s = self.pool, self.counters, self.s
        if self.free_wake is not None:
            return self._get_free_block_mariadb(i, t)
        rounds = 0
        while True:
            if pool.take_free_frame(i):
                return t
            scan = s.lru_scan_depth if rounds == 0 else pool.inst[i].lru_len
            evicted, _ = pool.lru_tail_scan(i, max_scan=scan, evict_clean=True, want_dirty=0, free_target=1,
                                            min_len=0)
            if evicted and pool.take_free_frame(i):
                return t
            if rounds > 1:
                t += self.free_block_sleep_s                # 5.6 os_thread_sleep(100000); 5.7+ 10 ms
            _, dirty = pool.lru_tail_scan(i, max_scan=pool.inst[i].lru_len, evict_clean=False, want_dirty=1,
                                          min_len=0)
            if dirty:                                       # buf_flush_single_page_from_LRU
                page = dirty[0]
                newest = int(pool.newest_lsn[page])
                if newest > self.log.flushed_lsn:
                    # buf_flush_write_block_low: log_write_up_to(newest, flush) first (WAL)
                    t = self.fil.log_flush_done_s(t, newest - self.log.flushed_lsn)
                    c.add("Innodb_os_log_written", max(0, newest - self.log.written_lsn))
                    self.log.flushed_lsn = self.log.written_lsn = max(self.log.written_lsn, newest)
                    if self.log_threads:
                        self.writer.flushed_elsewhere(t)
                t += self.s.page_checksum_s                # buf_flush_init_for_writing in this thread
                t = self.fil.sync_page_write_done_s(t, self.s.doublewrite)
                if self.fil.os_cache is not None:
                    self.fil.os_cache.write(page)
                pool.write_complete(page, self.log.lsn)
                pool.evict_if_clean(page)
                c.add("buffer_LRU_single_flush_pages")
                c.add("Innodb_pages_written")
                if self.s.doublewrite:
                    c.add("Innodb_dblwr_pages_written")
                    c.add("Innodb_dblwr_writes")
            c.add("Innodb_buffer_pool_wait_free")
            if not dirty and rounds > 0:
                return None                                 # nothing clean, nothing writable: all fixed
            rounds += 1
            if rounds > _MAX_FREE_ROUNDS:
                raise RuntimeError(f"buffer pool instance {i}: no free block after {rounds} rounds "
                                   "(every page is being written)")

    def _get_free_block_mariadb(self, i: int, t: float) -> float | None:
        """MariaDB 10.6+ buf_LRU_get_free_block with the free list empty: while buf_pool.try_LRU_scan
        holds, free a clean block from the last 100 of the LRU list (buf_LRU_scan_and_free_block);
        failing that, clear try_LRU_scan, wake the page cleaner (page_cleaner_wakeup(true)) and wait
        for it to free blocks (buf_pool.done_free). A user thread never writes a page here (10.6
        removed buf_flush_single_page_from_LRU). None: the batch waits (the caller retries it)."""
        pool = self.pool
        if pool.try_lru_scan:
            evicted, _ = pool.lru_tail_scan(i, max_scan=min(LRU_SCAN_FREE_PAGES_MARIADB, pool.inst[i].lru_len),
                                            evict_clean=True, want_dirty=0, free_target=1, min_len=0)
            if evicted and pool.take_free_frame(i):
                return t
            pool.try_lru_scan = False
        self.counters.add("Innodb_buffer_pool_wait_free")     # buf_pool.stat.LRU_waits
        self.free_wake()
        return None

    def finish(self, t: float) -> None:
        """Account every thread's current state up to t (end of run)."""
        for th in range(self.n):
            self._account(th, t, self.state[th])
        self._bin_intervals()


def modified_layout(n_read: np.ndarray, n_modified: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the modified pages sit in a batch's page array (transaction j's pages are its
    n_read[j] read-only pages, then its n_modified[j] modified ones), ascending, and each one's
    rank k = 0..n_modified[j]-1 within its transaction."""
    sizes = n_read + n_modified
    starts = sizes.cumsum() - sizes
    first_mod = n_modified.cumsum() - n_modified
    rank = np.arange(int(n_modified.sum()), dtype=np.int64) - first_mod.repeat(n_modified)
    return (starts + n_read).repeat(n_modified) + rank, rank


def thread_seconds_per_tick(t0: np.ndarray, t1: np.ndarray, tick_s: float, n_ticks: int) -> np.ndarray:
    """Time covered by the intervals [t0, t1) in each tick [k tick, (k+1) tick), k < n_ticks, and
    after the last tick in entry n_ticks. Uses F(T) = sum min(T, t1) - sum min(T, t0)."""
    edges = np.arange(1, n_ticks + 1, dtype=np.float64) * tick_s

    def sum_min(a: np.ndarray) -> np.ndarray:          # a sorted
        csum = np.concatenate([[0.0], np.cumsum(a)])
        idx = np.searchsorted(a, edges, side="left")
        return csum[idx] + edges * (len(a) - idx)

    s0, s1 = np.sort(t0), np.sort(t1)
    cum = sum_min(s1) - sum_min(s0)
    total = float(np.sum(t1 - t0))
    out = np.diff(np.concatenate([[0.0], cum, [total]]))
    # The differences of F cancel to ~1e-11 rather than 0 in ticks no interval touches; those
    # ticks are set to exactly 0 (an interval touches [lo, hi) iff t0 < hi and t1 > lo).
    lo = np.concatenate([[0.0], edges])
    hi = np.concatenate([edges, [np.inf]])
    touching = np.searchsorted(s0, hi, side="left") - np.searchsorted(s1, lo, side="right")
    out[touching <= 0] = 0.0
    return np.maximum(out, 0.0)
