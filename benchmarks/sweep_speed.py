"""Sweep speed-up: one 64-run sweep of the default scenario with 1 worker, then with N workers.

Each sweep runs `innosim sweep` in a fresh process without the run cache (8 values of
innodb_log_file_size x 8 seeds). Prints the wall time of each and the speed-up:
    workers=<n> wall_s=<s> runs_per_min=<r> speedup=<wall(1) / wall(n)>
Usage: python benchmarks/sweep_speed.py [--workers 1 2] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from machine import header

ROOT = Path(__file__).resolve().parent.parent
GRID = "server.innodb_log_file_size=256M,384M,512M,768M,1G,1536M,2G,3G"
REPLICATES = 8


def one(workers: int, out: Path) -> float:
    cmd = [sys.executable, "-m", "sim.cli", "sweep", str(ROOT / "scenarios" / "default.toml"), "--grid", GRID,
           "--replicates", str(REPLICATES), "--no-cache", "--workers", str(workers), "-o", str(out)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(header(f"64 runs of scenarios/default.toml, median of {args.repeat}"), flush=True)
    walls = {}
    with tempfile.TemporaryDirectory() as tmp:
        for w in args.workers:
            walls[w] = statistics.median(one(w, Path(tmp) / f"w{w}.parquet") for _ in range(args.repeat))
    base = walls.get(1)
    for w, s in walls.items():
        speed = f" speedup={base / s:.2f}" if base else ""
        print(f"workers={w} wall_s={s:.1f} runs_per_min={64 * 60 / s:.1f}{speed}", flush=True)


if __name__ == "__main__":
    main()
