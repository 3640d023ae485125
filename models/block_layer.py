"""The Linux block layer between a process's submission and the device (legacy single-queue path).

Three stages, as in Linux 4.x:

* request allocation (block/blk-core.c get_request, __get_request, freed_request): at most
  `nr_requests` (128) sync requests allocated; a process that finds the list full sleeps on an
  exclusive FIFO wait queue, one sleeper is woken per freed request, and a woken process becomes a
  "batcher" (ioc_set_batching) that may allocate BLK_BATCH_REQ (32) requests within BLK_BATCH_TIME
  (20 ms) past the limit, up to 3/2 x nr_requests;
* the elevator: `none` (noop: requests leave in arrival order) or `cfq` (block/cfq-iosched.c);
* the driver's tag depth (`queue_depth`, 32 for a SATA disk's NCQ): at most that many requests on
  the device; the elevator is asked for the next request whenever one completes or is inserted
  (scsi_request_fn through __elv_next_request).

CFQ is modelled for what a database server or fio puts on a flash device: one cgroup, the
best-effort class at priority 4 (no ionice), sync requests only (reads, and O_DIRECT writes, which
Linux marks REQ_SYNC), random offsets. Every queue is then seeky and lives on the sync-noidle
service tree, so there are no close cooperators and no idling on a queue; `slice_idle_s` is 0 as
cfq_registered_queue sets it for a non-rotational queue (Linux 4.12+; earlier kernels keep 8 ms).
Functions mirrored: cfq_service_tree_add (rb_key = now + cfq_slice_offset - slice_resid),
cfq_select_queue (keep the active queue while it has requests and slice; expire it when empty),
cfq_may_dispatch (cfq_quantum / 2 = 4 dispatched at the start of a slice, cfq_quantum = 8 once the
slice is set, no limit for the only busy queue), cfq_completed_request (the slice starts at the
queue's first completion: cfq_set_prio_slice; a used slice expires), cfq_scaled_cfqq_slice with
low_latency (slice_sync 100 ms scaled by target_latency 300 ms over the smoothed busy-queue count,
cfq_group_get_avg_queues), cfq_should_preempt for sync-noidle queues, cfq_check_fifo (fifo_expire
125 ms, checked once a slice). Within a queue requests leave in arrival order (CFQ sorts them by
sector; for random offsets that order is as good as random and keeps waits within a queue short).

Pure state machine: times are passed in, nothing here schedules; models.host_io drives it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from models.errors import InputError

ELEVATORS = ("none", "cfq")

# block/blk-core.c, include/linux/blkdev.h (Linux 4.x)
NR_REQUESTS = 128                 # BLKDEV_MAX_RQ
NR_REQUESTS_RANGE = (4, 1 << 20)
QUEUE_DEPTH_SATA = 32             # NCQ's 32 commands
QUEUE_DEPTH_RANGE = (1, 65536)
BLK_BATCH_REQ = 32
BLK_BATCH_TIME_S = 0.020          # HZ / 50
# block/cfq-iosched.c tunables (Linux 4.x)
CFQ_QUANTUM = 8
CFQ_FIFO_EXPIRE_SYNC_S = 0.125    # NSEC_PER_SEC / 8
CFQ_SLICE_SYNC_S = 0.100          # NSEC_PER_SEC / 10
CFQ_TARGET_LATENCY_S = 0.300
CFQ_SLICE_SCALE = 5
CFQ_HIST_DIVISOR = 4
IOPRIO_NORM = 4


@dataclass(frozen=True)
class BlockLayerConfig:
    """What the host puts between submitter and device. `slice_idle_s` enters only the slice floor
    and cfq_slice_used_soon; idling on a queue (what slice_idle buys on a rotational disk) is not
    modelled, so leave it 0 unless checking those two rules."""

    elevator: str = "none"
    queue_depth: int = QUEUE_DEPTH_SATA
    nr_requests: int = NR_REQUESTS
    slice_idle_s: float = 0.0

    def check(self, src: str, names: dict[str, str] | None = None) -> "BlockLayerConfig":
        """The config itself, or one InputError naming the field (as `names` calls it, e.g. a flag)."""
        def name(field_name: str) -> str:
            return (names or {}).get(field_name, field_name)

        if self.elevator not in ELEVATORS:
            raise InputError(src, name("elevator"), f"{self.elevator!r} is not known", ", ".join(ELEVATORS))
        for field_name, (lo, hi) in (("queue_depth", QUEUE_DEPTH_RANGE), ("nr_requests", NR_REQUESTS_RANGE)):
            value = getattr(self, field_name)
            if not lo <= value <= hi:
                raise InputError(src, name(field_name), f"{value!r} is out of range", f"{lo} to {hi}")
        if not (0.0 <= self.slice_idle_s <= 1.0):
            raise InputError(src, name("slice_idle_s"), f"{self.slice_idle_s!r} is out of range", "0 to 1")
        return self


@dataclass(eq=False)
class Request:
    """One I/O of one submitter (pid); `ready_s` is when the submitter began to submit it."""

    pid: int
    op: str
    size: int
    ready_s: float
    fifo_time_s: float = 0.0
    payload: object = None


def cfq_prio_slice(sync: bool, prio: int) -> float:
    """cfq_prio_slice: the base slice of a priority level (sync 100 ms at prio 4, 180 ms at prio 0)."""
    base = CFQ_SLICE_SYNC_S if sync else CFQ_SLICE_SYNC_S * 0.4
    return base + base / CFQ_SLICE_SCALE * (IOPRIO_NORM - prio)


def cfq_scaled_slice(busy_queues_avg: int, slice_idle_s: float, prio: int = IOPRIO_NORM) -> float:
    """cfq_scaled_cfqq_slice with low_latency on, one cgroup: the slice shrinks so that the busy
    queues share target_latency, down to 2 x slice_idle scaled by the priority."""
    slc = cfq_prio_slice(True, prio)
    expect = CFQ_SLICE_SYNC_S * busy_queues_avg
    if expect > CFQ_TARGET_LATENCY_S:
        low = min(slc, 2.0 * slice_idle_s * slc / CFQ_SLICE_SYNC_S)
        slc = max(slc * CFQ_TARGET_LATENCY_S / expect, low)
    return slc


def cfq_avg_queues(avg: int, busy: int) -> int:
    """cfq_group_get_avg_queues: rises to the busy count at once, decays by a quarter a call."""
    lo, hi = min(avg, busy), max(avg, busy)
    return ((CFQ_HIST_DIVISOR - 1) * hi + lo + CFQ_HIST_DIVISOR // 2) // CFQ_HIST_DIVISOR


@dataclass(eq=False)
class CfqQueue:
    pid: int
    queued: deque = field(default_factory=deque)
    dispatched: int = 0
    on_rr: bool = False
    on_tree: bool = False
    rb_key: float = 0.0
    slice_new: bool = True
    slice_end_s: float = 0.0
    slice_resid_s: float = 0.0
    fifo_checked: bool = False
    must_dispatch: bool = False


class Cfq:
    """block/cfq-iosched.c for sync best-effort queues of one cgroup on a queueing flash device."""

    def __init__(self, slice_idle_s: float = 0.0, group_idle: bool = True) -> None:
        self.slice_idle_s = slice_idle_s
        self.group_idle = group_idle           # cfq_group_idle = 8 ms (CONFIG_CFQ_GROUP_IOSCHED)
        self.queues: dict[int, CfqQueue] = {}
        self.tree: list[CfqQueue] = []          # the service tree (sync-noidle), ordered by rb_key
        self.active: CfqQueue | None = None
        self.busy_queues = 0                   # on the round robin
        self.nr_cfqq = 0                       # queues the group counts (cfq_group_notify_queue_add)
        self.busy_avg = 0                      # cfqg->busy_queues_avg[BE]
        self.rq_queued = 0
        self.preemptions = 0                   # for tests and reports

    # --- the service tree -------------------------------------------------------------------
    def _tree_add(self, q: CfqQueue, now: float, add_front: bool) -> None:
        """cfq_service_tree_add."""
        if not add_front:
            # cfq_slice_offset: (nr_cfqq - 1) x (the prio-0 slice - this queue's), counted before a
            # new queue joins the group
            key = now + (self.nr_cfqq - 1) * (cfq_prio_slice(True, 0) - cfq_prio_slice(True, IOPRIO_NORM)) \
                - q.slice_resid_s
            q.slice_resid_s = 0.0
        else:
            first = self._first()
            key = (first.rb_key if first is not None else now) - 1.0
        new = not q.on_tree
        if not new:
            self.tree.remove(q)
        q.rb_key = key
        # insert after every queue with key <= this one (rb-tree ties go right)
        i = len(self.tree)
        while i > 0 and self.tree[i - 1].rb_key > key:
            i -= 1
        self.tree.insert(i, q)
        q.on_tree = True
        if new and not add_front:
            self.nr_cfqq += 1

    def _first(self) -> CfqQueue | None:
        return self.tree[0] if self.tree else None

    def _add_rr(self, q: CfqQueue, now: float) -> None:
        """cfq_add_cfqq_rr."""
        q.on_rr = True
        self.busy_queues += 1
        self._tree_add(q, now, add_front=False)

    def _del_rr(self, q: CfqQueue) -> None:
        """cfq_del_cfqq_rr."""
        q.on_rr = False
        if q.on_tree:
            self.tree.remove(q)
            q.on_tree = False
        self.nr_cfqq -= 1
        self.busy_queues -= 1

    # --- slices ----------------------------------------------------------------------------
    def _slice_used(self, q: CfqQueue, now: float) -> bool:
        return not q.slice_new and now >= q.slice_end_s

    def _set_active(self, q: CfqQueue | None) -> None:
        if q is not None:
            q.slice_end_s = 0.0
            q.slice_new = True
            q.fifo_checked = False
            q.must_dispatch = False
        self.active = q

    def _slice_expired(self, now: float, timed_out: bool) -> None:
        """__cfq_slice_expired."""
        q = self.active
        if q is None:
            return
        if timed_out:
            if q.slice_new:
                q.slice_resid_s = self._scaled_slice()
            else:
                q.slice_resid_s = q.slice_end_s - now
        if q.on_rr and not q.queued:
            self._del_rr(q)
        if q.on_rr:
            self._tree_add(q, now, add_front=False)
        self.active = None

    def _scaled_slice(self) -> float:
        """cfq_scaled_cfqq_slice, which also updates the group's smoothed busy-queue count."""
        self.busy_avg = cfq_avg_queues(self.busy_avg, len(self.tree))
        return cfq_scaled_slice(self.busy_avg, self.slice_idle_s)

    def _set_prio_slice(self, q: CfqQueue, now: float) -> None:
        """cfq_set_prio_slice at the queue's first completion in its slice."""
        q.slice_end_s = now + self._scaled_slice()

    # --- insert / dispatch / complete --------------------------------------------------------
    def insert(self, rq: Request, now: float) -> None:
        """cfq_insert_request and cfq_rq_enqueued."""
        q = self.queues.get(rq.pid)
        if q is None:
            q = self.queues[rq.pid] = CfqQueue(rq.pid)
        rq.fifo_time_s = now + CFQ_FIFO_EXPIRE_SYNC_S
        q.queued.append(rq)
        self.rq_queued += 1
        if not q.on_rr:
            self._add_rr(q, now)
        if q is not self.active and self._should_preempt(q, now):
            self.preemptions += 1
            self._slice_expired(now, timed_out=True)       # cfq_preempt_queue
            self._tree_add(q, now, add_front=True)
            q.slice_end_s = 0.0
            q.slice_new = True

    def _should_preempt(self, new: CfqQueue, now: float) -> bool:
        """cfq_should_preempt for two sync best-effort queues on the sync-noidle tree."""
        act = self.active
        if act is None:
            return False
        if self._slice_used(act, now):
            return True
        # both on the sync-noidle tree and the active one has nothing queued (also: nothing queued
        # and no idling, as slice_idle / seeky queues never idle here)
        return not act.queued

    def _select_queue(self, now: float) -> CfqQueue | None:
        """cfq_select_queue."""
        q = self.active
        if q is not None:
            if not self.rq_queued:
                return None
            used = self._slice_used(q, now) and not q.must_dispatch
            if not used and q.queued:
                return q
            # a used slice, or an empty queue (which never idles here): check_group_idle keeps the
            # group's only queue while its requests are on the device (group_idle 8 ms), else expire
            if self.group_idle and self.nr_cfqq == 1 and q.dispatched:
                return None
            self._slice_expired(now, timed_out=False)
        nxt = self._first() if self.rq_queued else None
        self._set_active(nxt)
        return nxt

    def _may_dispatch(self, q: CfqQueue, now: float) -> bool:
        """cfq_may_dispatch for a sync queue."""
        if q.must_dispatch:
            return True
        max_dispatch: float = max(CFQ_QUANTUM // 2, 1)
        if q.dispatched >= max_dispatch:
            promote_sync = self.busy_queues == 1        # busy_sync_queues: every queue is sync here
            used_soon = q.slice_new or now + self.slice_idle_s * q.dispatched > q.slice_end_s
            if self.busy_queues > 1 and used_soon and not promote_sync:
                return False
            max_dispatch = math.inf if (self.busy_queues == 1 or promote_sync) else CFQ_QUANTUM
        return q.dispatched < max_dispatch

    def dispatch_one(self, now: float) -> Request | None:
        """cfq_dispatch_requests: at most one request into the driver's list."""
        if not self.busy_queues:
            return None
        q = self._select_queue(now)
        if q is None or not q.queued:
            return None
        if not q.fifo_checked:                             # cfq_check_fifo: once a slice
            q.fifo_checked = True
            if q.queued[0].fifo_time_s <= now:
                q.must_dispatch = True
        if not self._may_dispatch(q, now):
            return None
        # the fifo's head: in arrival order it is also the next request
        rq = q.queued.popleft()
        q.dispatched += 1
        q.must_dispatch = False
        self.rq_queued -= 1
        return rq

    def completed(self, rq: Request, now: float) -> None:
        """cfq_completed_request."""
        q = self.queues[rq.pid]
        q.dispatched -= 1
        if self.active is q:
            if q.slice_new:
                self._set_prio_slice(q, now)
                q.slice_new = False
            if self._slice_used(q, now):
                self._slice_expired(now, timed_out=True)


class Noop:
    """The noop elevator (and deadline for random sync I/O of one direction): arrival order."""

    def __init__(self) -> None:
        self.fifo: deque = deque()

    def insert(self, rq: Request, now: float) -> None:
        self.fifo.append(rq)

    def dispatch_one(self, now: float) -> Request | None:
        return self.fifo.popleft() if self.fifo else None

    def completed(self, rq: Request, now: float) -> None:
        return None


@dataclass(eq=False)
class _Batcher:
    nr_batch: int = 0
    last_waited_s: float = -1.0


class BlockLayer:
    """Request allocation, an elevator and the driver's tag depth. Call `try_allocate` (or queue the
    submitter with `wait_allocation`), `insert`, then `dispatch` for the requests to start on the
    device; on a completion call `complete`, which returns the submitter to wake, then `dispatch`."""

    def __init__(self, cfg: BlockLayerConfig) -> None:
        self.cfg = cfg
        self.elevator = Cfq(cfg.slice_idle_s) if cfg.elevator == "cfq" else Noop()
        self.count = 0                     # allocated sync requests (rl->count[BLK_RW_SYNC])
        self.full = False
        self.waiters: deque = deque()      # pids asleep in get_request, FIFO (exclusive wake)
        self.batch: dict[int, _Batcher] = {}
        self.in_driver = 0

    def _batching(self, pid: int, now: float) -> bool:
        """ioc_batching."""
        b = self.batch.get(pid)
        return b is not None and (b.nr_batch == BLK_BATCH_REQ
                                  or (b.nr_batch > 0 and now < b.last_waited_s + BLK_BATCH_TIME_S))

    def set_batching(self, pid: int, now: float) -> None:
        """ioc_set_batching: a woken sleeper may allocate a batch past the limit."""
        if self._batching(pid, now):
            return
        b = self.batch.setdefault(pid, _Batcher())
        b.nr_batch = BLK_BATCH_REQ
        b.last_waited_s = now

    def try_allocate(self, pid: int, now: float) -> bool:
        """__get_request for a sync request."""
        nr = self.cfg.nr_requests
        if self.count + 1 >= nr:
            if not self.full:
                self.set_batching(pid, now)
                self.full = True
            elif not self._batching(pid, now):
                return False
        if self.count >= 3 * nr // 2:
            return False
        self.count += 1
        if self._batching(pid, now):
            self.batch[pid].nr_batch -= 1
        return True

    def wait_allocation(self, pid: int) -> None:
        """prepare_to_wait_exclusive: sleep until a freed request wakes this submitter."""
        self.waiters.append(pid)

    def insert(self, rq: Request, now: float) -> None:
        self.elevator.insert(rq, now)

    def dispatch(self, now: float) -> list[Request]:
        """scsi_request_fn: take requests from the elevator while the device has free tags."""
        out = []
        while self.in_driver < self.cfg.queue_depth:
            rq = self.elevator.dispatch_one(now)
            if rq is None:
                break
            self.in_driver += 1
            out.append(rq)
        return out

    def complete(self, rq: Request, now: float) -> int | None:
        """The device finished rq: the elevator's completion, then the request is freed
        (freed_request), which wakes one sleeper; returns its pid or None."""
        self.in_driver -= 1
        self.elevator.completed(rq, now)
        self.count -= 1
        if self.count + 1 <= self.cfg.nr_requests:
            self.full = False
            if self.waiters:
                return self.waiters.popleft()
        return None
