"""Fit a device profile to fio results, and check it by cross-prediction.

Method (shared/research/fs-device.md 2.2-2.5):
1. Host path: `host_overhead_s` = median submission latency (lat - clat); fio's own time between
   I/Os of a thread (think time Z = N/X - R, Little's law) = median over jobs.
0. Jobs: the device model is one of random I/O (InnoDB's page reads and writes), so sequential jobs
   (rw=read, write, rw/readwrite) are left out of the fit wherever random jobs of the same kind
   (reads, writes, mixed) exist: a drive's read-ahead serves sequential 4K reads several times
   faster than random ones (shared/data/fio/rpi-hothanh7-nvme: 12 against 51 us at QD1). They are
   reported as not used, and used only for a kind that has no random job.
2. Per (operation, block size) class of single-operation jobs: QD1 latency from the shallowest job;
   units k (shared by the device), unit assignment per operation (pooled or striped) and capacity C
   per class minimise the squared log error of throughput over the measured outstanding counts,
   using mean-value analysis of the closed loop (striped: k symmetric queues, visit 1/k;
   pooled: Seidmann's approximation of a k-server queue) with a delay station for the pipeline,
   host path and think time. scipy's bounded scalar minimiser finds C. The queues serve with the
   spread the simulator draws (`service_cv`, step 3), not exponentially: each arrival waits for
   the residual life of the I/O in service, S (1 + cv^2) / 2, and C is fitted again with the cv
   that C implies until cv settles (mva_throughput, _fit_operation). Fitted as exponential, C
   came out above the measured plateau of flash that serves regularly (cv 0.1-0.4): 13 % for the
   Intel D3-S4610's reads, 10 % its writes, 2 % the Samsung PM883's writes; the simulator then
   ran deep jobs that much too fast.
   A class measured at one outstanding I/O only says nothing of its capacity: it keeps the share
   of its QD1 latency that is service time in the classes measured at depth (median, same
   operation first), C = k / (share x R0), and the profile's description names it.
   Units behind a front end (models.device: one FIFO stage, the controller and its link, holding
   each I/O for 1 / C before its unit) are fitted the same way with two figures per class, C and
   a unit's time; the throughput hardly tells the unit count and time there, so the candidates
   (the best count per pair of assignments, the fewest, middle and most units that fit nearly as
   well, and the best with its units at fixed shares of their most) are run in the simulator on the one-process jobs
   they were fitted to, and the one whose throughput and p99 match best is kept. It replaces the
   units-alone fit when its error there is below FRONT_MARGIN of that fit's.
3. Service spread `service_cv` from the QD1 p99 of the class; a depth curve where throughput falls
   past its peak; the 50/50 mixed capacity from randrw jobs deep enough to saturate the device
   (a 50/50 job whose closed loop, on the fitted pure classes, would stay under 90% of their mixed
   capacity measures latency, not capacity, and is not used for it).
4. The fitted profile is then run in the simulator itself (the model users get) for every job;
   the report and the held-out rows come from those runs.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import simpy
from scipy.optimize import minimize, minimize_scalar
from scipy.stats import norm

from models.block_layer import CFQ_QUANTUM, NR_REQUESTS, BlockLayerConfig, Request, cfq_scaled_slice
from models.device import READ, WRITE, Device, profile_from_dict
from models.errors import InputError
from models.filesystem import FsCosts
from models.host_io import HostQueue
from models.queueing import mixed_capacity_iops
from sim.fio import FioJob

K_CANDIDATES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
ASSIGNMENTS = ("pooled", "striped")
CV_ROUNDS = 6              # at most this many capacity fits per class, each with the cv the last one implied
CV_SETTLED = 0.005         # ... stopping when the cv moves less than this
DEFAULT_CV = 0.3           # service_cv where a class has no QD1 p99 to read it from
TARGETS = {"iops": 0.15, "lat_p50": 0.20, "lat_p99": 0.35}   # held-out tolerances (issue 4)
DEPTH_CURVE_SHARE = 0.9  # past the peak, points below this share of it make the depth curve, not the capacity
FRONT_PEAK_SHARE = 0.8     # a front end's capacity must be measured: the peak throughput within this share of it
FRONT_MARGIN = 0.8         # a front end is chosen when its replay error is below this share of units alone's
UNIT_SHARES = (1 / 3, 2 / 3, 1.0)   # behind a front end, fixed unit shares replayed for the best unit count
FSYNC_CPU_S = FsCosts().fsync_cpu_s   # the filesystem's part of an fsync / fdatasync in the model
SCREEN_IOS = 800           # I/Os a job of a candidate's first, short replay; the FINALISTS best replayed with 3000
FINALISTS = 2
FRONT_K_CANDIDATES = (1, 2, 4, 8, 16, 32, 64)   # unit counts tried behind a front end
FRONT_K_SLACK = 1.5        # behind a front end, unit counts within this factor of the best throughput fit are replayed
Z99 = float(norm.ppf(0.99))    # the standard normal's 99th percentile


def mva_throughput(n_max: int, units: int, service_s: float, delay_s: float, striped: bool,
                   front_s: float = 0.0, cv: float = 1.0) -> np.ndarray:
    """Throughput for 1..n_max customers of a closed loop: a delay station plus the device.

    Striped: `units` identical FCFS queues visited with probability 1/units. Pooled: one queue of
    service S/units plus a delay S (units-1)/units (Seidmann). front_s > 0: a front end, one FCFS
    queue of that service, visited before the units.
    cv: the service times' coefficient of variation at every queue. 1 is exponential service,
    where this is exact MVA (product form). Otherwise an arrival finds the I/O in service with
    probability U and waits its mean residual life, S (1 + cv^2) / 2, instead of a whole S
    (renewal theory): R = S (1 + Q + U (cv^2 - 1) / 2). That approximation can overshoot a
    queue's capacity past the knee, so the throughput is capped there.
    """
    if striped:
        s1, d = service_s, delay_s
    else:
        s1, d = service_s / units, delay_s + service_s * (units - 1) / units
    corr = (cv * cv - 1.0) / 2.0
    x_cap = min(1.0 / front_s if front_s > 0.0 else math.inf, units / service_s if service_s > 0.0 else math.inf)
    # striped: each of `units` queues is visited 1/units of the time; pooled: the one queue always
    # (a division by 1 is exact, so one loop serves both)
    visits = units if striped else 1
    # A fio fit calls this tens of thousands of times: a loop for each case, with nothing else in
    # it. Both do the float operations of the recurrence above in the same order, so the results
    # are the same to the last bit whichever runs.
    out: list[float] = []
    put = out.append
    q = qf = u = uf = 0.0
    if front_s == 0.0 and math.isfinite(corr):
        # no front end: its response, queue and use stay 0.0, and d + 0.0 + r is d + r
        for n in range(1, n_max + 1):
            r = s1 * (1.0 + q + u * corr)   # response at one unit (striped) or the pooled queue
            xn = n / (d + r)
            if xn > x_cap:
                xn = x_cap
            q = xn * r / visits
            u = xn * s1 / visits
            put(xn)
    else:
        for n in range(1, n_max + 1):
            rf = front_s * (1.0 + qf + uf * corr)
            r = s1 * (1.0 + q + u * corr)
            xn = n / (d + rf + r)
            if xn > x_cap:
                xn = x_cap
            qf = xn * rf
            q = xn * r / visits
            uf = xn * front_s
            u = xn * s1 / visits
            put(xn)
    return np.array(out, dtype=float)


@dataclass(frozen=True)
class ClassData:
    op: str
    block_bytes: int
    points: tuple[tuple[int, float], ...]  # (outstanding, measured IOPS), median per outstanding
    qd1_latency_s: float                  # device latency (clat) of the shallowest job
    qd1_p99_s: float

    @property
    def at_depth(self) -> bool:
        """Measured with more than one I/O outstanding (else its capacity cannot be fitted)."""
        return self.points[-1][0] > 1


SEQUENTIAL_RW = ("read", "write", "rw", "readwrite")
NOT_USED = "not used"


def is_sequential(job: FioJob) -> bool:
    return job.rw in SEQUENTIAL_RW


def job_kind(job: FioJob) -> str:
    """read, write or mixed: what a job measures of the device."""
    return READ if job.read_share >= 1.0 else WRITE if job.read_share <= 0.0 else "mixed"


def sequential_reason(job: FioJob) -> str:
    return f"{NOT_USED}: sequential (rw={job.rw}); the model is fitted to random I/O"


def sync_reason(job: FioJob) -> str:
    why = not_a_flush_job(job)
    return (f"{NOT_USED} for the units: it calls {job.sync_call} after every {job.sync_every} write(s); "
            + ("its sync latency sets the cache flush" if why is None else f"not used for the cache flush: {why}"))


def not_a_flush_job(job: FioJob) -> str | None:
    """Why a job's sync calls do not time the device's cache flush alone (None: they do). They do
    for O_DIRECT writes, each followed by fdatasync, with the calls' latency measured (fio >=
    3.5): the data is on the device already and an overwrite changes nothing fdatasync must log.
    With fdatasync=N > 1 a flush has N writes to wait for, which the model's flush of fixed length
    does not tell apart."""
    if job.sync_call is None:
        return "it does not sync"
    if job.sync_call != "fdatasync":
        return "fsync also commits the journal when the file's timestamps moved (run fdatasync=1)"
    if job.sync_every != 1:
        return f"one fdatasync after {job.sync_every} writes (run fdatasync=1)"
    if not job.direct:
        return "buffered writes, so each fdatasync also writes the data back (run direct=1)"
    if job.read_share > 0.0:
        return "it reads too (run rw=write)"
    if job.sync is None or job.sync_calls <= 0:
        return "fio printed no sync latency (fio 3.5 and later do)"
    return None


def flush_job(job: FioJob) -> bool:
    """A job whose sync calls time the device's cache flush (not_a_flush_job)."""
    return not_a_flush_job(job) is None


def select_jobs(jobs: list[FioJob]) -> tuple[list[FioJob], list[tuple[FioJob, str]], frozenset[str]]:
    """(jobs to fit, [(job, why not used)], kinds fitted to sequential jobs for want of random ones).
    Jobs that sync between writes time their sync calls too, so none of them is fitted to the units."""
    syncing = [j for j in jobs if j.sync_call is not None]
    jobs = [j for j in jobs if j.sync_call is None]
    random_kinds = {job_kind(j) for j in jobs if not is_sequential(j)}
    used, unused = [], [(j, sync_reason(j)) for j in syncing]
    for j in jobs:
        if is_sequential(j) and job_kind(j) in random_kinds:
            unused.append((j, sequential_reason(j)))
        else:
            used.append(j)
    seq_kinds = frozenset(job_kind(j) for j in used if is_sequential(j))
    return used, unused, seq_kinds


def _direction(job: FioJob):
    return job.read if job.read_share >= 1.0 else job.write


def _classes(jobs: list[FioJob], device_depth: int | None = None) -> dict[tuple[str, int], ClassData]:
    """Per (operation, block size): measured IOPS by the I/Os the device holds (a host with a tag
    depth lets at most that many through; the rest wait on the host)."""
    by: dict[tuple[str, int], list[FioJob]] = {}
    for j in jobs:
        if j.read_share in (0.0, 1.0):
            by.setdefault((READ if j.read_share == 1.0 else WRITE, j.block_bytes), []).append(j)
    out = {}
    for (op, bs), js in by.items():
        per_n: dict[int, list[float]] = {}
        for j in js:
            n = j.outstanding if device_depth is None else min(j.outstanding, device_depth)
            per_n.setdefault(n, []).append(j.iops)
        shallow = min(js, key=lambda j: (j.outstanding, -j.iops))
        d = _direction(shallow)
        out[(op, bs)] = ClassData(op, bs, tuple(sorted((n, statistics.median(v)) for n, v in per_n.items())),
                                  d.clat.mean_s, d.clat.percentile_s(99.0))
    return out


def _capacity_points(cd: ClassData) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(outstanding I/Os, throughputs, indices a capacity is fitted to) of a class: points past the
    peak that fall below DEPTH_CURVE_SHARE of it belong to the depth curve, not to C."""
    ns = np.array([n for n, _ in cd.points])
    xs = np.array([x for _, x in cd.points])
    peak = int(np.argmax(xs))
    return ns, xs, [i for i in range(len(ns)) if i <= peak or xs[i] >= DEPTH_CURVE_SHARE * xs[peak]]


def _fit_capacity(cd: ClassData, units: int, striped: bool, delay_extra_s: float,
                  cv: float = 1.0) -> tuple[float, float]:
    """Capacity minimising the log error for this class at (units, assignment), its queues serving
    with this cv; returns (C, err)."""
    ns, xs, keep = _capacity_points(cd)
    at = ns[keep] - 1
    n_max = int(at.max()) + 1                 # the recurrence's later points are not compared
    log_measured = np.log(xs[keep])

    def err(log_c: float) -> float:
        c = math.exp(log_c)
        service = units / c
        pipeline = max(0.0, cd.qd1_latency_s - service)
        x = mva_throughput(n_max, units, service, pipeline + delay_extra_s, striped, cv=cv)
        return float(((np.log(x[at]) - log_measured) ** 2).sum())

    x_peak = float(xs.max())
    lo = math.log(max(x_peak * 0.8, units / cd.qd1_latency_s * 1.0001 if units / cd.qd1_latency_s > x_peak * 0.8 else x_peak * 0.8))
    hi = math.log(x_peak * 3.0)
    if lo >= hi:
        return math.exp(lo), err(lo)
    res = minimize_scalar(err, bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    return math.exp(res.x), float(res.fun)


def _fit_front(cd: ClassData, units: int, striped: bool, delay_extra_s: float,
               unit_share: float | None = None, cv: float = 1.0) -> tuple[float, float, float]:
    """With a front end: capacity C (the front end's 1 / service) and a unit's service time
    minimising the log error for this class at (units, assignment); returns (C, unit_s, err). The
    unit time is at most what leaves the front end the bottleneck (units / C) and what fits in the
    QD1 latency with the front end's time; `unit_share` fixes it at that share of the most. A
    capacity the measured throughput never came within FRONT_PEAK_SHARE of is not a fit (err inf)."""
    ns, xs, keep = _capacity_points(cd)
    r0 = cd.qd1_latency_s
    x_peak = float(xs.max())
    # The loop is saturated long before the deepest jobs of some sets (1,024 outstanding): past
    # 8 x the peak's population the curve is taken as flat, which keeps the search quick.
    n_eval = min(int(ns.max()), max(64, int(8 * x_peak * (r0 + delay_extra_s)) + 1))
    at = np.minimum(ns[keep], n_eval) - 1
    n_used = int(at.max()) + 1                # the recurrence's later points are not compared
    log_measured = np.log(xs[keep])

    def parts(p) -> tuple[float, float] | None:
        c = math.exp(p[0])
        room = min(r0 - 1.0 / c, units / c)
        if room <= 0.0:
            return None
        return c, room * (unit_share if unit_share is not None else 1.0 / (1.0 + math.exp(-p[1])))

    def err(p) -> float:
        got = parts(p)
        if got is None:
            return 1e3
        c, unit_s = got
        x = mva_throughput(n_used, units, unit_s, r0 - 1.0 / c - unit_s + delay_extra_s, striped, 1.0 / c, cv)
        return float(((np.log(x[at]) - log_measured) ** 2).sum())

    best = None
    for c0 in (max(x_peak, 1.05 / r0), max(1.2 * x_peak, 1.05 / r0)):
        for logit in ((-1.0, 1.5) if unit_share is None else (0.0,)):
            res = minimize(err, [math.log(c0), logit], method="Nelder-Mead",
                           options={"xatol": 1e-3, "fatol": 1e-7, "maxiter": 200})
            if best is None or res.fun < best.fun:
                best = res
    got = parts(best.x)
    if got is None or x_peak < FRONT_PEAK_SHARE * got[0]:
        # the front end's capacity would be an extrapolation: the jobs never came near it
        return x_peak, 0.0, math.inf
    return got[0], got[1], float(best.fun)


def _fit_operation(deep: dict, op: str, units: int, assignment: str, front: bool, delay_extra_s: float,
                   unit_share: float | None = None) -> tuple[float, str, dict, dict]:
    """One operation's classes measured at depth fitted at (units, assignment), units alone or
    behind a front end: (summed error, assignment, {class: C}, {class: a unit's time}; empty alone).
    Units alone cannot take more service time than a class's QD1 latency (err inf)."""
    e_sum, caps, units_s = 0.0, {}, {}
    striped = assignment == "striped"
    for key, cd in deep.items():
        if cd.op != op:
            continue
        caps[key], unit_s, e = _fit_class(cd, units, striped, front, delay_extra_s, unit_share)
        if front:
            units_s[key] = unit_s
        e_sum += e
    return e_sum, assignment, caps, units_s


@lru_cache(maxsize=8192)
def _fit_class(cd: ClassData, units: int, striped: bool, front: bool, delay_extra_s: float,
               unit_share: float | None) -> tuple[float, float, float]:
    """One class at (units, assignment), alone or behind a front end: (C, a unit's time (0.0 alone),
    err). Fitted first with exponential service (cv 1), then again with the cv its fitted service
    time gives the profile (_service_cv), until that cv moves by less than CV_SETTLED. A pure
    function of its arguments, so cached: a fit tries each class at every candidate structure, and
    the same jobs are often fitted again (a held-out fit then the full one, the app's reruns)."""
    cv = 1.0
    unit_s = 0.0
    for _ in range(CV_ROUNDS):
        if front:
            c, unit_s, e = _fit_front(cd, units, striped, delay_extra_s, unit_share, cv)
            service = 1.0 / c + unit_s
        else:
            c, e = _fit_capacity(cd, units, striped, delay_extra_s, cv)
            service = units / c
            if service > cd.qd1_latency_s:
                return c, unit_s, math.inf
        new_cv = _service_cv(cd, service)
        settled = abs(new_cv - cv) < CV_SETTLED
        cv = new_cv
        if settled:
            break
    return c, unit_s, e


def _service_cv(cd: ClassData, service_s: float) -> float:
    """The profile's `service_cv` for a class whose I/Os take service_s of device time: the spread
    that puts the QD1 p99 where it was measured, the rest of the QD1 latency being pipeline."""
    if not (service_s > 0.0 and cd.qd1_p99_s > 0.0):
        return DEFAULT_CV
    pipeline = max(0.0, cd.qd1_latency_s - service_s)
    return _lognormal_cv_for((cd.qd1_p99_s - pipeline) / service_s)


@lru_cache(maxsize=4096)
def _lognormal_cv_for(p99_over_service: float) -> float:
    """cv of a mean-1 lognormal whose 99th percentile is the given multiple of its mean. The fit
    asks it again for the same classes, hence the cache."""
    if p99_over_service <= 1.0:
        return 0.0

    def q99(cv: float) -> float:
        s2 = math.log1p(cv * cv)
        return math.exp(-0.5 * s2 + Z99 * math.sqrt(s2))

    res = minimize_scalar(lambda cv: (math.log(q99(cv)) - math.log(p99_over_service)) ** 2,
                          bounds=(0.0, 5.0), method="bounded")
    return float(res.x)


@dataclass(frozen=True)
class DeviceFit:
    profile: dict
    think_s: float
    fit_error: float
    unused: tuple[tuple[FioJob, str], ...] = ()   # jobs left out of the fit, with the reason
    sequential_kinds: frozenset[str] = frozenset()  # kinds fitted to sequential jobs (no random ones)
    notes: tuple[str, ...] = ()                      # what the fit assumed or left out, for the description

    def why_unused(self, job: FioJob) -> str | None:
        """Why the fitted model does not speak for this job (None: it does)."""
        if job.sync_call is not None:
            return sync_reason(job)
        if is_sequential(job) and job_kind(job) not in self.sequential_kinds:
            return sequential_reason(job)
        return None


def _service_share(cd: ClassData, k: int, capacity: float) -> float:
    """The part of the class's QD1 latency that is service time on a unit: (k / C) / R0."""
    return (k / capacity) / cd.qd1_latency_s


def _mixed_saturated(job: FioJob, doc_classes: dict, k: int, striped: bool, delay_s: float) -> bool:
    """Whether a 50/50 job ran deep enough to measure the mixed capacity: its closed loop on the
    pure classes (mix multiplier 1) reaches 90% of their mixed capacity."""
    r = doc_classes[READ].get(str(job.block_bytes))
    w = doc_classes[WRITE].get(str(job.block_bytes))
    if r is None or w is None:
        return False
    c_mix = mixed_capacity_iops(0.5, r["capacity_iops"], w["capacity_iops"], 1.0)
    r0 = 0.5 * (r["latency_qd1_s"] + w["latency_qd1_s"])
    cv = 0.5 * (r["service_cv"] + w["service_cv"])
    if "unit_service_s" in r:                           # a front end: it sets the capacity
        front = 1.0 / c_mix
        service = 0.5 * (r["unit_service_s"] + w["unit_service_s"])
        x = mva_throughput(job.outstanding, k, service, max(0.0, r0 - front - service) + delay_s, striped, front, cv)
    else:
        service = k / c_mix
        x = mva_throughput(job.outstanding, k, service, max(0.0, r0 - service) + delay_s, striped, cv=cv)
    return bool(x[-1] >= 0.9 * c_mix)


def shaped_by_host(job: FioJob, host: BlockLayerConfig | None) -> bool:
    """Whether the host's elevator, not the device, sets what this job measured: under CFQ, several
    processes each more than cfq_quantum / 2 deep (a queue then keeps its slice with at most
    cfq_quantum requests on the device while the others wait; models.block_layer)."""
    return (host is not None and host.elevator == "cfq" and job.numjobs > 1
            and job.iodepth > CFQ_QUANTUM // 2)


def cfq_fingerprints(jobs: list[FioJob]) -> list[str]:
    """Jobs whose tail waits sit at CFQ's slice arithmetic: several processes (2 to 8, few enough
    that the request list does not fill), each more than cfq_quantum / 2 deep, with p99.9 within 5%
    of (processes - 1) x the slice cfq_scaled_cfqq_slice gives them (200, 225, 262.5 ms for 3, 4, 8
    processes). Each is one line saying so; two or more say the host ran CFQ."""
    out = []
    for j in jobs:
        if not (2 <= j.numjobs <= 8 and j.iodepth > CFQ_QUANTUM // 2 and j.outstanding <= NR_REQUESTS):
            continue
        d = _direction(j)
        if d is None:
            continue
        p999 = d.clat.percentile_s(99.9)
        slice_s = cfq_scaled_slice(j.numjobs, 0.0)
        expect = (j.numjobs - 1) * slice_s
        if math.isfinite(p999) and abs(p999 - expect) <= 0.05 * expect:
            out.append(f"{j.label()}: p99.9 {p999 * 1e3:.0f} ms, {j.numjobs - 1} x the "
                       f"{slice_s * 1e3:.1f} ms slice of CFQ with {j.numjobs} busy queues")
    return out


@dataclass(frozen=True)
class CacheFlushFit:
    """The device's cache flush (profile `volatile_write_cache`, `flush_s`) from fdatasync jobs."""

    flush_s: float                       # mean fdatasync minus the filesystem's part (0: no flush cost)
    sync_mean_s: float                   # measured, pooled over the jobs by call count
    calls: int
    jobs: tuple[FioJob, ...]

    @property
    def profile_fields(self) -> dict:
        return {"volatile_write_cache": True, "flush_s": self.flush_s} if self.flush_s > 0 else {}

    def note(self) -> str:
        where = ", ".join(j.name for j in self.jobs)
        if self.flush_s <= 0:
            return (f"fdatasync measured at {self.sync_mean_s * 1e6:.0f} us mean ({where}), no more than the "
                    f"filesystem's own {FSYNC_CPU_S * 1e6:.0f} us: no cache flush cost")
        return (f"cache flush {self.flush_s * 1e6:.0f} us: fdatasync after O_DIRECT writes measured at "
                f"{self.sync_mean_s * 1e6:.0f} us mean ({self.calls:,} calls, {where}) less the filesystem's "
                f"{FSYNC_CPU_S * 1e6:.0f} us")


def fit_cache_flush(jobs: list[FioJob]) -> CacheFlushFit | None:
    """innosim times an fdatasync of data already on the device as the filesystem's ->fsync work
    (FsCosts.fsync_cpu_s, models.filesystem) then one cache flush on the device (Device.schedule_flush,
    a REQ_PREFLUSH); so flush_s = mean measured fdatasync - fsync_cpu_s, over the jobs that time it
    (flush_job), pooled by call count. fsync jobs are not used: on a file whose timestamps moved
    their calls also commit the journal. None without such a job."""
    used = [j for j in jobs if flush_job(j)]
    if not used:
        return None
    calls = sum(j.sync_calls for j in used)
    mean = sum(j.sync_calls * j.sync.mean_s for j in used) / calls
    return CacheFlushFit(round(max(0.0, mean - FSYNC_CPU_S), 9), mean, calls, tuple(used))


def simulate_flush_job(profile_doc: dict, job: FioJob, seed: int = 1, target_calls: int = 2000) -> tuple[float, float]:
    """The fitted profile's run of an fdatasync job (flush_job), as the engine times a redo write and
    its fdatasync (models.fil.FilIO.log_flush_done_s): the write (Device.schedule_append) and the
    host path, then the filesystem's fsync work and the device's cache flush, one process, each
    call after the last. Returns (writes a second, mean fdatasync latency s)."""
    prof = profile_from_dict(profile_doc, "profile")
    dev = Device(simpy.Environment(), prof, np.random.default_rng(seed))
    t, syncs = 0.0, []
    for _ in range(target_calls):                    # one write, then its fdatasync (fdatasync=1)
        t = dev.schedule_append(t, job.block_bytes) + prof.host_overhead_s
        start = t
        t = dev.schedule_flush(t + FSYNC_CPU_S)
        syncs.append(t - start)
    return target_calls / t, float(np.mean(syncs))


def fit_device(jobs: list[FioJob], name: str, source: str,
               host_block: BlockLayerConfig | None = None) -> DeviceFit:
    """Fit a profile document (validated by models.device.profile_from_dict) to fio jobs. With the
    host's block layer given, the device is fitted to the jobs it shaped alone (shaped_by_host),
    each holding at most the host's queue depth on the device."""
    if not jobs:
        raise InputError(source, "", "no fio jobs to fit")
    all_jobs = jobs
    jobs, unused, seq_kinds = select_jobs(jobs)
    shaped = [j for j in jobs if shaped_by_host(j, host_block)]
    all_shaped = bool(shaped) and len(shaped) == len(jobs)
    if shaped and not all_shaped:
        jobs = [j for j in jobs if not shaped_by_host(j, host_block)]
    classes = _classes(jobs, host_block.queue_depth if host_block is not None else None)
    ops = {cd.op for cd in classes.values()}
    if ops != {READ, WRITE}:
        missing = ({READ, WRITE} - ops).pop()
        raise InputError(source, "", f"no single-operation {missing} jobs (rw=rand{missing} or {missing})",
                         "fio results with both random reads and random writes")
    deep = {key: cd for key, cd in classes.items() if cd.at_depth}
    if not deep:
        raise InputError(source, "", "every job ran one I/O at a time (iodepth x numjobs = 1), so the device's "
                         "internal parallelism cannot be told", "fio results at several queue depths")
    host = statistics.median(max(0.0, (_direction(j) or j.read).lat.mean_s - (_direction(j) or j.read).clat.mean_s)
                             for j in jobs)
    # the host path's spread: slat stddev / mean of one-process jobs (several processes add their
    # waits for the request list to slat)
    spreads = [d.slat.stddev_s / d.slat.mean_s for j in jobs if j.numjobs == 1
               for d in (_direction(j) or j.read,) if d is not None and d.slat is not None
               and d.slat.mean_s > 0 and math.isfinite(d.slat.stddev_s)]
    host_cv = min(10.0, statistics.median(spreads)) if spreads else 0.0
    think = statistics.median(max(0.0, j.outstanding / j.iops
                                  - sum(d.iops * d.lat.mean_s for d in (j.read, j.write) if d) / j.iops)
                              for j in jobs)
    # Candidates: units alone, the unit count and assignments whose closed loops (MVA) fit the
    # throughput best; and units behind a front end, for each pair of assignments (pooled or
    # striped, reads and writes) the unit count that fits best.
    structures = []
    for front in (False, True):
        ranked, fits = [], []
        for k in (FRONT_K_CANDIDATES if front else K_CANDIDATES):
            if not front and any(k / (cd.points[-1][1] * 3.0) > cd.qd1_latency_s for cd in deep.values()):
                continue   # k units cannot fit inside the QD1 latency of some class
            per_op = {op: [_fit_operation(deep, op, k, a, front, host + think)
                           for a in (ASSIGNMENTS if k > 1 else ASSIGNMENTS[:1])]   # one unit: the same either way
                      for op in (READ, WRITE)}
            if not front:
                # units alone: each operation's best assignment at this count
                best_op = {op: min(per_op[op], key=lambda f: f[0]) for op in (READ, WRITE)}
                total = best_op[READ][0] + best_op[WRITE][0]
                if math.isfinite(total):
                    fits.append((total, k, best_op))
                continue
            for r in per_op[READ]:
                for w in per_op[WRITE]:
                    if math.isfinite(r[0] + w[0]):
                        ranked.append((r[0] + w[0], k, {READ: r, WRITE: w}))
        if not front:
            if fits:    # the best throughput fit; ties go to the fewer units
                structures.append((front, *min(fits, key=lambda c: (c[0], K_CANDIDATES.index(c[1])))))
            continue
        # behind a front end: the best unit count for each pair of assignments
        for pair in sorted({(c[2][READ][1], c[2][WRITE][1]) for c in ranked}):
            structures.append((front, *min((c for c in ranked if (c[2][READ][1], c[2][WRITE][1]) == pair),
                                           key=lambda c: c[0])))
        if ranked:
            # Behind a front end the throughput hardly tells the unit count (the front end sets the
            # capacity), so of the counts whose best pair fits nearly as well the fewest, the most
            # and the middle one are replayed too.
            floor = min(c[0] for c in ranked)
            near = [min((c for c in ranked if c[1] == k), key=lambda c: c[0]) for k in FRONT_K_CANDIDATES
                    if any(c[1] == k for c in ranked)]
            near = [c for c in near if c[0] <= FRONT_K_SLACK * floor + 1e-6]
            for c in {0: near[0], 1: near[len(near) // 2], 2: near[-1]}.values() if near else ():
                if (front, *c) not in structures:
                    structures.append((front, *c))
    if not structures:
        raise InputError(source, "", "no unit count fits every class", "fio results of one device")

    def build(front: bool, k: int, choice: dict) -> tuple[dict, list[str]]:
        caps = {key: c for op in (READ, WRITE) for key, c in choice[op][2].items()}
        unit_service = {key: u for op in (READ, WRITE) for key, u in choice[op][3].items()}
        if front:
            # shares of the QD1 latency: (front end's 1 / C, a unit's time)
            shares = {op: [((1.0 / caps[key]) / deep[key].qd1_latency_s, unit_service[key] / deep[key].qd1_latency_s)
                           for key in deep if key[0] == op] for op in (READ, WRITE)}
        else:
            shares = {op: [_service_share(deep[key], k, caps[key]) for key in deep if key[0] == op]
                      for op in (READ, WRITE)}
        notes, extrapolated = [], {}
        for key, cd in sorted(classes.items()):
            if key in caps:
                continue
            pool = shares[cd.op] or shares[READ] + shares[WRITE]
            if front:
                fe_share = statistics.median(p[0] for p in pool)
                unit_share = statistics.median(p[1] for p in pool)
                caps[key] = 1.0 / (fe_share * cd.qd1_latency_s)
                unit_service[key] = min(k / caps[key], unit_share * cd.qd1_latency_s)
                share = fe_share + unit_share
            else:
                share = statistics.median(pool)
                caps[key] = k / (share * cd.qd1_latency_s)
            extrapolated.setdefault(share, []).append(f"{cd.op} {cd.block_bytes} B ({caps[key]:,.0f} IOPS)")
        for share, names in extrapolated.items():
            notes.append("measured at queue depth 1 only, capacity extrapolated: " + ", ".join(names)
                         + f"; each takes {share:.0%} of its QD1 latency as service time, as the classes measured at "
                         "depth do")
        doc_classes: dict[str, dict[str, dict]] = {READ: {}, WRITE: {}}
        for key, cd in classes.items():
            c = caps[key]
            service = (1.0 / c + unit_service[key]) if front else k / c
            cv = _service_cv(cd, service)
            entry = {"capacity_iops": round(c, 1), "latency_qd1_s": cd.qd1_latency_s, "service_cv": round(cv, 3)}
            if front:
                # rounded down so that the profile's bounds hold after rounding C
                entry["unit_service_s"] = max(0.0, math.floor(min(unit_service[key], k / entry["capacity_iops"],
                                                                  cd.qd1_latency_s - 1.0 / entry["capacity_iops"])
                                                              * 1e12) / 1e12)
            # The depth curve: the peak, then the points past it that the capacity fit left out.
            ns, xs, keep = _capacity_points(cd)
            peak = int(np.argmax(xs))
            curve = [[int(ns[i]), round(min(1.0, float(xs[i]) / c), 3)] for i in range(peak + 1, len(xs))
                     if i not in keep]
            if curve:
                entry["depth_curve"] = [[int(ns[peak]), round(min(1.0, float(xs[peak]) / c), 3)]] + curve
            doc_classes[cd.op][str(cd.block_bytes)] = entry
        assignment = {op: choice[op][1] for op in (READ, WRITE)}
        mixed, shallow_mixed = {}, 0
        for j in jobs:
            if 0.0 < j.read_share < 1.0 and abs(j.read_share - 0.5) < 1e-9:
                if not _mixed_saturated(j, doc_classes, k, "striped" in assignment.values(), host + think):
                    shallow_mixed += 1
                    continue
                mixed[str(j.block_bytes)] = max(mixed.get(str(j.block_bytes), 0.0), round(j.iops, 1))
        if shallow_mixed:
            notes.append(f"{shallow_mixed} 50/50 job(s) too shallow to saturate the device: not used for the mixed "
                         "capacity")
        if host_block is not None:
            hb = host_block
            notes.append(f"measured through the host's block layer ({hb.elevator}, queue depth {hb.queue_depth}, "
                         f"nr_requests {hb.nr_requests}): the device is fitted to at most {hb.queue_depth} I/Os "
                         "on it" + (f", and not to the {len(shaped)} job(s) whose several processes, each more than "
                                    f"{CFQ_QUANTUM // 2} deep, CFQ's slices shape (they are predicted through it)"
                                    if shaped and not all_shaped else
                                    f"; every job ran several processes each more than {CFQ_QUANTUM // 2} deep, so the "
                                    "device is fitted to throughputs CFQ shaped (run one process at several depths to "
                                    "measure the drive itself)" if all_shaped else ""))
        if seq_kinds:
            notes.append("fitted to sequential jobs for " + ", ".join(sorted(seq_kinds)) + " (no random ones)")
        n_seq = sum(1 for j, _ in unused if j.sync_call is None)
        if n_seq:
            notes.append(f"{n_seq} sequential job(s) not used (random jobs of the same kind exist)")
        doc = {"name": name, "source": source,
               "description": f"fitted by innosim calibrate fio from {len(jobs)} fio jobs"
                              + "".join(f"; {n}" for n in notes),
               "parallelism": k, "host_overhead_s": host,
               **({"host_overhead_cv": round(host_cv, 3)} if host_cv > 0 else {}),
               **({"front_end": True} if front else {}),
               "unit_assignment": assignment,
               "classes": doc_classes}
        if mixed:
            doc["mixed_capacity_iops"] = mixed
        return doc, notes

    built = [(front, total, *build(front, k, choice)) for front, total, k, choice in structures]
    if len(built) > 1:
        # The candidate is chosen by replaying jobs it was fitted to in the simulator (one process
        # each where the host shaped several; one job per class and depth): their throughput and
        # p99. Ties go to units alone, then to the better throughput fit.
        replay = _replay_jobs(jobs, host_block)

        def weighted(i: int, err: float) -> tuple:
            # a front end is one more stage to believe in: it must cut units alone's error by a fifth
            return (err / FRONT_MARGIN if built[i][0] else err, built[i][0], built[i][1])

        # Screened on short replays, the best few (and the best units-alone fit) replayed in full.
        screen = {i: _replay_error(b[2], replay, think, SCREEN_IOS) for i, b in enumerate(built)}
        # Behind a front end the throughput hardly tells how the rest of the QD1 latency splits
        # between a unit's time and the pipeline; the tails do: the best front-end candidate is
        # replayed again with its units taking fixed shares of the most they can.
        fronts = sorted((screen[i], i) for i in screen if built[i][0])
        if fronts:
            _, _, k_f, choice_f = structures[fronts[0][1]]
            for share in UNIT_SHARES:
                choice_s = {op: _fit_operation(deep, op, k_f, choice_f[op][1], True, host + think, share)
                            for op in (READ, WRITE)}
                total_s = choice_s[READ][0] + choice_s[WRITE][0]
                if not math.isfinite(total_s):
                    continue
                structures.append((True, total_s, k_f, choice_s))
                built.append((True, total_s, *build(True, k_f, choice_s)))
                screen[len(built) - 1] = _replay_error(built[-1][2], replay, think, SCREEN_IOS)
        finalists = sorted(screen, key=lambda i: weighted(i, screen[i]))[:FINALISTS]
        alone = min((i for i in screen if not built[i][0]), key=lambda i: screen[i], default=None)
        if alone is not None and alone not in finalists:
            finalists.append(alone)
        final = {i: _replay_error(built[i][2], replay, think) for i in finalists}
        best_i = min(final, key=lambda i: weighted(i, final[i]))
        if built[best_i][0]:
            note = (f"units behind a front end (one FIFO stage): {len(replay)} of the jobs it was fitted to, "
                    f"replayed, match their IOPS and p99 better (squared log error {final[best_i]:.3f})"
                    + (f" than on units alone ({final[alone]:.3f})" if alone is not None else ""))
            built[best_i][3].append(note)
            built[best_i][2]["description"] += f"; {note}"
        built = [built[best_i]]
    front, total, doc, notes = built[0]
    flush = fit_cache_flush(all_jobs)
    if flush is not None:
        doc.update(flush.profile_fields)
        notes.append(flush.note())
        doc["description"] += f"; {flush.note()}"
    profile_from_dict(doc, f"fitted profile {name}")     # the fit must itself be a valid profile
    return DeviceFit(doc, think, total, tuple(unused), seq_kinds, tuple(notes))


def _replay_jobs(jobs: list[FioJob], host_block: BlockLayerConfig | None) -> list[FioJob]:
    """The single-operation jobs a candidate profile is replayed on: one per (operation, block
    size, outstanding I/Os), the one with the median IOPS, of one process each where a set has
    such jobs (the device's own curve, and quick to rerun); through a host's block layer only
    those within its queue depth (what the device alone decides)."""
    single = [j for j in jobs if j.read_share in (0.0, 1.0)]
    if any(j.numjobs == 1 for j in single):
        single = [j for j in single if j.numjobs == 1]
    groups: dict[tuple, list[FioJob]] = {}
    for j in single:
        if host_block is not None and j.outstanding > host_block.queue_depth:
            continue
        groups.setdefault((j.read_share, j.block_bytes, j.outstanding), []).append(j)
    return [sorted(g, key=lambda j: j.iops)[len(g) // 2] for _, g in sorted(groups.items())]


def _replay_error(doc: dict, jobs: list[FioJob], think_s: float, target_ios: int = 3000) -> float:
    """Squared log errors of throughput and p99 latency of `jobs` run on the profile `doc` (device
    alone), each for about target_ios I/Os."""
    err = 0.0
    for j in jobs:
        p = simulate_job(doc, j, think_s, target_ios=target_ios)
        meas_p99 = measured_latency(j, 99.0)
        if not (p.iops > 0 and j.iops > 0):
            return math.inf
        err += math.log(p.iops / j.iops) ** 2
        if math.isfinite(meas_p99) and meas_p99 > 0 and p.lat_p99_s > 0:
            err += math.log(p.lat_p99_s / meas_p99) ** 2
    return err


@dataclass(frozen=True)
class JobPrediction:
    job: FioJob
    iops: float
    lat_mean_s: float
    lat_p50_s: float
    lat_p99_s: float
    lat_p999_s: float
    span_s: float = math.nan          # the simulated seconds measured (after the warm-up)


def _prediction(job: FioJob, lat: list[float], span: float, add_s: float = 0.0) -> JobPrediction:
    """A run's figures from its measured latencies (each plus add_s, as fio's mean slat is added to
    its clat percentiles) over `span` simulated seconds."""
    a = np.sort(np.asarray(lat))
    if a.size == 0:
        return JobPrediction(job, 0.0, math.nan, math.nan, math.nan, math.nan)

    def pct(q):
        return float(a[max(0, math.ceil(q / 100 * a.size) - 1)]) + add_s

    return JobPrediction(job, a.size / span, float(a.mean()) + add_s, pct(50), pct(99), pct(99.9), span)


def _closed_loop_rate(prof, job: FioJob, think_s: float) -> float:
    """A run's length comes from the profile, not from the measurement: the closed-loop bound
    min(N / R0, C) of the job's I/Os on it."""
    caps, lats = [], []
    for op, share in ((READ, job.read_share), (WRITE, 1.0 - job.read_share)):
        if share > 0:
            oc = prof.op_class(op, job.block_bytes)
            caps.append(oc.capacity_iops)
            lats.append(oc.latency_qd1_s + prof.host_overhead_s + think_s)
    return min(job.outstanding / max(lats), max(caps))


def simulate_job(profile_doc: dict, job: FioJob, think_s: float, seed: int = 1,
                 target_ios: int = 4000) -> JobPrediction:
    """Run a fio job (N closed-loop I/Os, its read share and block size) on a profile."""
    prof = profile_from_dict(profile_doc, "profile")
    env = simpy.Environment()
    dev = Device(env, prof, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    n = job.outstanding
    est_rate = _closed_loop_rate(prof, job, think_s)
    warm = max(2 * n, 200) / est_rate
    span = max(target_ios, 4 * n) / est_rate
    lat: list[float] = []
    host = prof.host_overhead_s

    def loop():
        while True:
            op = READ if rng.random() < job.read_share else WRITE
            t0 = env.now
            done = dev.schedule(env.now, op, job.block_bytes) + host
            yield env.timeout(done - env.now)
            if env.now >= warm:
                lat.append(env.now - t0)
            if think_s > 0:
                yield env.timeout(think_s)

    for _ in range(n):
        env.process(loop())
    env.run(until=warm + span)
    return _prediction(job, lat, span)


def _lognormal_stream(mean: float, cv: float, rng: np.random.Generator, batch: int = 4096):
    """Endless draws of a lognormal with this mean and coefficient of variation (cv 0: the mean)."""
    if cv <= 0:
        while True:
            yield mean
    s2 = math.log1p(cv * cv)
    while True:
        yield from (mean * np.exp(-0.5 * s2 + math.sqrt(s2) * rng.standard_normal(batch))).tolist()


def simulate_job_on_host(profile_doc: dict, job: FioJob, think_s: float, block: BlockLayerConfig,
                         seed: int = 1, target_ios: int = 4000) -> JobPrediction:
    """Run a fio job through the host's block layer (models.block_layer): numjobs processes, each
    keeping iodepth I/Os in flight as fio's libaio engine does with its defaults: submit one I/O at
    a time (io_submit sleeps in request allocation while the request list is full), reap one
    completion, submit one. fio times an I/O from the end of its io_submit to its reaping (clat),
    and io_submit itself (slat); the percentiles returned are clat percentiles plus the mean slat,
    as measured_latency reads a fio result. A process asleep in allocation leaves its finished I/Os
    unreaped, so their latency runs on."""
    prof = profile_from_dict(profile_doc, "profile")
    env = simpy.Environment()
    dev = Device(env, prof, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    host = prof.host_overhead_s
    n = job.outstanding
    est_rate = _closed_loop_rate(prof, job, think_s)
    span = max(target_ios, 4 * n) / est_rate
    warm = max(2 * n, 200) / est_rate
    if block.elevator == "cfq" and job.numjobs > 1:
        # slices run to 100 ms and waits to several slices: see them several times over
        span = max(span, 2.0)
        warm = max(warm, 0.3)
    clat: list[float] = []
    slat: list[float] = []
    host_time = _lognormal_stream(host, prof.host_overhead_cv, np.random.default_rng(seed + 2))
    finished: list[list[Request]] = [[] for _ in range(job.numjobs)]
    wake_done: list[simpy.Event | None] = [None] * job.numjobs
    wake_alloc: list[simpy.Event | None] = [None] * job.numjobs

    def woken(pid: int, _now: float) -> None:
        ev = wake_alloc[pid]
        if ev is not None:
            wake_alloc[pid] = None
            ev.succeed()

    def to_reap(rq: Request) -> None:
        """The device finished rq: it waits for its process to reap it."""
        finished[rq.pid].append(rq)
        waiting = wake_done[rq.pid]
        if waiting is not None:
            wake_done[rq.pid] = None
            waiting.succeed()

    hq = HostQueue(env, dev, block, on_wake=woken, on_done=to_reap)
    bl = hq.layer

    def submit(pid):
        t0 = env.now
        # io_submit's own path (the profile's host_overhead_s, fio's median slat, with its measured
        # spread): one I/O after another, so completions elsewhere go on while a process submits
        yield env.timeout(next(host_time))
        while not bl.try_allocate(pid, env.now):
            ev = wake_alloc[pid] = env.event()
            bl.wait_allocation(pid)
            yield ev
            bl.set_batching(pid, env.now)
        if env.now >= warm:
            slat.append(env.now - t0)
        op = READ if rng.random() < job.read_share else WRITE
        hq.insert(Request(pid, op, job.block_bytes, env.now))

    def process(pid):
        # fio's libaio loop with its defaults (iodepth_batch_submit = iodepth_batch_complete_min =
        # iodepth_batch_complete_max = 1): fill the queue, then reap one completion and submit one
        for _ in range(job.iodepth):
            yield from submit(pid)
        while True:
            if not finished[pid]:
                ev = wake_done[pid] = env.event()
                yield ev
            rq = finished[pid].pop(0)
            if env.now >= warm:
                clat.append(env.now - rq.ready_s)
            if think_s > 0:
                yield env.timeout(think_s)
            yield from submit(pid)

    for pid in range(job.numjobs):
        env.process(process(pid))
    env.run(until=warm + span)
    return _prediction(job, clat, span, float(np.mean(slat)) if slat else 0.0)


def measured_latency(job: FioJob, q: float) -> float:
    """Completion-latency percentile of the job (both directions by I/O count) plus mean submission."""
    parts = [(d.ios or d.iops, d) for d in (job.read, job.write) if d is not None]
    total = sum(w for w, _ in parts)
    return sum(w * (d.clat.percentile_s(q) + (d.lat.mean_s - d.clat.mean_s)) for w, d in parts) / total


def measured_mean(job: FioJob) -> float:
    parts = [(d.iops, d.lat.mean_s) for d in (job.read, job.write) if d is not None]
    return sum(w * m for w, m in parts) / sum(w for w, _ in parts)


def holdout_rows(preds: list[JobPrediction]) -> list[dict]:
    """{"job", "metric", "measured", "predicted", "rel_error"} per held-out job and metric."""
    rows = []
    for p in preds:
        for metric, meas, pred in (("iops", p.job.iops, p.iops),
                                   ("lat_p50", measured_latency(p.job, 50.0), p.lat_p50_s),
                                   ("lat_p99", measured_latency(p.job, 99.0), p.lat_p99_s)):
            rel = (pred - meas) / meas if meas and math.isfinite(meas) else None
            rows.append({"job": p.job.label(), "metric": metric, "measured": meas, "predicted": pred,
                         "rel_error": rel,
                         "within_target": None if rel is None else abs(rel) <= TARGETS[metric]})
    return rows


def holdout_summary(rows: list[dict]) -> list[dict]:
    """Per metric of holdout_rows: its target, the held-out jobs within it, and the median |error|."""
    out = []
    for metric, target in TARGETS.items():
        sel = [r for r in rows if r["metric"] == metric and r["rel_error"] is not None]
        if sel:
            out.append({"metric": metric, "target": target, "within": sum(bool(r["within_target"]) for r in sel),
                        "of": len(sel), "median_abs_error": float(np.median([abs(r["rel_error"]) for r in sel]))})
    return out


def split_holdout(jobs: list[FioJob], spec: str | None) -> tuple[list[FioJob], list[FioJob]]:
    """`key=value` of a job option: matching jobs are held out of the fit."""
    if not spec:
        return jobs, []
    if "=" not in spec:
        raise InputError("--holdout", "", f"{spec!r} is not key=value", "a fio job option, e.g. numjobs=16")
    key, value = (s.strip() for s in spec.split("=", 1))
    held = [j for j in jobs if j.options.get(key) == value]
    if not held:
        raise InputError("--holdout", "", f"no job has {key}={value}",
                         "a fio option and value that some jobs have")
    if len(held) == len(jobs):
        raise InputError("--holdout", "", f"every job has {key}={value}; nothing is left to fit")
    return [j for j in jobs if j not in held], held


@dataclass(frozen=True)
class Calibration:
    """A fit and its check: the profile, the jobs it was fitted on and held out, every job rerun,
    and the jobs the model does not speak for (with the reason)."""
    fit: DeviceFit
    train: list[FioJob]
    held: list[FioJob]
    preds: list[JobPrediction]
    unused: tuple[tuple[FioJob, str], ...] = ()
    host: BlockLayerConfig | None = None          # the measuring host's block layer, when given
    flush_rows: tuple[dict, ...] = ()             # fdatasync jobs: measured beside the profile's run

    @property
    def holdout_rows(self) -> list[dict]:
        return holdout_rows([p for p in self.preds if p.job in self.held])


def flush_rows(profile_doc: dict, jobs: list[FioJob], held: set[int]) -> tuple[dict, ...]:
    """Each fdatasync job (flush_job) measured beside the profile's run of it (simulate_flush_job);
    `held` holds the id() of the jobs held out of the fit."""
    rows = []
    for j in jobs:
        if not flush_job(j):
            continue
        rate, sync_s = simulate_flush_job(profile_doc, j)
        rows.append({"job": j.label(), "set": "held out" if id(j) in held else "fit",
                     "writes_per_s_measured": j.iops, "writes_per_s_fitted": rate,
                     "sync_mean_us_measured": j.sync.mean_s * 1e6, "sync_mean_us_fitted": sync_s * 1e6,
                     "sync_p99_us_measured": j.sync.percentile_s(99.0) * 1e6})
    return tuple(rows)


def fit_with_holdout(jobs: list[FioJob], holdout: str | None, name: str, source: str,
                     host: BlockLayerConfig | None = None):
    """Fit on the jobs not held out. Returns (fit, jobs fitted, held-out jobs the model speaks for,
    ((job, why), ...) for the jobs it does not)."""
    train, held = split_holdout(jobs, holdout)
    fit = fit_device(train, name, source, host)
    unused = list(fit.unused)
    held_ok = []
    for j in held:
        why = fit.why_unused(j)
        if why is None:
            held_ok.append(j)
        else:
            unused.append((j, why))
    if held and not held_ok:
        raise InputError("--holdout", "", f"every job with {holdout} is sequential and the model is fitted to "
                         "random I/O", "a job option that random jobs have")
    used = [j for j in train if fit.why_unused(j) is None]
    return fit, used, held_ok, tuple(unused)


def predict_job(fit: "DeviceFit", job: FioJob, host: BlockLayerConfig | None = None) -> JobPrediction:
    """The fitted profile's run of a job: on the device alone, or through the host's block layer."""
    if host is None:
        return simulate_job(fit.profile, job, fit.think_s)
    return simulate_job_on_host(fit.profile, job, fit.think_s, host)


def calibrate_fio(jobs: list[FioJob], holdout: str | None, name: str, source: str,
                  host: BlockLayerConfig | None = None, workers: int = 1) -> Calibration:
    """Fit on the jobs not held out, then simulate every job the fitted profile speaks for (in
    `workers` processes when more than one; each job's run is seeded alike, so the result is the
    same either way)."""
    fit, used, held, unused = fit_with_holdout(jobs, holdout, name, source, host)
    todo = [(fit, j, host) for j in used + held]
    if workers > 1 and len(todo) > 1:
        from concurrent.futures import ProcessPoolExecutor
        # the longest runs first (CFQ-shaped jobs simulate seconds), so the workers finish together
        order = sorted(range(len(todo)), key=lambda i: (not shaped_by_host(todo[i][1], host),
                                                         -todo[i][1].outstanding))
        with ProcessPoolExecutor(max_workers=min(workers, len(todo))) as ex:
            out = dict(zip(order, ex.map(predict_job, *zip(*(todo[i] for i in order)))))
        preds = [out[i] for i in range(len(todo))]
    else:
        preds = [predict_job(*t) for t in todo]
    held_out = {id(j) for j in split_holdout(jobs, holdout)[1]}
    return Calibration(fit, used, held, preds, unused, host, flush_rows(fit.profile, jobs, held_out))


REPORT_COLUMNS = ("job", "set", "rw", "block_bytes", "outstanding", "iops_measured", "iops_fitted",
                  "lat_mean_us_measured", "lat_mean_us_fitted", "lat_p50_us_measured", "lat_p50_us_fitted",
                  "lat_p99_us_measured", "lat_p99_us_fitted", "lat_p999_us_measured", "lat_p999_us_fitted")


def report_rows(cal: Calibration) -> list[dict]:
    """Per job: measured and fitted IOPS and latencies (µs), and whether it was fitted or held out."""
    rows = []
    for p in cal.preds:
        j = p.job
        rows.append(dict(zip(REPORT_COLUMNS, (
            j.label(), "held out" if j in cal.held else "host-shaped" if shaped_by_host(j, cal.host) else "fit",
            j.rw, j.block_bytes, j.outstanding,
            j.iops, p.iops, measured_mean(j) * 1e6, p.lat_mean_s * 1e6,
            measured_latency(j, 50.0) * 1e6, p.lat_p50_s * 1e6, measured_latency(j, 99.0) * 1e6,
            p.lat_p99_s * 1e6, measured_latency(j, 99.9) * 1e6, p.lat_p999_s * 1e6))))
    for j, why in cal.unused:
        rows.append(dict(zip(REPORT_COLUMNS, (
            j.label(), why, j.rw, j.block_bytes, j.outstanding, j.iops, math.nan, measured_mean(j) * 1e6, math.nan,
            measured_latency(j, 50.0) * 1e6, math.nan, measured_latency(j, 99.0) * 1e6, math.nan,
            measured_latency(j, 99.9) * 1e6, math.nan))))
    return rows
