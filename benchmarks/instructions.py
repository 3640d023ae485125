"""Instructions a workload executes, counted by valgrind's callgrind: a cost measure that does not
move with the machine's load or hour, for changes too small to show in wall time on a noisy VM.

Wall time on the project's VMs swings by a fifth between runs of the same code (docs/SPEED.md), so
a 3 % change cannot be seen in it. The count of instructions executed is the same from run to run
when Python's string hashing is fixed (PYTHONHASHSEED=0 here: set iteration order moves the count
otherwise). It is a proxy: an instruction saved in the interpreter loop is time saved, but cache
misses are not counted. Under callgrind a run takes about 40 times its wall time.

The count of the imports and set-up alone is taken by a second run of the same script that stops
before the workload, and subtracted.

Usage:
    python benchmarks/instructions.py iobench [--start 5] [--every 27]
        every 27th case of the seed's IObench grid from the 6th (12 cases, as benchmarks/iobench_grid.py)
    python benchmarks/instructions.py engine [SCENARIO] [--duration 10s]
        one engine run (default: seed-dbt2-8inst-3g) cut to --duration
Prints `<what> instructions=<net> setup=<baseline>`; needs `valgrind` (Debian: apt install valgrind).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# argv: kind, run ("1" runs the workload, "0" stops before it), then the kind's arguments.
CHILD = r"""
import sys
sys.path.insert(0, sys.argv[3]); sys.path.insert(0, sys.argv[3] + "/benchmarks")
kind, run = sys.argv[1], sys.argv[2] == "1"
if kind == "iobench":
    from iobench_grid import seed_grid
    from sim.iobench import run_cases
    cases = seed_grid()[int(sys.argv[4])::int(sys.argv[5])]
    if run:
        run_cases(cases)
else:
    from sim.config import load_scenario
    from sim.engine import Server
    srv = Server(load_scenario(sys.argv[4], overrides=["run.duration=" + sys.argv[5]]))
    if run:
        srv.run()
"""

_COLLECTED = re.compile(r"Collected\s*:\s*([\d,]+)")


def parse_collected(stderr: str) -> int:
    """The total of callgrind's `Collected :` line (its last one)."""
    found = _COLLECTED.findall(stderr)
    if not found:
        raise ValueError("no 'Collected :' line in valgrind's output")
    return int(found[-1].replace(",", ""))


def count(args: list[str]) -> int:
    """Instructions of one child run under callgrind."""
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                               sys.executable, "-c", CHILD, *args], cwd=ROOT, env=env,
                              capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise SystemExit(f"instructions: the run under valgrind failed: {last}")
    return parse_collected(proc.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=("iobench", "engine"))
    ap.add_argument("scenario", nargs="?", default="seed-dbt2-8inst-3g",
                    help="engine: a scenario file or a shipped scenario's stem")
    ap.add_argument("--start", type=int, default=5, help="iobench: first grid case (0-based)")
    ap.add_argument("--every", type=int, default=27, help="iobench: take every N-th case")
    ap.add_argument("--duration", default="10s", help="engine: simulated time")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed (Debian: apt install valgrind)", file=sys.stderr)
        return 2
    if args.kind == "iobench":
        if args.start < 0 or args.every < 1:
            print("instructions: --start must be >= 0 and --every >= 1", file=sys.stderr)
            return 2
        rest = [str(ROOT), str(args.start), str(args.every)]
        what = f"iobench grid[{args.start}::{args.every}]"
    else:
        path = Path(args.scenario)
        if path.suffix != ".toml":
            path = ROOT / "scenarios" / f"{args.scenario}.toml"
        if not path.is_file():
            print(f"instructions: {path}: no such scenario file", file=sys.stderr)
            return 2
        rest = [str(ROOT), str(path), args.duration]
        what = f"engine {path.stem} {args.duration}"
    setup = count([args.kind, "0", *rest])
    total = count([args.kind, "1", *rest])
    print(f"{what} instructions={total - setup} setup={setup}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
