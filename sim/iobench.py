"""Running IObench cases: one SimPy environment per case, results as plain dataclasses.

`run_case` is a pure function of its case: same case (and seed), same result, bit for bit.
Grids run in worker processes when asked (`run_cases(..., jobs=N)`); each case seeds its own
generators, so the result does not depend on the number of workers.
"""

from __future__ import annotations

import itertools
import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import numpy as np
import simpy

from models.block_layer import NR_REQUESTS, QUEUE_DEPTH_SATA, BlockLayerConfig
from models.device import READ, WRITE, Device, DeviceProfile, load_profile
from models.filesystem import Filesystem, make_spec, mount_options_for
from models.host_io import HostQueue
from models.iobench import DataFiles, IobenchRecorder, IobenchSpec, iobench_process
from sim.config import Scenario
from sim.units import format_size

MIB = float(1 << 20)


@dataclass(frozen=True)
class IobenchCase:
    """Everything one IObench run depends on."""

    device: str = "fusionio-2012"
    filesystem: str = "xfs"
    kernel: str = "2012"
    mount_options: str | None = None             # None: the kernel era's (models.filesystem.ERA_MOUNT_OPTIONS)
    io_mode: str = "direct"
    pattern: str = "wrnd"
    block_bytes: int = 4096
    processes: int = 16
    data_files: int = 1
    data_bytes: int = 128 << 30
    page_cache_bytes: int = 0
    cpu_cores: int = 8
    io_scheduler: str = "off"         # off: the device alone; none / cfq: through the host's block layer
    queue_depth: int = QUEUE_DEPTH_SATA
    nr_requests: int = NR_REQUESTS
    duration_s: float = 0.2
    warmup_s: float = 0.05
    resolution_s: float = 0.01
    seed: int = 1

    def label(self) -> str:
        fs = self.filesystem if self.filesystem == "raw" else f"{self.filesystem}/{self.kernel}"
        host = "" if self.io_scheduler == "off" else f" {self.io_scheduler}/qd{self.queue_depth}"
        return (f"{fs} {self.io_mode} {self.pattern} {format_size(self.block_bytes)} "
                f"files={self.data_files} procs={self.processes}{host}")


@dataclass(frozen=True)
class IobenchResult:
    """Measured over the window [warmup, warmup + duration) of simulated time."""

    case: IobenchCase
    iops: float
    read_iops: float
    write_iops: float
    mib_s: float
    lat_mean_s: float
    lat_p50_s: float
    lat_p99_s: float
    lock_wait_share: float
    device_queue_mean: float
    device_util: float
    ios_measured: int
    ios_submitted: int
    ios_completed: int
    iops_series: tuple[float, ...] = field(default=(), repr=False)

    def to_dict(self, series: bool = False) -> dict:
        d = asdict(self)
        if not series:
            d.pop("iops_series")
        return d


@lru_cache(maxsize=32)
def _profile(name: str) -> DeviceProfile:
    return load_profile(name)


def run_case(case: IobenchCase) -> IobenchResult:
    """Simulate one IObench case."""
    profile = _profile(case.device)
    spec = make_spec(case.filesystem, case.kernel, mount_options_for(case.mount_options, case.filesystem, case.kernel))
    env = simpy.Environment()
    streams = np.random.SeedSequence(case.seed).spawn(case.processes + 1)
    device = Device(env, profile, np.random.default_rng(streams[0]))
    host = None
    if case.io_scheduler != "off":
        host = HostQueue(env, device, BlockLayerConfig(case.io_scheduler, case.queue_depth, case.nr_requests))
    fs = Filesystem(env, device, spec, case.data_files, cpu_cores=case.cpu_cores, host=host)
    wl = IobenchSpec(case.pattern, case.block_bytes, case.processes, case.io_mode,
                     case.data_bytes, case.page_cache_bytes)
    files = DataFiles(case.data_files, case.data_bytes)
    start, end = case.warmup_s, case.warmup_s + case.duration_s
    rec = IobenchRecorder(start, end)
    for p in range(case.processes):
        env.process(iobench_process(env, fs, wl, files, np.random.default_rng(streams[p + 1]), rec, pid=p))

    def mark_window_start():
        yield env.timeout(start)
        device.reset_stats(env.now)

    env.process(mark_window_start())
    env.run(until=end)

    lat = np.asarray(rec.latencies_s)
    waits = np.asarray(rec.lock_waits_s)
    n = lat.size
    dur = case.duration_s
    st = device.stats
    if n:
        lat_sorted = np.sort(lat)
        p50 = float(lat_sorted[max(0, math.ceil(0.50 * n) - 1)])
        p99 = float(lat_sorted[max(0, math.ceil(0.99 * n) - 1)])
        mean = float(lat.mean())
        share = float(waits.sum() / lat.sum()) if lat.sum() > 0 else 0.0
    else:
        p50 = p99 = mean = math.nan
        share = 0.0
    bins = max(1, int(round(dur / case.resolution_s)))
    done_times = np.asarray(rec.done_times_s)
    series: tuple[float, ...] = ()
    if done_times.size:
        counts, _ = np.histogram(done_times, bins=bins, range=(start, end))
        series = tuple((counts / (dur / bins)).tolist())
    return IobenchResult(
        case=case,
        iops=n / dur,
        read_iops=rec.ops[READ] / dur,
        write_iops=rec.ops[WRITE] / dur,
        mib_s=n * case.block_bytes / dur / MIB,
        lat_mean_s=mean,
        lat_p50_s=p50,
        lat_p99_s=p99,
        lock_wait_share=share,
        device_queue_mean=st.latency_sum_s / dur,
        device_util=device.busy_s(end) / (profile.parallelism * dur),
        ios_measured=n,
        ios_submitted=rec.submitted,
        ios_completed=rec.completed,
        iops_series=series,
    )


def run_cases(cases: list[IobenchCase], jobs: int = 1) -> list[IobenchResult]:
    """Run cases in order; with jobs > 1 in worker processes (results identical either way)."""
    if jobs <= 1 or len(cases) <= 1:
        return [run_case(c) for c in cases]
    with ProcessPoolExecutor(max_workers=min(jobs, len(cases))) as pool:
        return list(pool.map(run_case, cases, chunksize=max(1, len(cases) // (4 * jobs))))


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def cases_from_scenario(scn: Scenario) -> list[IobenchCase]:
    """The grid a scenario describes (list-valued keys are axes), in a stable order."""
    hw, wl, run = scn.hardware, scn.workload, scn.run
    out = []
    for fs, kernel, files, mode, pattern, bs, procs in itertools.product(
            hw.filesystem, hw.kernel, hw.data_files, wl.io_mode, wl.pattern, wl.block_bytes, wl.processes):
        if fs == "raw" and kernel != hw.kernel[0]:
            continue  # a raw device has no kernel-era locking: one run covers every era
        out.append(IobenchCase(
            device=hw.device, filesystem=fs, kernel=kernel,
            mount_options=mount_options_for(hw.mount_options, fs, kernel),
            io_mode=mode, pattern=pattern, block_bytes=bs, processes=procs, data_files=files,
            data_bytes=wl.data_bytes, page_cache_bytes=hw.page_cache_bytes, cpu_cores=hw.cpu_cores,
            io_scheduler=hw.io_scheduler, queue_depth=hw.queue_depth, nr_requests=hw.nr_requests,
            duration_s=run.duration_s, warmup_s=run.warmup_s, resolution_s=run.resolution_s,
            seed=run.seed))
    return out
