#!/usr/bin/env python3
"""How long an fdatasync takes, as the calling thread sees it, while busy threads hold the CPUs.

Runs the capture kit's fdatasync job (capture.FDATASYNC_JOB: appending 4K O_DIRECT writes, each
followed by fdatasync) once alone and then beside N processes that only spin, for each N given,
and prints fio's write and sync latency per run. The device's flush does not change with N; what
grows is the time the thread, woken when the flush completes, waits for a CPU. A group commit
leader on a CPU-bound server waits the same way. Writes OUT/busy-N.json (fio JSON).

Standard library and fio only. Usage: python3 validation/live/fdatasync_under_load.py OUT
    [--busy 0,2,4,16] [--seconds 8] [--work DIR] [--size 96m]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture import FDATASYNC_JOB, CaptureError, fdatasync_cmd  # noqa: E402


def spin(seconds: float) -> subprocess.Popen:
    """A process that keeps one CPU busy for `seconds` and never sleeps or does I/O."""
    return subprocess.Popen([sys.executable, "-c", f"import time\nend = time.monotonic() + {seconds}\n"
                             "while time.monotonic() < end: pass\n"])


def run(out: Path, target: Path, busy: int, seconds: int, size: str) -> dict:
    name = f"{FDATASYNC_JOB['name']}-busy{busy}"
    spinners = [spin(seconds + 3) for _ in range(busy)]
    try:
        time.sleep(1.0 if busy else 0.0)
        path = out / f"busy-{busy}.json"
        subprocess.run(fdatasync_cmd(name, target, size, seconds, path, ramp_s=0), check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    job = json.loads(path.read_text())["jobs"][0]
    sync, write = job["sync"]["lat_ns"], job["write"]
    return {"busy": busy, "writes_per_s": write["iops"], "write_mean_us": write["lat_ns"]["mean"] / 1e3,
            "sync_mean_us": sync["mean"] / 1e3, "sync_p50_us": sync["percentile"]["50.000000"] / 1e3,
            "sync_p99_us": sync["percentile"]["99.000000"] / 1e3, "sync_calls": sync.get("N", 0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="directory for the fio outputs (created)")
    ap.add_argument("--busy", default="0,2,4,16", help="spinning processes per run (default 0,2,4,16)")
    ap.add_argument("--seconds", type=int, default=8, help="measured seconds per run (default 8)")
    ap.add_argument("--work", help="directory on the storage to measure (default OUT)")
    ap.add_argument("--size", default="96m", help="fio file size (default 96m, a redo log's)")
    args = ap.parse_args()
    try:
        busy = [int(x) for x in args.busy.split(",")]
    except ValueError:
        print(f"fdatasync_under_load: --busy {args.busy!r}: comma-separated whole numbers", file=sys.stderr)
        return 2
    if any(b < 0 for b in busy) or args.seconds < 1:
        print("fdatasync_under_load: --busy must be >= 0 and --seconds >= 1", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    target = Path(args.work or out) / "fdatasync.dat"
    rows = []
    try:
        for b in busy:
            rows.append(run(out, target, b, args.seconds, args.size))
    except CaptureError as err:
        print(f"fdatasync_under_load: {err}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as err:
        print(f"fdatasync_under_load: fio failed with exit code {err.returncode}", file=sys.stderr)
        return 1
    finally:
        target.unlink(missing_ok=True)
    print(f"{os.cpu_count()} CPUs; appending 4K O_DIRECT writes, fdatasync after each")
    print("busy  writes/s  write mean us  sync mean us  sync p50 us  sync p99 us  calls")
    for r in rows:
        print(f"{r['busy']:>4}  {r['writes_per_s']:>8,.0f}  {r['write_mean_us']:>13.1f}  {r['sync_mean_us']:>12.1f}  "
              f"{r['sync_p50_us']:>11.1f}  {r['sync_p99_us']:>11.1f}  {r['sync_calls']:>5,}")
    (out / "summary.json").write_text(json.dumps({"cpus": os.cpu_count(), "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
