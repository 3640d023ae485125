"""How engine wall time grows: 40 s runs of the DBT2 8 GB seed scenario with one thing changed
at a time (data size and pool, user threads, CPU per transaction), each in a fresh process.
Prints per case: start-up s, realtime ratio (simulated s per wall s), commits/s, peak RSS MB.
Usage: python benchmarks/engine_scaling.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys

from engine_speed import ROOT, run_child
from machine import footer, header

SCENARIO = ROOT / "scenarios" / "seed-dbt2-8inst-8g.toml"
BASE = ["run.duration=40s"]
CASES = {
    "base (50 warehouses, 4.9 GB; 16 GB pool; 40 users)": [],
    "500 warehouses (49 GB)": ["workload.warehouses=500"],
    "2500 warehouses (244 GB), 150 GB pool": ["workload.warehouses=2500", "server.innodb_buffer_pool_size=150G"],
    "160 users": ["workload.users=160"],
    "10 users": ["workload.users=10"],
    "cpu_per_txn 4 ms": ["workload.cpu_per_txn=4ms"],
    "cpu_per_txn 1 ms": ["workload.cpu_per_txn=1ms"],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(header(f"{SCENARIO.name}, 40 s runs, median of {args.runs}"), flush=True)
    for name, overrides in CASES.items():
        runs = [run_child(SCENARIO, BASE + overrides) for _ in range(args.runs)]
        ratio = statistics.median(r["simulated_s"] / r["wall_s"] for r in runs)
        print(f"{name}: startup_s={statistics.median(r['startup_s'] for r in runs):.1f} realtime_ratio={ratio:.1f} "
              f"commits_per_s={statistics.median(r['commits'] / r['simulated_s'] for r in runs):,.0f} "
              f"peak_rss_mb={max(r['peak_rss_mb'] for r in runs):.0f}", flush=True)
    print(footer(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
