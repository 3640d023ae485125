"""Replay the seed's whole IObench grid and measure simulator speed.

Grid (seed 000, first post): raw x {Rrnd, Wrnd, RWrnd}; ext4 and XFS on one file and on 8 files
x {Rrnd O_DIRECT, Wrnd and RWrnd with O_DIRECT and write()+fsync()}; ext4 and XFS Wrnd O_DIRECT
on 2 and 4 files; each at 4K and 16K and 1, 4, 16, 64, 128, 256 processes. Same run length as the
validation suite (0.2 s measured after 0.05 s warm-up), so the precision is the one it passes with.

Usage: python benchmarks/iobench_grid.py [--jobs N] [--repeat R] [--fingerprint]
Last line: grid_wall_s=<seconds> sim_ios_per_wall_s=<rate> (median over repeats).
--fingerprint also prints `grid_sha256=<hex>` over every case's whole result (the series
included): a change made for speed alone must leave it as it was.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time

from sim.iobench import IobenchCase, run_cases
from machine import footer, header

PROCS = (1, 4, 16, 64, 128, 256)
SIZES = (4096, 16384)


def seed_grid() -> list[IobenchCase]:
    cases = []

    def add(fs, mode, pattern, files):
        for bs in SIZES:
            for p in PROCS:
                cases.append(IobenchCase(filesystem=fs, kernel="2012", io_mode=mode, pattern=pattern,
                                         block_bytes=bs, processes=p, data_files=files,
                                         mount_options="" if fs == "raw" else "noatime,nodiratime,nobarrier"))

    for pattern in ("rrnd", "wrnd", "rwrnd"):
        add("raw", "direct", pattern, 1)
    for files in (1, 8):
        for fs in ("ext4", "xfs"):
            add(fs, "direct", "rrnd", files)
            for pattern in ("wrnd", "rwrnd"):
                for mode in ("direct", "fsync"):
                    add(fs, mode, pattern, files)
    for files in (2, 4):
        for fs in ("ext4", "xfs"):
            add(fs, "direct", "wrnd", files)
    return cases


def fingerprint(results) -> str:
    """SHA-256 over every result's fields (floats by their repr), in grid order."""
    h = hashlib.sha256()
    for r in results:
        h.update(json.dumps(r.to_dict(series=True), sort_keys=True).encode())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1: one core)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of the whole grid; the median is reported")
    ap.add_argument("--fingerprint", action="store_true",
                    help="also print a SHA-256 over every case's result (to compare before and after a change)")
    args = ap.parse_args()
    cases = seed_grid()
    print(header(f"jobs={args.jobs}, {len(cases)} cases, median of {args.repeat}"), flush=True)
    walls, rates, prints = [], [], []
    for i in range(args.repeat):
        t0 = time.perf_counter()
        results = run_cases(cases, jobs=args.jobs)
        wall = time.perf_counter() - t0
        ios = sum(r.ios_completed for r in results)
        walls.append(wall)
        rates.append(ios / wall)
        if args.fingerprint:
            prints.append(fingerprint(results))
        print(f"run {i + 1}: {len(cases)} cases, {ios:,} simulated I/Os, {wall:.1f} s wall, "
              f"{ios / wall:,.0f} simulated I/Os per wall second, "
              f"{sum(c.warmup_s + c.duration_s for c in cases) / wall:.2f} simulated s per wall s")
    print(footer())
    if prints:
        if len(set(prints)) > 1:
            raise SystemExit(f"iobench_grid: the repeats gave different results: {sorted(set(prints))}")
        print(f"grid_sha256={prints[0]}")
    print(f"grid_wall_s={statistics.median(walls):.1f} sim_ios_per_wall_s={statistics.median(rates):.0f}")


if __name__ == "__main__":
    main()
