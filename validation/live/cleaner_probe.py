#!/usr/bin/env python3
"""Watch MariaDB's page cleaner at a fine grain beside a running `capture.py`.

    python3 validation/live/cleaner_probe.py WORK OUT.json.gz [--seconds 150] [--interval 0.1]

WORK is the capture's `--work` directory (its server's socket and pid file are there). The probe
waits for the server and for the run (the capture enables every INNODB_METRICS counter when the
run starts), then every `--interval` seconds reads, through one client connection kept open:
the page cleaner's pass counters (LRU batches, adaptive and background flush-list batches and
their pages), the free-list length, the checkpoint age, commits and page reads; and, from
/proc, every mariadbd thread's CPU time and run-queue wait (schedstat). Standard library only.
`summary()` (also printed at the end) gives the passes per second and the gaps between them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

METRICS = ("buffer_LRU_batch_num_scan", "buffer_LRU_batch_flush_total_pages", "buffer_LRU_batch_evict_total_pages",
           "buffer_flush_adaptive", "buffer_flush_adaptive_total_pages", "buffer_flush_background",
           "buffer_flush_background_total_pages", "buffer_flush_n_to_flush_requested")
STATUS = ("Innodb_buffer_pool_pages_free", "Innodb_checkpoint_age", "Innodb_checkpoint_max_age", "Com_commit",
          "Innodb_buffer_pool_reads", "Innodb_dblwr_writes")


class ProbeError(Exception):
    pass


def query() -> str:
    names = ",".join(f"'{n}'" for n in METRICS)
    status = ",".join(f"'{n}'" for n in STATUS)
    return ("SELECT CONCAT('T ', UNIX_TIMESTAMP(NOW(6)));"
            f" SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE NAME IN ({names});"
            f" SHOW GLOBAL STATUS WHERE Variable_name IN ({status});"
            " SELECT 'END';\n")


def threads(pid: int) -> dict[str, list[int]]:
    """tid -> [CPU ns, run-queue wait ns, time slices] from /proc/PID/task/TID/schedstat."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = [int(x) for x in f.read().split()[:3]]
        except (OSError, ValueError):
            continue
    return out


def probe(work: Path, seconds: float, interval: float, wait_s: float = 900.0) -> list[dict]:
    client = shutil.which("mariadb") or shutil.which("mysql")
    if client is None:
        raise ProbeError("no mariadb or mysql client on PATH")
    sock, pid_file = work / "mysqld.sock", work / "mysqld.pid"
    deadline = time.time() + wait_s
    while not sock.exists():
        if time.time() > deadline:
            raise ProbeError(f"{sock}: no server socket after {wait_s:.0f} s (is capture.py running with --work {work}?)")
        time.sleep(0.2)
    proc = subprocess.Popen([client, f"--socket={sock}", "-uroot", "-N", "-B", "-n", "--unbuffered"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, bufsize=1)
    q, rows, pid, t_end = query(), [], None, None
    try:
        while True:
            if proc.poll() is not None:
                if t_end is None:
                    raise ProbeError("the client exited before the run started")
                break                                     # the server stopped: the capture is over
            try:
                proc.stdin.write(q)
                proc.stdin.flush()
            except BrokenPipeError:
                break
            row: dict = {}
            for line in proc.stdout:
                line = line.rstrip("\n")
                if line == "END":
                    break
                if line.startswith("T "):
                    row["t"] = float(line[2:])
                    continue
                name, _, value = line.partition("\t")
                try:
                    row[name] = float(value)
                except ValueError:
                    pass
            if "t" not in row:
                break
            if pid is None:
                try:
                    pid = int(pid_file.read_text().strip())
                except (OSError, ValueError):
                    pid = None
            if pid is not None:
                row["threads"] = threads(pid)
            if t_end is None and row.get("buffer_LRU_batch_num_scan", 0) > 0:
                t_end = time.time() + seconds             # the counters run: the capture's run began
            if t_end is not None:
                rows.append(row)
                if time.time() >= t_end:
                    break
            elif time.time() > deadline:
                raise ProbeError("the page cleaner's counters never started (innodb_monitor_enable)")
            time.sleep(interval)
    finally:
        if proc.poll() is None:
            proc.stdin.close()
            proc.terminate()
    return rows


def summary(rows: list[dict]) -> dict:
    """Passes per second, the gaps between samples that saw an LRU pass, and the free list."""
    if len(rows) < 2:
        return {}
    dur = rows[-1]["t"] - rows[0]["t"]
    d = lambda k: rows[-1].get(k, 0.0) - rows[0].get(k, 0.0)
    lru_t = [b["t"] for a, b in zip(rows, rows[1:]) if b["buffer_LRU_batch_num_scan"] > a["buffer_LRU_batch_num_scan"]]
    gaps = sorted(y - x for x, y in zip(lru_t, lru_t[1:]))
    free = sorted(r["Innodb_buffer_pool_pages_free"] for r in rows)
    pick = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))] if xs else None
    # The free list in the sample before each pass: what woke the cleaner, and which branch it took.
    adaptive = [k for k in range(1, len(rows)) if rows[k]["buffer_flush_adaptive"] > rows[k - 1]["buffer_flush_adaptive"]]
    is_adaptive = set(adaptive)
    lru_only = [k for k in range(1, len(rows)) if k not in is_adaptive
                and rows[k]["buffer_LRU_batch_num_scan"] > rows[k - 1]["buffer_LRU_batch_num_scan"]]
    before = lambda ks: pick(sorted(rows[k - 1]["Innodb_buffer_pool_pages_free"] for k in ks), 0.5)
    return {"seconds": round(dur, 1), "samples": len(rows),
            "lru_batches_per_s": round(d("buffer_LRU_batch_num_scan") / dur, 2),
            "adaptive_batches_per_s": round(d("buffer_flush_adaptive") / dur, 3),
            "background_batches_per_s": round(d("buffer_flush_background") / dur, 3),
            "adaptive_pages_per_batch": round(d("buffer_flush_adaptive_total_pages") / max(1.0, d("buffer_flush_adaptive")), 1),
            "lru_gap_s_median_p90_max": [round(pick(gaps, 0.5), 2), round(pick(gaps, 0.9), 2), round(gaps[-1], 2)] if gaps else None,
            "free_pages_min_p5_median": [pick(free, 0.0), pick(free, 0.05), pick(free, 0.5)],
            "free_before_adaptive_pass_median": before(adaptive),
            "free_before_lru_only_pass_median": before(lru_only),
            "commits_per_s": round(d("Com_commit") / dur, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path, help="the capture's --work directory")
    ap.add_argument("out", type=Path, help="where to write the samples (JSON, gzipped)")
    ap.add_argument("--seconds", type=float, default=150.0, help="how long to sample once the run started")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between samples")
    args = ap.parse_args()
    if args.seconds <= 0 or not 0.01 <= args.interval <= 10:
        print("cleaner_probe: --seconds must be > 0 and --interval 0.01 to 10", file=sys.stderr)
        return 2
    try:
        rows = probe(args.work, args.seconds, args.interval)
    except ProbeError as e:
        print(f"cleaner_probe: {e}", file=sys.stderr)
        return 2
    with gzip.open(args.out, "wt") as f:
        json.dump({"interval_s": args.interval, "metrics": METRICS, "status": STATUS, "rows": rows}, f)
    print(json.dumps(summary(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
