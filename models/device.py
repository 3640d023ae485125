"""A flash device as k parallel FCFS servers with per-(operation, block size) service times.

The model is the calibratable one of shared/research/fs-device.md section 2.5: an effective number
of parallel servers k, a service time per (op, bs) fixed by the measured saturation capacity
(S = k / C), a fixed pipeline latency that makes the queue-depth-1 latency match the measured one
(R0 = S + pipeline), a read/write mix multiplier fitted to the measured mixed capacity (2.2), an
optional capacity curve against outstanding requests, and an optional garbage-collection stall
process (2.4: erases at a rate proportional to host writes, each seizing one server).

A front end (`front_end`, fitted by sim.calibrate where the data ask for it) puts one FIFO stage
before the units: the controller and its host link, which every command crosses one at a time.
The class's capacity is then the front end's (service 1 / C), the units take `unit_service_s`
each, and the pipeline is what is left of the QD1 latency. Queues then form at the front end,
whose waits are a sum of many similar services, so latency at depth is as regular as measured:
the Intel D3-S4610 and Samsung PM883 sets in shared/data/fio give p99 / p50 of 1.2-1.5 at 16 or 32
outstanding I/Os however they are split over processes, where k striped units with no front end
gave about 2 (their units' queues are uneven).

A non-volatile (battery- or flash-backed) write cache, as on RAID controllers, is optional: a write
is acknowledged after `write_cache.latency_s` once the cache has room for it, while the units
destage it as before; the cache holds every write whose destage has not finished, so when the
destage backlog exceeds `write_cache.bytes` writers wait for the oldest writes to leave it (FIFO).
This is the usual write-back controller (e.g. LSI MegaRAID / Dell PERC with BBU, 512 MB-1 GB);
reads are not cached and queue with the destage on the units. Writes that continue a sequential
stream (the redo log, the binary log, the filesystem journal: `schedule_append`) are gathered in
the cache and destaged at the bandwidth of the largest measured write. Two depths follow:
`outstanding` counts every I/O not yet on the media (what the units and the depth curve see),
`host_outstanding` those not yet acknowledged (what iostat's queue size shows the host).

Scheduling uses the busy-until form (as FEMU's per-unit `next_avail_time`): an I/O submitted at t
starts on the server that frees first, at max(t, free); FCFS k-server exactly, one SimPy event per I/O.
Callers may admit an I/O ahead of the simulated present (a transaction's second read is admitted,
at the time its first completes, when the transaction starts). Such an I/O leaves its unit idle
between the present and its start, and an I/O admitted later with an earlier time uses that idle
time (`IdleTime`) instead of queueing behind a request the host has not yet sent: the device
serves requests in the order they reach it, not the order the simulator computed them. Admitted in
time order, the schedule is the plain busy-until one.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from models.errors import InputError
from models.queueing import (depth_factor, interpolate_log2, mix_multiplier, mix_multiplier_at_half,
                             mixed_capacity_iops)

READ = "read"
WRITE = "write"
OPS = (READ, WRITE)


@dataclass(frozen=True)
class OpClass:
    """Measured figures of one (operation, block size) on the raw device."""

    capacity_iops: float
    latency_qd1_s: float
    service_cv: float = 0.3
    depth_curve: tuple[tuple[int, float], ...] = ()
    unit_service_s: float | None = None     # a unit's time when the device has a front end


@dataclass(frozen=True)
class DeviceProfile:
    """Parameters of one device, as stored in a JSON profile."""

    name: str
    source: str
    parallelism: int
    host_overhead_s: float
    classes: dict[str, dict[int, OpClass]]
    mixed_capacity_iops: dict[int, float] = field(default_factory=dict)
    volatile_write_cache: bool = False
    flush_s: float = 0.0
    gc_erases_per_write: float = 0.0
    gc_stall_s: float = 0.0
    write_cache_bytes: int = 0
    write_cache_latency_s: float = 0.0
    # The block layer merges queued writes to adjacent addresses into one request (a request-based
    # driver under an I/O scheduler, e.g. SCSI/SATA disks with deadline or cfq; elv_merge). Off for
    # bio-based drivers (Fusion-io's iomemory_vsl) and when nothing says it happens (fio random
    # jobs cannot show it). Used for the page writes of one doublewrite batch (models.fil).
    merge_adjacent_writes: bool = False
    # The block device reports itself rotational (/sys/block/DEV/queue/rotational = 1: disks, RAID
    # virtual disks over disks, many virtio disks). MariaDB 10.5+ flushes innodb_flush_neighbors
    # neighbours only on such storage (buf_flush_try_neighbors: space->is_rotational()); MySQL
    # does not ask. fio output does not show it.
    rotational: bool = False
    description: str = ""
    # Spread (coefficient of variation) of the host path, from fio's slat stddev over its mean in
    # one-process jobs. Used where the host's block layer is modelled (models.block_layer): when a
    # submitter is back matters there, as CFQ lets an arrival preempt a queue with nothing queued.
    host_overhead_cv: float = 0.0
    # Per operation. "pooled": an I/O takes whichever unit frees first (ideal parallelism; writes
    # on a log-structured FTL, which places each write where the log is). "striped": an I/O goes to
    # the unit its address maps to, uniformly at random for random I/O, so requests collide on busy
    # units while others idle (channel/die conflicts; fs-device.md 2.3).
    unit_assignment: dict[str, str] = field(default_factory=lambda: {READ: "pooled", WRITE: "pooled"})
    # One FIFO stage before the units (controller and host link): each I/O holds it for
    # 1 / capacity_iops of its class, then its unit for the class's unit_service_s.
    front_end: bool = False

    def op_class(self, op: str, size_bytes: int) -> OpClass:
        """Figures for (op, size): measured if present, else interpolated in log2(size)."""
        table = self.classes[op]
        if size_bytes in table:
            return table[size_bytes]
        cap = interpolate_log2(size_bytes, [(s, c.capacity_iops) for s, c in table.items()])
        lat = interpolate_log2(size_bytes, [(s, c.latency_qd1_s) for s, c in table.items()])
        nearest = min(table, key=lambda s: abs(math.log2(s) - math.log2(size_bytes)))
        ref = table[nearest]
        unit = None
        if self.front_end:
            share = interpolate_log2(size_bytes, [(s, c.unit_service_s / (c.latency_qd1_s - 1.0 / c.capacity_iops)
                                                   if c.latency_qd1_s > 1.0 / c.capacity_iops else 0.0)
                                                  for s, c in table.items()])
            unit = min(self.parallelism / cap, max(0.0, share * (lat - 1.0 / cap)))
        return OpClass(cap, lat, ref.service_cv, ref.depth_curve, unit)

    def mix_multiplier_at_half(self, size_bytes: int) -> float:
        """m_50 for this block size from the measured 50/50 capacity (1.0 when none is measured)."""
        if not self.mixed_capacity_iops:
            return 1.0
        if size_bytes in self.mixed_capacity_iops:
            c_mix = self.mixed_capacity_iops[size_bytes]
        else:
            c_mix = interpolate_log2(size_bytes, list(self.mixed_capacity_iops.items()))
        r = self.op_class(READ, size_bytes).capacity_iops
        w = self.op_class(WRITE, size_bytes).capacity_iops
        return mix_multiplier_at_half(r, w, c_mix)

    def capacity_iops(self, read_fraction: float, size_bytes: int) -> float:
        """Saturation IOPS of a stream with this read fraction (no depth-curve reduction)."""
        return mixed_capacity_iops(read_fraction, self.op_class(READ, size_bytes).capacity_iops,
                                   self.op_class(WRITE, size_bytes).capacity_iops,
                                   self.mix_multiplier_at_half(size_bytes))


def _num(src: str, path: str, value: object, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(src, path, f"{value!r} is not a number", f"{lo:g} to {hi:g}")
    if not (lo <= float(value) <= hi):
        raise InputError(src, path, f"{value!r} is out of range", f"{lo:g} to {hi:g}")
    return float(value)


_PROFILE_KEYS = {"name", "source", "description", "parallelism", "host_overhead_s", "host_overhead_cv", "classes",
                 "mixed_capacity_iops", "volatile_write_cache", "flush_s", "gc", "unit_assignment",
                 "write_cache", "merge_adjacent_writes", "rotational", "front_end"}
UNIT_ASSIGNMENTS = ("pooled", "striped")


def profile_from_dict(data: dict, src: str) -> DeviceProfile:
    """Validate a profile document; every error names the JSON path and what is allowed."""
    if not isinstance(data, dict):
        raise InputError(src, "(top level)", "a device profile must be a JSON object")
    unknown = sorted(set(data) - _PROFILE_KEYS)
    if unknown:
        raise InputError(src, unknown[0], "unknown key", ", ".join(sorted(_PROFILE_KEYS)))
    for key in ("name", "source", "parallelism", "host_overhead_s", "classes"):
        if key not in data:
            raise InputError(src, key, "missing")
    k = _num(src, "parallelism", data["parallelism"], 1, 4096)
    if k != int(k):
        raise InputError(src, "parallelism", f"{k!r} is not a whole number", "1 to 4096")
    front_end = data.get("front_end", False)
    if not isinstance(front_end, bool):
        raise InputError(src, "front_end", f"{front_end!r} is not a boolean", "true or false")
    host = _num(src, "host_overhead_s", data["host_overhead_s"], 0.0, 1.0)
    classes: dict[str, dict[int, OpClass]] = {}
    if not isinstance(data["classes"], dict) or set(data["classes"]) != set(OPS):
        raise InputError(src, "classes", "must hold exactly the keys read and write")
    for op in OPS:
        table = data["classes"][op]
        if not isinstance(table, dict) or not table:
            raise InputError(src, f"classes.{op}", "must map block sizes in bytes to figures")
        classes[op] = {}
        for size_key, fig in table.items():
            path = f"classes.{op}.{size_key}"
            if not str(size_key).isdigit() or int(size_key) < 512:
                raise InputError(src, path, "block size key must be bytes, e.g. \"4096\"", ">= 512")
            if not isinstance(fig, dict):
                raise InputError(src, path, "must be an object")
            extra = sorted(set(fig) - {"capacity_iops", "latency_qd1_s", "service_cv", "depth_curve",
                                       "unit_service_s"})
            if extra:
                raise InputError(src, f"{path}.{extra[0]}", "unknown key",
                                 "capacity_iops, latency_qd1_s, service_cv, depth_curve, unit_service_s")
            for req in ("capacity_iops", "latency_qd1_s"):
                if req not in fig:
                    raise InputError(src, f"{path}.{req}", "missing")
            cap = _num(src, f"{path}.capacity_iops", fig["capacity_iops"], 1.0, 1e9)
            lat = _num(src, f"{path}.latency_qd1_s", fig["latency_qd1_s"], 1e-7, 10.0)
            cv = _num(src, f"{path}.service_cv", fig.get("service_cv", 0.3), 0.0, 10.0)
            curve_raw = fig.get("depth_curve", [])
            curve: list[tuple[int, float]] = []
            if not isinstance(curve_raw, list):
                raise InputError(src, f"{path}.depth_curve", "must be a list of [depth, factor]")
            for i, pt in enumerate(curve_raw):
                if not (isinstance(pt, list) and len(pt) == 2):
                    raise InputError(src, f"{path}.depth_curve[{i}]", "must be [depth, factor]")
                d = _num(src, f"{path}.depth_curve[{i}][0]", pt[0], 1, 1e6)
                f = _num(src, f"{path}.depth_curve[{i}][1]", pt[1], 0.01, 1.0)
                if curve and d <= curve[-1][0]:
                    raise InputError(src, f"{path}.depth_curve[{i}]", "depths must increase")
                curve.append((int(d), f))
            unit = None
            if front_end:
                if "unit_service_s" not in fig:
                    raise InputError(src, f"{path}.unit_service_s", "missing (the profile has a front end)",
                                     "a unit's service time in seconds")
                unit = _num(src, f"{path}.unit_service_s", fig["unit_service_s"], 0.0, 10.0)
                if 1.0 / cap + unit > lat * (1 + 1e-9):
                    raise InputError(
                        src, path,
                        f"the front end's 1 / capacity {1e6 / cap:.1f} us plus unit_service_s {unit * 1e6:.1f} us "
                        f"exceeds the QD1 latency {lat * 1e6:.1f} us",
                        f"unit_service_s <= latency_qd1_s - 1 / capacity_iops = {(lat - 1.0 / cap) * 1e6:.1f} us")
                if unit > k / cap * (1 + 1e-9):
                    raise InputError(
                        src, f"{path}.unit_service_s",
                        f"{unit * 1e6:.1f} us on {int(k)} units serves fewer than capacity_iops {cap:g}",
                        f"<= parallelism / capacity_iops = {k / cap * 1e6:.1f} us")
            elif "unit_service_s" in fig:
                raise InputError(src, f"{path}.unit_service_s", "given without a front end",
                                 "set \"front_end\": true, or leave unit_service_s out")
            else:
                service = k / cap
                if service > lat * (1 + 1e-9):
                    raise InputError(
                        src, path,
                        f"parallelism {int(k)} / capacity {cap:g} IOPS = {service * 1e6:.1f} us of service "
                        f"exceeds the QD1 latency {lat * 1e6:.1f} us",
                        f"parallelism <= capacity_iops x latency_qd1_s = {cap * lat:.2f}")
            classes[op][int(size_key)] = OpClass(cap, lat, cv, tuple(curve), unit)
    mixed: dict[int, float] = {}
    mixed_raw = data.get("mixed_capacity_iops") or {}
    if not isinstance(mixed_raw, dict):
        raise InputError(src, "mixed_capacity_iops", "must map block sizes in bytes to IOPS")
    for size_key, cap in mixed_raw.items():
        if not str(size_key).isdigit():
            raise InputError(src, f"mixed_capacity_iops.{size_key}", "block size key must be bytes")
        mixed[int(size_key)] = _num(src, f"mixed_capacity_iops.{size_key}", cap, 1.0, 1e9)
    gc = data.get("gc") or {}
    if not isinstance(gc, dict) or set(gc) - {"erases_per_write", "stall_s"}:
        raise InputError(src, "gc", "must be an object with erases_per_write and stall_s")
    raw_assign = data.get("unit_assignment", "pooled")
    if isinstance(raw_assign, str):
        raw_assign = {READ: raw_assign, WRITE: raw_assign}
    if not isinstance(raw_assign, dict) or set(raw_assign) - set(OPS):
        raise InputError(src, "unit_assignment", f"{raw_assign!r} is not valid",
                         "pooled, striped, or {\"read\": ..., \"write\": ...}")
    assignment = {}
    for op in OPS:
        a = raw_assign.get(op, "pooled")
        if a not in UNIT_ASSIGNMENTS:
            raise InputError(src, f"unit_assignment.{op}" if isinstance(data.get("unit_assignment"), dict)
                             else "unit_assignment", f"{a!r} is not known", ", ".join(UNIT_ASSIGNMENTS))
        assignment[op] = a
    wc = data.get("write_cache") or {}
    if not isinstance(wc, dict) or set(wc) - {"bytes", "latency_s"} or (wc and set(wc) != {"bytes", "latency_s"}):
        raise InputError(src, "write_cache", "must be an object with bytes and latency_s",
                         '{"bytes": 536870912, "latency_s": 0.0002}')
    wc_bytes = _num(src, "write_cache.bytes", wc.get("bytes", 0), 0, 1 << 40)
    if wc_bytes != int(wc_bytes):
        raise InputError(src, "write_cache.bytes", f"{wc_bytes!r} is not a whole number", "0 to 2^40")
    wc_lat = _num(src, "write_cache.latency_s", wc.get("latency_s", 0.0), 0.0, 1.0)
    merge = data.get("merge_adjacent_writes", False)
    if not isinstance(merge, bool):
        raise InputError(src, "merge_adjacent_writes", f"{merge!r} is not a boolean", "true or false")
    rotational = data.get("rotational", False)
    if not isinstance(rotational, bool):
        raise InputError(src, "rotational", f"{rotational!r} is not a boolean", "true or false")
    if wc and data.get("volatile_write_cache"):
        raise InputError(src, "write_cache", "a non-volatile write cache and volatile_write_cache = true "
                         "describe two different devices", "one of them")
    return DeviceProfile(
        write_cache_bytes=int(wc_bytes),
        write_cache_latency_s=wc_lat,
        merge_adjacent_writes=merge,
        rotational=rotational,
        front_end=front_end,
        unit_assignment=assignment,
        name=str(data["name"]),
        source=str(data["source"]),
        description=str(data.get("description", "")),
        parallelism=int(k),
        host_overhead_s=host,
        host_overhead_cv=_num(src, "host_overhead_cv", data.get("host_overhead_cv", 0.0), 0.0, 10.0),
        classes=classes,
        mixed_capacity_iops=mixed,
        volatile_write_cache=bool(data.get("volatile_write_cache", False)),
        flush_s=_num(src, "flush_s", data.get("flush_s", 0.0), 0.0, 1.0),
        gc_erases_per_write=_num(src, "gc.erases_per_write", gc.get("erases_per_write", 0.0), 0.0, 1.0),
        gc_stall_s=_num(src, "gc.stall_s", gc.get("stall_s", 0.0), 0.0, 1.0),
    )


def builtin_profile_names() -> list[str]:
    """Names of the profiles shipped in models/profiles."""
    root = resources.files("models") / "profiles"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".json"))


def builtin_profile_doc(name: str) -> dict:
    """A built-in profile's JSON document (what sim.calibrate's job runs take)."""
    return json.loads((resources.files("models") / "profiles" / f"{name}.json").read_text(encoding="utf-8"))


def load_profile(name_or_path: str) -> DeviceProfile:
    """A built-in profile by name, or a JSON file by path."""
    if name_or_path in builtin_profile_names():
        ref = resources.files("models") / "profiles" / f"{name_or_path}.json"
        src = f"built-in profile {name_or_path}"
        text = ref.read_text(encoding="utf-8")
    else:
        path = Path(name_or_path)
        if not path.is_file():
            raise InputError(name_or_path, "", "no such device profile",
                             "a built-in name (" + ", ".join(builtin_profile_names()) + ") or a JSON file")
        src = str(path)
        try:
            text = path.read_bytes().decode("utf-8-sig")    # a BOM (Windows editors) is dropped
        except UnicodeDecodeError:
            raise InputError(src, "", "not UTF-8 text", "a device profile JSON file") from None
        except OSError as err:
            raise InputError(src, "", f"cannot be read: {err.strerror}", "a readable device profile") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(src, f"line {err.lineno}", f"not valid JSON: {err.msg}") from None
    return profile_from_dict(data, src)


_GAP_EPS_S = 1e-9          # idle pieces shorter than this are dropped
_GAP_KEEP_S = 0.005        # idle time this far before the present is forgotten (admissions run late by
                           # at most a drain step, models.user_threads)
_GAP_MAX = 256             # idle pieces kept per unit (the oldest go first)


class IdleTime:
    """The idle pieces [start, end) of one unit before its busy-until time, ascending: left where an
    I/O was admitted ahead of the simulated present, taken by I/Os admitted later with earlier times."""

    __slots__ = ("starts", "ends")

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def __bool__(self) -> bool:
        return bool(self.ends)

    def earliest_start(self, free_s: float, now_s: float, service_s: float) -> tuple[float, int]:
        """Earliest start at or after now_s for service_s of work on a unit busy until free_s except
        in these pieces. Returns (start, index of the piece used, or -1 for after free_s)."""
        starts, ends = self.starts, self.ends
        n = len(ends)
        i = bisect.bisect_right(ends, now_s)          # the first piece that ends after now_s
        while i < n:
            g0 = starts[i]
            start = g0 if g0 > now_s else now_s
            if start + service_s <= ends[i]:
                return start, i
            i += 1
        return (now_s if free_s < now_s else free_s), -1

    def book(self, free_s: float, start_s: float, service_s: float, idx: int, present_s: float) -> float:
        """Occupy [start_s, start_s + service_s) as earliest_start chose it; returns the unit's new
        busy-until time."""
        end = start_s + service_s
        starts, ends = self.starts, self.ends
        if idx >= 0:
            g0, g1 = starts[idx], ends[idx]
            new_s, new_e = [], []
            if start_s - g0 > _GAP_EPS_S:
                new_s.append(g0)
                new_e.append(start_s)
            if g1 - end > _GAP_EPS_S:
                new_s.append(end)
                new_e.append(g1)
            starts[idx:idx + 1] = new_s
            ends[idx:idx + 1] = new_e
            return free_s
        lo = free_s if free_s > present_s else present_s
        if start_s - lo > _GAP_EPS_S:                # admitted ahead of the present: idle until it starts
            starts.append(lo)
            ends.append(start_s)
            if len(ends) > _GAP_MAX:
                del starts[0], ends[0]
        return end

    def forget_before(self, horizon_s: float) -> None:
        """Drop the pieces that ended by horizon_s."""
        i = bisect.bisect_right(self.ends, horizon_s)
        if i:
            del self.starts[:i], self.ends[:i]

    def after(self, now_s: float) -> float:
        """Idle time after now_s."""
        return sum(e - (g if g > now_s else now_s) for g, e in zip(self.starts, self.ends) if e > now_s)


class Draws:
    """Blocks of vectorised random draws consumed one at a time (keeps numpy out of the hot loop).

    `next()` is `itertools.chain`'s `__next__` over the blocks: one C call per draw, with no
    Python frame resumed inside a block. The blocks are drawn when the previous one runs out (the
    first at construction with prefill), so the random stream is the same whichever way the
    values are taken.
    """

    def __init__(self, make_block, block: int = 8192, prefill: bool = False) -> None:
        self._make = make_block
        self._block = block
        self.next = itertools.chain.from_iterable(
            self._blocks(make_block(block).tolist() if prefill else None)).__next__

    def _blocks(self, first):
        if first is not None:
            yield first
        while True:
            yield self._make(self._block).tolist()


@dataclass
class DeviceStats:
    """Counters of one device since the last reset."""

    ops: dict[str, int] = field(default_factory=lambda: {READ: 0, WRITE: 0})
    bytes: dict[str, int] = field(default_factory=lambda: {READ: 0, WRITE: 0})
    latency_sum_s: float = 0.0
    queue_wait_sum_s: float = 0.0
    busy_sum_s: float = 0.0        # unit time of everything admitted since the reset
    carry_in_s: float = 0.0        # unit time still queued from before the reset
    flushes: int = 0
    gc_stalls: int = 0
    appends: int = 0               # writes gathered into a sequential stream (schedule_append)


class Device:
    """The simulated device: `schedule` is the pure scheduling step, `submit` its SimPy wrapper."""

    def __init__(self, env, profile: DeviceProfile, rng: np.random.Generator) -> None:
        self.env = env
        self.profile = profile
        self._units = [0.0] * profile.parallelism       # free time of each unit
        self._gaps = [IdleTime() for _ in range(profile.parallelism)]
        self._gap_ends = [g.ends for g in self._gaps]  # the same lists (IdleTime only edits them in place)
        self._n_units = profile.parallelism
        self._has_gaps = False
        self._forgot_at_s = -1.0                        # the present _forget_gaps last ran at
        self._striped_op = {op: profile.unit_assignment[op] == "striped" for op in OPS}
        # The front end (profile.front_end): its free time and idle pieces. Its time is what limits
        # the device, so busy time counts it once per unit (busy_s / (units x dt) = its share).
        self._fe_free = 0.0
        self._fe_gaps = IdleTime()
        self._busy_scale = float(profile.parallelism) if profile.front_end else 1.0
        self._largest = {op: max(profile.classes[op]) for op in OPS}   # schedule_sized splits above it
        self._inflight: list[float] = []
        # With a write cache: when each I/O in _inflight is acknowledged to the host (a cached
        # write long before its destage ends). Without one the two lists would be the same.
        self._acked: list[float] = []
        self._read_ewma: float | None = None     # read share of recent I/Os (about the last 256)
        self._ewma_alpha = 1.0 / 256.0
        self._classes: dict[tuple[str, int], tuple] = {}
        self._unit = Draws(lambda n: rng.random(n))
        self._lognormal: dict[float, Draws] = {}
        self._rng = rng
        self.stats = DeviceStats()
        # Non-volatile write cache: per admitted write, the cumulative bytes admitted and the
        # running maximum of destage ends; entries before _wc_head have left the cache.
        self._wc_bytes = profile.write_cache_bytes
        self._wc_latency_s = profile.write_cache_latency_s
        self._wc_cum: list[int] = []
        self._wc_end: list[float] = []
        self._wc_head = 0
        self._wc_total = 0
        self._wc_left = 0

    def _cache_ack(self, now: float, nbytes: int, destage_done: float) -> float:
        """When a write of nbytes destaged by destage_done is acknowledged to the host."""
        if nbytes > self._wc_bytes:
            return destage_done                          # larger than the cache: written through
        cum, end = self._wc_cum, self._wc_end
        head = self._wc_head
        while head < len(end) and end[head] <= now:
            self._wc_left = cum[head]
            head += 1
        if head > 65536:                                 # compact what has left the cache
            del cum[:head], end[:head]
            head = 0
        self._wc_head = head
        admit = now
        need = self._wc_total + nbytes - self._wc_bytes  # bytes that must have left the cache first
        if need > self._wc_left:
            i = bisect.bisect_left(cum, need, head)
            admit = max(now, end[i])
        ack = admit + self._wc_latency_s
        leaves = destage_done if destage_done > ack else ack     # in the cache until on the media
        self._wc_total += nbytes
        cum.append(self._wc_total)
        end.append(leaves if not end or end[-1] < leaves else end[-1])
        return ack

    def _class(self, op: str, size: int) -> tuple:
        """(service_s, pipeline_s, cv, depth_curve, mix multiplier at 50% reads, service-noise draw,
        unit_s) of one (op, size), computed once. Without a front end service_s is a unit's time and
        unit_s None; with one, service_s is the front end's time (1 / capacity) and unit_s a unit's."""
        key = (op, size)
        c = self._classes.get(key)
        if c is None:
            oc = self.profile.op_class(op, size)
            if self.profile.front_end:
                service = 1.0 / oc.capacity_iops
                unit_s = oc.unit_service_s or 0.0
                pipeline = max(0.0, oc.latency_qd1_s - service - unit_s)
            else:
                service = self.profile.parallelism / oc.capacity_iops
                unit_s = None
                pipeline = max(0.0, oc.latency_qd1_s - service)
            c = (service, pipeline, oc.service_cv, oc.depth_curve, self.profile.mix_multiplier_at_half(size),
                 self._noise_draws(oc.service_cv), unit_s)
            self._classes[key] = c
        return c

    def _noise_draws(self, cv: float):
        """The `next` of the shared lognormal stream (mean 1) of a service cv; None when cv <= 0."""
        if cv <= 0.0:
            return None
        d = self._lognormal.get(cv)
        if d is None:
            sigma2 = math.log1p(cv * cv)
            mu = -0.5 * sigma2
            sigma = math.sqrt(sigma2)
            d = Draws(lambda n, mu=mu, sigma=sigma: self._rng.lognormal(mu, sigma, n))
            self._lognormal[cv] = d
        return d.next

    def _service_noise(self, cv: float) -> float:
        nxt = self._noise_draws(cv)
        return 1.0 if nxt is None else nxt()

    def _pending(self, times: list[float], now: float) -> int:
        """How many of `times` (ascending) lie after `now`. Entries are forgotten only up to the
        simulated present, so a count ahead of it does not lose requests still pending now."""
        present = self.env.now
        horizon = now if now < present else present
        if times and times[0] <= horizon:
            del times[:bisect.bisect_right(times, horizon)]
        if now > horizon:
            return len(times) - bisect.bisect_right(times, now)
        return len(times)

    def outstanding(self, now: float) -> int:
        """Requests submitted and not yet complete (on the media) at `now`."""
        return self._pending(self._inflight, now)

    def _ack(self, now: float, ack_s: float) -> None:
        """Note when an I/O admitted at `now` is acknowledged (devices with a write cache)."""
        acked = self._acked
        if len(acked) > 4096:
            self.host_outstanding(now)                  # drops acknowledged entries: bounded memory
        bisect.insort(acked, ack_s)

    def host_outstanding(self, now: float) -> int:
        """Requests the host has submitted and not yet seen acknowledged at `now` (what iostat's
        queue size counts). Without a write cache this is `outstanding`; with one, a write leaves
        it when the cache takes it, and `outstanding(now) - host_outstanding(now)` is the destage
        backlog: writes acknowledged and not yet on the media."""
        return self._pending(self._acked if self._wc_bytes else self._inflight, now)

    def queue_depths(self, now: float) -> tuple[int, int]:
        """(host_outstanding, destage backlog) at `now`; without a write cache the backlog is 0 and
        the in-flight list is counted once."""
        if not self._wc_bytes:
            return self._pending(self._inflight, now), 0
        host = self._pending(self._acked, now)
        return host, self._pending(self._inflight, now) - host

    def _note_mix(self, is_read: float) -> float:
        """Fold one I/O (1.0 a read, 0.0 a write) into the read share of recent I/Os; return it."""
        ewma = self._read_ewma
        ewma = is_read if ewma is None else ewma + self._ewma_alpha * (is_read - ewma)
        self._read_ewma = ewma
        return ewma

    def schedule(self, now: float, op: str, size: int) -> float:
        """Admit one I/O at `now`; return its completion time. No SimPy involved."""
        c = self._classes.get((op, size)) or self._class(op, size)
        service, pipeline, _cv, curve, m50, noise, unit_s = c
        # _note_mix and outstanding, written out (the hottest call of the device).
        is_read = 1.0 if op == READ else 0.0
        ewma = self._read_ewma
        ewma = is_read if ewma is None else ewma + self._ewma_alpha * (is_read - ewma)
        self._read_ewma = ewma
        if m50 != 1.0 and 0.0 < ewma < 1.0:         # outside (0, 1) the multiplier is 1.0 exactly
            service *= mix_multiplier(ewma, m50)
        n_outstanding = self._pending(self._inflight, now) + 1   # also drops completed entries
        if curve:
            # The curve was measured on a single-operation stream; a mixed stream has its own
            # measured capacity (mixed_capacity_iops), so the curve's effect fades with the mix.
            purity = abs(2.0 * ewma - 1.0)
            f = depth_factor(n_outstanding, curve)
            service /= 1.0 - (1.0 - f) * purity
        z = 1.0 if noise is None else noise()
        service *= z
        # Striped: the unit the address maps to; pooled (-1): the unit that frees first.
        u = int(self._unit.next() * self._n_units) if self._striped_op[op] else -1
        if unit_s is None:
            start = self._book(now, service, u)
            done = start + service + pipeline
        else:
            # The front end first (FIFO, one at a time), then the unit, with the same draw.
            start = self._book_front(now, service)
            done = self._unit_after(start + service, unit_s * z, u) + pipeline
        media_s = done
        if self._wc_bytes:
            if op == WRITE:
                done = self._cache_ack(now, size, media_s)
                # A write held for room in a full cache reaches the media no earlier than the
                # cache takes it (its destage, booked on a unit at admission, may end sooner).
                if done > media_s:
                    media_s = done
            self._ack(now, done)
        bisect.insort(self._inflight, media_s)
        gc = self.profile.gc_erases_per_write
        if op == WRITE and gc > 0.0 and self._unit.next() < gc:
            # An erase seizes the unit that frees first, as a background GC would.
            self._seize(now, self.profile.gc_stall_s)
            self.stats.gc_stalls += 1
        st = self.stats                                 # _count, written out
        st.ops[op] += 1
        st.bytes[op] += size
        st.latency_sum_s += done - now
        st.queue_wait_sum_s += start - now
        st.busy_sum_s += service * self._busy_scale
        return done

    def _count(self, op: str, size: int, now: float, start: float, done: float, service: float) -> None:
        """One I/O in the stats: admitted at now, started at start, acknowledged at done."""
        st = self.stats
        st.ops[op] += 1
        st.bytes[op] += size
        st.latency_sum_s += done - now
        st.queue_wait_sum_s += start - now
        st.busy_sum_s += service * self._busy_scale

    def _book_front(self, now: float, service: float) -> float:
        """Give `service` of the front end's time to an I/O admitted at `now` (FIFO; idle pieces
        left by admissions ahead of the present are used as on a unit); return its start."""
        present = self.env.now
        gaps = self._fe_gaps
        if gaps or now > present:
            if gaps:
                gaps.forget_before(present - _GAP_KEEP_S)
            start, idx = gaps.earliest_start(self._fe_free, now, service)
            self._fe_free = gaps.book(self._fe_free, start, service, idx, present)
            return start
        free = self._fe_free
        start = now if free < now else free
        self._fe_free = start + service
        return start

    def _unit_after(self, arrive_s: float, work_s: float, u: int) -> float:
        """A unit's work for an I/O leaving the front end at arrive_s (u < 0: the unit that frees
        first); returns its end. Plain busy-until: I/Os reach the units in the order they are
        admitted, which is their order at the front end except where one admitted ahead of the
        present left an idle piece there that a later admission filled (no unit idle time is kept)."""
        units = self._units
        if u < 0:
            u = units.index(min(units))
        free = units[u]
        end = (arrive_s if free < arrive_s else free) + work_s
        units[u] = end
        return end

    def _book(self, now: float, service: float, u: int) -> float:
        """Give `service` of unit time to unit u (-1: the unit that can start it first) for an I/O
        admitted at `now`; return its start."""
        units = self._units
        present = self.env.now
        if self._has_gaps or now > present:
            # Admitted ahead of the present, or idle time before a unit's queued work exists.
            gaps = self._gaps
            if self._has_gaps and present != self._forgot_at_s:
                self._forget_gaps(present)                  # once per simulated instant
            if u >= 0:
                start, idx = gaps[u].earliest_start(units[u], now, service)
            else:
                best = None
                for v in range(len(units)):
                    st_v, idx_v = gaps[v].earliest_start(units[v], now, service)
                    key = (st_v, units[v])
                    if best is None or key < best:
                        best, u, start, idx = key, v, st_v, idx_v
            units[u] = gaps[u].book(units[u], start, service, idx, present)
            self._has_gaps = any(self._gap_ends)          # any(gaps), without a __bool__ call per unit
            return start
        if u < 0:
            u = units.index(min(units))                 # the unit that frees first (the first such)
        free = units[u]
        start = now if free < now else free
        units[u] = start + service
        return start

    def schedule_sized(self, now: float, op: str, size: int) -> float:
        """Admit an I/O of any size: one larger than the largest measured block is split into
        chunks of that block, admitted together (the device spreads them over its units), so a
        large sequential write costs its bytes at the measured bandwidth instead of an
        extrapolated latency. Returns the completion time of the last chunk."""
        largest = self._largest[op]
        if size <= largest:
            return self.schedule(now, op, size)
        n, rest = divmod(size, largest)
        done = self._schedule_spread(now, op, largest, n)
        if rest:
            done = max(done, self.schedule(now, op, rest))
        return done

    def schedule_append(self, now: float, size: int) -> float:
        """Admit a write that continues a sequential stream (the redo log, the binary log, the
        filesystem journal); return when it is acknowledged.

        With a write cache the controller gathers contiguous dirty data and destages it in large
        writes ("write gathering", e.g. Compaq StorageWorks RAID Array 3000 user's manual,
        'Write Gathering'), so the append takes its bytes' share of the largest measured write's
        unit time, on the unit that frees first, and is acknowledged as any cached write. Without
        a write cache it is `schedule_sized`: a flash FTL programs a small write alike wherever it
        lands, and a disk without a cache pays its rotation for each synchronous write.
        """
        largest = self._largest[WRITE]
        if not self._wc_bytes:
            return self.schedule(now, WRITE, size) if size <= largest else self.schedule_sized(now, WRITE, size)
        service, pipeline, cv, _curve, m50, noise, unit_s = (self._classes.get((WRITE, largest))
                                                             or self._class(WRITE, largest))
        service *= size / largest
        ewma = self._note_mix(0.0)
        if m50 != 1.0 and 0.0 < ewma < 1.0:
            service *= mix_multiplier(ewma, m50)
        z = 1.0 if noise is None else noise()
        service *= z
        self.outstanding(now)                           # drops completed entries: bounded memory
        if unit_s is None:
            start = self._book(now, service, -1)
            end = start + service + pipeline
        else:
            start = self._book_front(now, service)
            end = self._unit_after(start + service, unit_s * z * size / largest, -1) + pipeline
        done = self._cache_ack(now, size, end)
        bisect.insort(self._inflight, end if end > done else done)   # on the media once cached
        self._ack(now, done)
        self._count(WRITE, size, now, start, done, service)
        self.stats.appends += 1
        return done

    def _schedule_spread(self, now: float, op: str, size: int, n: int) -> float:
        """n chunks of one large I/O spread evenly over the units (consecutive addresses stripe
        over all of them, and a pooled device hands them to whichever is free): each unit serves
        its share back to back, in O(units) instead of n `schedule` calls. The depth curve (measured
        on random streams) does not apply to them."""
        service, pipeline, cv, curve, m50, _noise, unit_s = self._class(op, size)
        is_read = 1.0 if op == READ else 0.0
        if self._read_ewma is None:
            self._read_ewma = is_read
        else:
            self._read_ewma += (1.0 - (1.0 - self._ewma_alpha) ** n) * (is_read - self._read_ewma)
        if m50 != 1.0 and 0.0 < self._read_ewma < 1.0:
            service *= mix_multiplier(self._read_ewma, m50)
        units = self._units
        k = len(units)
        base, extra = divmod(n, k)
        order = sorted(range(k), key=units.__getitem__)
        done = now
        busy = 0.0
        first_start = None
        ends: list[float] = []
        ready = now                 # when the chunks reach the units (after the front end, if any)
        fe_end = now
        if unit_s is not None:
            # The front end passes the n chunks one after another; a unit starts its share when
            # the first chunk is through and ends no earlier than one unit time after the last.
            fe_work = n * service * self._service_noise(cv)
            first_start = self._book_front(now, fe_work)
            fe_end = first_start + fe_work
            ready = first_start + fe_work / n
            busy = fe_work * self._busy_scale
        for j, u in enumerate(order):
            share = base + (1 if j < extra else 0)
            if share == 0:
                continue
            if unit_s is None:
                work = share * service * self._service_noise(cv)
                start = max(now, units[u])
                units[u] = start + work
                busy += work
            else:
                work = share * unit_s * self._service_noise(cv)
                start = max(ready, units[u])
                units[u] = max(start + work, fe_end + unit_s)
                work = units[u] - start
            if first_start is None:
                first_start = start
            end = start + work + pipeline
            ends.append(end)
            done = max(done, end)
        if self._wc_bytes:
            if op == WRITE:
                done = self._cache_ack(now, n * size, done)
                ends = [e if e > done else done for e in ends]    # on the media once cached
            for _ in ends:
                self._ack(now, done)
        for e in ends:
            bisect.insort(self._inflight, e)
        st = self.stats
        st.ops[op] += n
        st.bytes[op] += n * size
        st.latency_sum_s += n * (done - now)
        st.queue_wait_sum_s += n * ((first_start or now) - now)
        st.busy_sum_s += busy
        return done

    def _seize(self, now: float, duration_s: float) -> float:
        """Occupy one unit for `duration_s` from when it frees; return the end time. (With a front
        end the busy time counts the front end's only, which this does not hold.)"""
        if not self.profile.front_end:
            self.stats.busy_sum_s += duration_s
        units = self._units
        u = min(range(len(units)), key=units.__getitem__)
        end = max(now, units[u]) + duration_s
        units[u] = end
        return end

    def schedule_flush(self, now: float) -> float:
        """A cache flush (REQ_PREFLUSH): free on a device without a volatile write cache."""
        if not self.profile.volatile_write_cache or self.profile.flush_s <= 0.0:
            return now
        self.stats.flushes += 1
        return self._seize(now, self.profile.flush_s)

    def submit(self, op: str, size: int):
        """SimPy event that fires when the I/O completes (host overhead excluded)."""
        now = self.env.now
        return self.env.timeout(self.schedule(now, op, size) - now)

    def flush(self):
        now = self.env.now
        return self.env.timeout(self.schedule_flush(now) - now)

    def _forget_gaps(self, present: float) -> None:
        """Drop idle pieces that ended well before the present (no admission can use them). `_book`
        calls it once per simulated instant: a piece left later at the same instant ends after its
        admission time, which is within a drain step of the present, so a second pass would drop
        nothing."""
        self._forgot_at_s = present
        horizon = present - _GAP_KEEP_S
        for gaps in self._gaps:
            gaps.forget_before(horizon)

    def _backlog_s(self, now: float) -> float:
        """Unit time scheduled after `now`: each unit is busy from `now` to its free time except
        in its idle pieces (with a front end: the front end's, once per unit)."""
        if self.profile.front_end:
            return max(0.0, self._fe_free - now - self._fe_gaps.after(now)) * self._busy_scale
        return sum(f - now for f in self._units if f > now) - sum(g.after(now) for g in self._gaps)

    def reset_stats(self, now: float = 0.0) -> None:
        self.stats = DeviceStats(carry_in_s=self._backlog_s(now))

    def busy_s(self, now: float) -> float:
        """Unit time spent working between the last reset and `now` (all units together); with a
        front end, the front end's time once per unit, so that busy_s / (units x dt) is its share."""
        return self.stats.busy_sum_s + self.stats.carry_in_s - self._backlog_s(now)
