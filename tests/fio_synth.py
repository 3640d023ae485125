"""fio 3.x JSON results made by running fio-like closed loops on a device profile, for tests that
need a whole fio run set without the data sets in ../shared."""

from __future__ import annotations

import json
from pathlib import Path

from sim.calibrate import simulate_job
from sim.fio import FioJob

PROFILES = Path(__file__).resolve().parent.parent / "models" / "profiles"

# A fixed SATA-like drive (one pooled unit; the samsung-pm883 fit of 2026-11-25), so that tests of
# the fit do not move when the shipped profiles are refitted.
SATA_LIKE = {"name": "sata-like", "source": "tests/fio_synth.py", "parallelism": 1, "host_overhead_s": 1.2e-05,
             "unit_assignment": "pooled",
             "classes": {"read": {"4096": {"capacity_iops": 44397.2, "latency_qd1_s": 0.000142840671743,
                                           "service_cv": 0.732}},
                         "write": {"4096": {"capacity_iops": 62992.9, "latency_qd1_s": 3.8059353223e-05,
                                            "service_cv": 0.137}}}}


def _direction(p, active: bool) -> dict:
    if not active:
        return {"iops": 0.0, "total_ios": 0, "io_bytes": 0, "clat_ns": {"mean": 0}, "lat_ns": {"mean": 0}}
    ios = int(p.iops * 10)
    clat = {"mean": p.lat_mean_s * 1e9, "percentile": {"50.000000": p.lat_p50_s * 1e9,
                                                       "99.000000": p.lat_p99_s * 1e9,
                                                       "99.900000": p.lat_p999_s * 1e9}}
    return {"iops": p.iops, "total_ios": ios, "io_bytes": ios * 4096, "bw_bytes": p.iops * 4096,
            "runtime": 10000, "slat_ns": {"mean": 0}, "clat_ns": clat, "lat_ns": dict(clat)}


def fio_run_set(profile: str | dict = SATA_LIKE, depths=(1, 2, 4, 8, 16, 32, 64),
                numjobs=(1,)) -> list[tuple[str, bytes]]:
    """(file name, fio JSON bytes): one file per job, randread and randwrite at 4K over the depths,
    on a profile document or a built-in profile's name."""
    doc = profile if isinstance(profile, dict) else json.loads((PROFILES / f"{profile}.json").read_text())
    out = []
    for rw in ("randread", "randwrite"):
        for nj in numjobs:
            for qd in depths:
                opts = {"rw": rw, "bs": "4k", "iodepth": str(qd), "numjobs": str(nj), "direct": "1",
                        "ioengine": "libaio"}
                shell = FioJob(source="synthetic", name=f"{rw}-{nj}-{qd}", fio_version="fio-3.33", rw=rw,
                               block_bytes=4096, iodepth=qd, numjobs=nj, direct=True, ioengine="libaio",
                               read_share=1.0 if rw == "randread" else 0.0, options=opts, read=None, write=None,
                               clones=1)
                p = simulate_job(doc, shell, 0.0, seed=qd, target_ios=3000)
                job = {"jobname": shell.name, "groupid": 0, "job options": opts,
                       "read": _direction(p, rw == "randread"), "write": _direction(p, rw == "randwrite")}
                out.append((f"{shell.name}.json",
                            json.dumps({"fio version": "fio-3.33", "jobs": [job]}).encode()))
    return out
