"""Engine speed: simulated seconds per wall second for each seed oltp scenario, and peak memory.

Each run is a fresh `python` process on one core (so its peak RSS is its own); the scenario runs
with its own duration and seed. Prints one line per scenario:
    <scenario-file-stem> realtime_ratio=<median simulated_s / wall_s> peak_rss_mb=<max over runs>
Usage: python benchmarks/engine_speed.py [--runs 3] [--only STEM ...] [--set section.key=value ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from machine import footer, header

ROOT = Path(__file__).resolve().parent.parent
# One run in a fresh process: argv[1] the scenario file, argv[2:] --set style overrides.
CHILD = r"""
import json, resource, sys, time
from sim.config import load_scenario
from sim.engine import Server
scn = load_scenario(sys.argv[1], overrides=sys.argv[2:])
t0 = time.perf_counter()
srv = Server(scn)
t1 = time.perf_counter()
res = srv.run()
wall = time.perf_counter() - t1
print(json.dumps({"simulated_s": res.n_ticks * res.tick_s, "wall_s": wall, "startup_s": t1 - t0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  "commits": int(len(res.commit_t))}))
"""


def run_child(path: Path, overrides: list[str] = (), child: str = CHILD) -> dict:
    """One engine run in a fresh process on one core's worth of threads: `child` (a script taking the
    scenario file and overrides as arguments) prints one JSON line last, which is returned."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", child, str(path), *overrides], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def oltp_scenarios() -> list[Path]:
    out = []
    for p in sorted((ROOT / "scenarios").glob("seed-*.toml")):
        if 'kind = "oltp"' in p.read_text():
            out.append(p)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="scenario file stems")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="an override for every scenario run (as innosim run --set)")
    args = ap.parse_args()
    print(header(f"median of {args.runs} runs, one process each" + (f"; --set {' '.join(args.set)}" if args.set else "")),
          flush=True)
    for path in oltp_scenarios():
        if args.only and path.stem not in args.only:
            continue
        runs = [run_child(path, args.set) for _ in range(args.runs)]
        ratio = statistics.median(r["simulated_s"] / r["wall_s"] for r in runs)
        rss = max(r["peak_rss_mb"] for r in runs)
        walls = ", ".join(f"{r['wall_s']:.1f}" for r in runs)
        print(f"# {path.stem}: {runs[0]['simulated_s']:.0f} simulated s, wall s per run: {walls}", flush=True)
        print(f"{path.stem} realtime_ratio={ratio:.1f} peak_rss_mb={rss:.0f}", flush=True)
    print(footer(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
