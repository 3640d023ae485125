"""Measure InnoDB crash recovery on this machine: crash a private MariaDB at chosen checkpoint ages
and time its restart.

Standard library only (runs with the system python3), beside capture.py, whose private server it
uses (own data directory, socket and port; nothing installed is touched). For each target
checkpoint age the server runs `sysbench oltp_write_only` until `Innodb_checkpoint_age` reaches
it, is killed with SIGKILL, and is started again; the script records the redo the restart had to
scan (its log: "Starting crash recovery from checkpoint LSN=" to the end of the log), the pages
it had to recover ("To recover: N pages"), and the seconds from starting mariadbd until it answers
a query. A clean restart is timed too, so the recovery's own share can be told apart.

    sudo python3 validation/live/crash_recovery.py OUT [--ages-mb 150,400,700] [--install]

Writes OUT/crash_recovery.json (one entry per crash, with the load's redo bytes per commit, plus
the clean restart, the machine and the settings) and keeps each restart's server log, each line with the second it was read at, as
OUT/restart-<n>.log. validation/fit_recovery_rates.py fits models/recovery.py's rates to such files
(see docs/ENGINE.md, "Crash recovery"). The milestones are MariaDB 10.5+'s log lines; MySQL words them
differently, so its restarts are timed but not split into scan and apply.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capture  # noqa: E402  (the private server and the tool lookup)

CKPT_RE = re.compile(r"Starting crash recovery from checkpoint LSN=(\d+)")
PAGES_RE = re.compile(r"To recover: (\d+) pages")
MULTI_RE = re.compile(r"Multi-batch recovery needed at LSN (\d+)")
END_RE = re.compile(r"End of log at LSN=(\d+)")
BATCH_RE = re.compile(r"To recover: LSN (\d+)/\d+; (\d+) pages")      # every batch but the last


def status(server: capture.Server, names: tuple[str, ...]) -> dict[str, int]:
    out = server.sql("SHOW GLOBAL STATUS WHERE Variable_name IN (%s)" % ",".join(f"'{n}'" for n in names)).stdout
    vals = {}
    for line in out.splitlines():
        k, _, v = line.partition("\t")
        vals[k] = int(v)
    return vals


def redo_per_commit(start: dict[str, int], end: dict[str, int]) -> float | None:
    """Redo bytes written per commit between two status samples (None without a commit)."""
    commits = end.get("Com_commit", 0) - start.get("Com_commit", 0)
    if commits <= 0:
        return None
    return (end["Innodb_lsn_current"] - start["Innodb_lsn_current"]) / commits


def timed_start(server: capture.Server) -> tuple[float, list[tuple[float, str]]]:
    """Start mariadbd and wait until it answers; returns the seconds that took and each line the
    server printed with the second (since the start) it was read at (the log's own stamps are
    whole seconds)."""
    lines: list[tuple[float, str]] = []
    t0 = time.monotonic()
    server.proc = subprocess.Popen([capture.tool("mariadbd"), f"--defaults-file={server.cnf}", *server.user],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)

    def reader() -> None:
        for line in server.proc.stdout:
            lines.append((time.monotonic() - t0, line.rstrip("\n")))

    threading.Thread(target=reader, daemon=True).start()
    while time.monotonic() - t0 < 1800:
        if server.proc.poll() is not None:
            raise capture.CaptureError("mariadbd exited during its start: " + " | ".join(t for _, t in lines[-5:]))
        if server.sock.exists() and server.sql("SELECT 1", check=False).returncode == 0:
            return time.monotonic() - t0, lines
        time.sleep(0.05)
    raise capture.CaptureError("mariadbd did not come up within 1800 s")


PHASES = (("scan_start", "Starting crash recovery"), ("scan_end", "End of log at"),
          ("apply_start", "To recover:"), ("apply_end", "rollback segments are active"))


def phases(lines: list[tuple[float, str]]) -> dict[str, float | None]:
    """When the restart printed each milestone of recovery, seconds from its start."""
    return {name: next((t for t, text in lines if marker in text), None) for name, marker in PHASES}


def parse_recovery(text: str) -> dict:
    """The checkpoint LSN recovery started from, the end of the log it scanned to, and the page count."""
    ck = CKPT_RE.search(text)
    pages = [int(m) for m in PAGES_RE.findall(text)]
    lsns = [int(m) for m in END_RE.findall(text)]
    multi = MULTI_RE.search(text)
    return {"checkpoint_lsn": int(ck.group(1)) if ck else None,
            "max_lsn_in_log": max(lsns) if lsns else None,
            "to_recover_pages": max(pages) if pages else None,
            # The parsed records outgrew their share of the buffer pool: applied in batches.
            "multi_batch_at_lsn": int(multi.group(1)) if multi else None}


def batches_of(log_text: str) -> dict | None:
    """A restart's batches from its log as written here (each line starts with the second it was
    read at): the checkpoint, the LSN where the first pass found the pool full and when, when the
    log's end was reached and at which LSN, and each batch's last LSN and pages ("To recover: LSN
    a/b; N pages" for every batch but the last, "To recover: N pages" for the last). None for one
    batch."""
    seen: dict = {"batches": []}
    for line in log_text.splitlines():
        t_text, _, text = line.strip().partition(" ")
        if m := CKPT_RE.search(text):
            seen["checkpoint"] = int(m.group(1))
        elif m := MULTI_RE.search(text):
            seen["oom"] = (float(t_text), int(m.group(1)))
        elif m := END_RE.search(text):
            seen["end"] = (float(t_text), int(m.group(1)))
        elif m := BATCH_RE.search(text):
            seen["batches"].append((int(m.group(1)), int(m.group(2))))
        elif m := PAGES_RE.search(text):
            seen["last_pages"] = int(m.group(1))
    return seen if "oom" in seen else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--ages-mb", default="150,400,700", help="checkpoint ages to crash at, MiB")
    ap.add_argument("--install", action="store_true")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--buffer-pool", default="2G")
    ap.add_argument("--log-file-size", default="1G")
    ap.add_argument("--io-capacity", type=int, default=100)
    ap.add_argument("--tables", type=int, default=8)
    ap.add_argument("--table-size", type=int, default=250000)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--rand-type", default="special", help="sysbench --rand-type (uniform: many pages)")
    args = ap.parse_args()
    if args.install:
        capture.install()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    work = args.work or out / "work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    server = capture.Server(work, args)
    # Redo is produced faster when commits do not wait for the disk; recovery is the same.
    server.cnf.write_text(server.cnf.read_text().replace("innodb_flush_log_at_trx_commit = 1",
                                                         "innodb_flush_log_at_trx_commit = 2"))
    server.start()
    server.sql("CREATE DATABASE sbtest")
    sb = [capture.tool("sysbench"), "oltp_write_only", "--db-driver=mysql", f"--mysql-socket={server.sock}",
          "--mysql-user=root", "--mysql-db=sbtest", f"--tables={args.tables}", f"--table-size={args.table_size}",
          f"--rand-type={args.rand_type}"]
    capture.log("sysbench prepare")
    subprocess.run(sb + ["--threads=4", "prepare"], check=True, stdout=subprocess.DEVNULL)
    # Warm the pool and flush everything, so each crash starts from a clean, warm server.
    server.stop()
    clean_s, _ = timed_start(server)
    runs = []
    for n, age_mb in enumerate(int(a) for a in args.ages_mb.split(",")):
        capture.log(f"load until the checkpoint age reaches {age_mb} MiB")
        load = subprocess.Popen(sb + [f"--threads={args.threads}", "--time=3600", "run"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        names = ("Innodb_checkpoint_age", "Innodb_lsn_current", "Innodb_lsn_last_checkpoint", "Com_commit")
        st = first = status(server, names)
        # Until the age is reached, or it has not grown for 30 s (the server's flushing holds it
        # lower): the crash then comes at the age it holds, which the record says.
        top, top_t = 0, t0
        while st["Innodb_checkpoint_age"] < age_mb << 20 and time.monotonic() - top_t < 30:
            time.sleep(0.2)
            st = status(server, names)
            if st["Innodb_checkpoint_age"] > top:
                top, top_t = st["Innodb_checkpoint_age"], time.monotonic()
        server.proc.kill()                              # SIGKILL: the crash
        server.proc.wait()
        load.kill()
        load.wait()
        (work / "mysqld.sock").unlink(missing_ok=True)
        capture.log(f"crashed at checkpoint age {st['Innodb_checkpoint_age'] >> 20} MiB; restarting")
        restart_s, lines = timed_start(server)
        text = "\n".join(f"{t:9.3f}  {line}" for t, line in lines) + "\n"
        (out / f"restart-{n}.log").write_text(text)
        rec = parse_recovery(text)
        rec["phases_s"] = phases(lines)
        runs.append({"target_age_bytes": age_mb << 20, "load_s": time.monotonic() - t0 - restart_s,
                     "status_at_load_start": first, "status_before_crash": st,
                     # The load's redo per transaction (sysbench commits each one): what a scenario's
                     # workload.redo_bytes_per_txn would be for it.
                     "redo_bytes_per_commit": redo_per_commit(first, st), "restart_s": restart_s, **rec,
                     "redo_scanned_bytes": (rec["max_lsn_in_log"] - rec["checkpoint_lsn"])
                     if rec["checkpoint_lsn"] and rec["max_lsn_in_log"] else None})
        server.sql("SELECT 1")
        server.stop()                                   # a clean shutdown before the next crash
        timed_start(server)
    server.stop()
    server.proc.wait()
    doc = {"what": "crash recovery of MariaDB on this machine (validation/live/crash_recovery.py)",
           "mariadbd": capture.version([capture.tool("mariadbd"), "--version"]),
           "sysbench": capture.version([capture.tool("sysbench"), "--version"]),
           "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
           "settings": {k: getattr(args, k) for k in ("buffer_pool", "log_file_size", "io_capacity", "tables",
                                                       "table_size", "threads", "rand_type")},
           "my_cnf": (work / "my.cnf").read_text(), "clean_restart_s": clean_s, "crashes": runs}
    (out / "crash_recovery.json").write_text(json.dumps(doc, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    capture.log(f"wrote {out / 'crash_recovery.json'}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (capture.CaptureError, subprocess.CalledProcessError) as e:
        print(f"crash_recovery: {e}", file=sys.stderr)
        sys.exit(2)
