"""Redo writes per commit of a lone group-commit log writer fed by a stream of commits.

A what-if beside validation/live/group_commit.py, to tell apart two causes of the engine's
ungrouped commits: how regular the commits' arrivals are, and how long the redo writer is busy.
Commits arrive at gaps of mean 1/rate (coefficient of variation `cv`: 1 is a Poisson stream,
lower is more regular; lognormal gaps); an idle writer starts at once and covers every commit
arrived by then; a write is busy for the device time (`io_us`: the O_DIRECT write and the
fdatasync) plus `waits` waits for a core of `wait_us` each; commits that arrived meanwhile go in the
next write, whose leader first waits `wait_us` to wake. Not the engine: no CPU, no pages, one
stream of commits; it shows what arrival regularity alone does to the grouping.

Defaults: io_us 175 (this VM, 29 Nov 2026: a 4 KiB O_DIRECT append took 67 us and fdatasync 108 us
mean beside the 16-thread MariaDB run, validation/live/fio-2026-11-29), two blocking calls (MariaDB
10.11's O_DIRECT log). Rates and waits: pass the captures' (group_commit.py prints them).

Usage: python validation/live/group_commit_renewal.py --rate 1414 --wait-us 307 [--cv 1 0.7 0.5]
    [--io-us 175] [--waits 2] [--commits 200000] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np


def writes_per_commit(rate_per_s: float, io_s: float, wait_s: float, waits: int, cv: float,
                      n_commits: int = 200_000, seed: int = 1) -> float:
    """Redo writes per commit of the writer described in the module docstring."""
    if rate_per_s <= 0 or cv <= 0 or n_commits < 1:
        raise ValueError("rate, cv and the number of commits must be > 0")
    rng = np.random.default_rng(seed)
    if cv == 1.0:
        gaps = rng.exponential(1.0 / rate_per_s, n_commits)
    else:
        s2 = math.log1p(cv * cv)
        gaps = rng.lognormal(-0.5 * s2, math.sqrt(s2), n_commits) / rate_per_s
    arrive = np.cumsum(gaps)
    i, writes, free_at = 0, 0, 0.0
    while i < n_commits:
        start = max(free_at, arrive[i])
        i = int(np.searchsorted(arrive, start, side="right"))     # every commit arrived by now
        writes += 1
        end = start + io_s + waits * wait_s
        free_at = end + wait_s if i < n_commits and arrive[i] <= end else end
    return writes / n_commits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, required=True, help="commits a second")
    ap.add_argument("--wait-us", type=float, required=True, help="a wait for a core, us")
    ap.add_argument("--cv", type=float, nargs="+", default=[1.0, 0.7, 0.5],
                    help="coefficients of variation of the gaps between commits (default 1 0.7 0.5)")
    ap.add_argument("--io-us", type=float, default=175.0, help="device time of a write + fdatasync, us")
    ap.add_argument("--waits", type=int, default=2, help="blocking calls a write (default 2)")
    ap.add_argument("--commits", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    bad = [f"--{k} must be > 0" for k, v in (("rate", args.rate), ("commits", args.commits)) if v <= 0]
    bad += ["--cv values must be > 0"] if any(c <= 0 for c in args.cv) else []
    bad += [f"--{k} must be >= 0" for k, v in (("wait-us", args.wait_us), ("io-us", args.io_us),
                                              ("waits", args.waits)) if v < 0]
    if bad:
        print(f"group_commit_renewal: {'; '.join(bad)}", file=sys.stderr)
        return 2
    print("cv of the gaps  redo writes a commit")
    for cv in args.cv:
        w = writes_per_commit(args.rate, args.io_us * 1e-6, args.wait_us * 1e-6, args.waits, cv,
                              args.commits, args.seed)
        print(f"{cv:>14g}  {w:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
