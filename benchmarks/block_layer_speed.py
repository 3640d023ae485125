"""Speed of fio jobs run through the host's block layer (sim.calibrate.simulate_job_on_host):
simulated I/Os per wall second and simulated seconds per wall second, median of several runs.

The jobs are the Intel D3-S4610 set's (../shared/data/fio), each on the shipped profile, through
CFQ at SATA queue depth 32 and through noop, and on the device alone (simulate_job) for reference.
Prints one line per job and host:
    <job> <host> ios_per_wall_s=<median> realtime_ratio=<median simulated_s / wall_s>
Usage: python benchmarks/block_layer_speed.py [--runs 3] [--data ../shared/data/fio]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from models.block_layer import BlockLayerConfig  # noqa: E402
from sim.calibrate import simulate_job, simulate_job_on_host  # noqa: E402
from sim.fio import read_fio_json  # noqa: E402
from machine import header  # noqa: E402

JOBS = ("randread-1-1", "randread-64-1", "randread-4-16", "randread-16-16", "randread-64-16")
HOSTS = {"device": None, "noop": BlockLayerConfig("none", 32), "cfq": BlockLayerConfig("cfq", 32)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "fio"))
    args = ap.parse_args()
    folder = Path(args.data) / "fioplot-intel-d3-s4610"
    prof = json.loads((ROOT / "models" / "profiles" / "intel-d3-s4610.json").read_text())
    print(header(f"median of {args.runs} runs"), flush=True)
    for name in JOBS:
        job = read_fio_json(folder / f"{name}.json")[0]
        for host, cfg in HOSTS.items():
            rates, ratios = [], []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                if cfg is None:
                    p = simulate_job(prof, job, 0.0)
                else:
                    p = simulate_job_on_host(prof, job, 0.0, cfg)
                wall = time.perf_counter() - t0
                rates.append(p.iops * p.span_s / wall)
                ratios.append(p.span_s / wall)
            print(f"{name} {host} ios_per_wall_s={statistics.median(rates):,.0f} "
                  f"realtime_ratio={statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
