"""Fingerprints of engine runs, to show that a speed change left every result as it was.

A change meant only to make the engine faster must leave each run bit for bit the same. Run this
before and after the change and compare the lines: each is one scenario's SHA-256 over everything
the run recorded (every cumulative counter and gauge at every 10 ms tick, the thread-seconds per
state, every commit's time and latency), with the commit count beside it. Each run is a fresh
process, as benchmarks/engine_speed.py runs them. Compare lines taken on one machine with one
numpy: float sums may round differently where numpy picks other vector kernels for another CPU.

Usage: python benchmarks/result_hash.py [SCENARIO.toml ...] [--duration 100s] [--set section.key=value ...]
Without scenarios it runs DEFAULT_SET: the loads earlier speed changes were checked on (both
boxes of seed 000 with 8 instances, the default scenario, the open loop, MariaDB 10.11, 5.7, 8.0,
the buffered checksum scenario, the 150 GB tpcc replay), each cut to --duration.
Prints `<stem> commits=<n> sha256=<hex>` per scenario.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from engine_speed import ROOT, run_child

DEFAULT_SET = ("seed-dbt2-8inst-3g", "seed-dbt2-32core-ssd-8inst-3g", "default", "whatif-open-loop",
               "seed-dbt2-3g-mariadb1011", "seed-dbt2-8inst-3g-mysql57", "seed-dbt2-8inst-3g-mysql80",
               "seed-checksums-oscache-innodb", "seed-tpcc-2500w-150g")
CHILD = r"""
import hashlib, json, sys
import numpy as np
from sim.config import load_scenario
from sim.engine import Server
res = Server(load_scenario(sys.argv[1], overrides=sys.argv[2:])).run()
h = hashlib.sha256()
for a in (res.counters, res.gauges, res.thread_s, res.commit_t, res.latency_s):
    a = np.ascontiguousarray(a)
    h.update(str((a.dtype.str, a.shape)).encode())
    h.update(a.tobytes())
print(json.dumps({"commits": int(len(res.commit_t)), "sha256": h.hexdigest()}))
"""


def fingerprint(path: Path, overrides: list[str]) -> dict:
    """One run in a fresh process (engine_speed.run_child): its commit count and the hash of what it
    recorded."""
    try:
        return run_child(path, overrides, child=CHILD)
    except subprocess.CalledProcessError as e:
        last = (e.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise SystemExit(f"result_hash: {path}: the run failed: {last}") from None


def scenario_path(name: str) -> Path:
    """A file path as given, else a shipped scenario by its stem."""
    p = Path(name)
    if p.suffix == ".toml":
        return p
    return ROOT / "scenarios" / f"{name}.toml"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", help="scenario files or shipped scenario stems (default: DEFAULT_SET)")
    ap.add_argument("--duration", default="100s", help="run.duration for every run (default 100s; '' keeps each file's)")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="an override for every run (as innosim run --set)")
    args = ap.parse_args(argv)
    overrides = ([f"run.duration={args.duration}"] if args.duration else []) + args.set
    for name in args.scenarios or DEFAULT_SET:
        path = scenario_path(name)
        if not path.is_file():
            print(f"result_hash: {path}: no such scenario file", file=sys.stderr)
            return 2
        fp = fingerprint(path, overrides)
        print(f"{path.stem} commits={fp['commits']} sha256={fp['sha256']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
