#!/usr/bin/env python3
"""innosim live capture kit: measure this machine's storage and a real MariaDB under load, in the
formats `innosim calibrate` reads.

What it does (validation/live/README.md has the details and how to use the outputs):
 1. optionally installs fio, MariaDB and sysbench from the distribution's packages (--install);
 2. runs a fio grid (random 4K and 16K reads and writes at several queue depths, plus a few
    4-job runs to hold out, and one job of 4K O_DIRECT writes each followed by fdatasync, as the
    redo log is written, which times the device's cache flush) on a file in the work directory:
    OUT/fio/*.json;
 3. starts a private MariaDB on 127.0.0.1 (its own data directory, socket and port; nothing of an
    installed server is touched), loads sysbench's oltp tables, and runs sysbench oltp_read_write
    with --report-interval=1: OUT/sysbench.txt;
 4. while sysbench runs, samples SHOW GLOBAL STATUS and INFORMATION_SCHEMA.INNODB_METRICS every
    second (OUT/samples.csv) and keeps `mysqladmin extended-status -r -i 1` running
    (OUT/mysqladmin.txt);
 5. writes OUT/capture.json: versions, settings, machine, and the times that align the files, and
    OUT/my.cnf: the private server's option file (`innosim run SCENARIO --my-cnf OUT/my.cnf`), and
    OUT/variables.tsv: its InnoDB variables, log_bin, sync_binlog and version (`--server-vars
    OUT/variables.tsv`).

Standard library only, so it runs with the system python3. Run as root (or a user who may run
mariadbd and write the work directory). It needs a few minutes and about 2 GB of disk.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

PACKAGES = {"apt-get": ["fio", "mariadb-server", "mariadb-client", "sysbench"],
            "dnf": ["fio", "mariadb-server", "sysbench"]}
TOOLS = ("fio", "sysbench", "mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin")
FALLBACK = {"mariadbd": "mysqld", "mariadb-install-db": "mysql_install_db", "mariadb": "mysql",
            "mariadb-admin": "mysqladmin"}


class CaptureError(Exception):
    pass


def log(msg: str) -> None:
    print(f"[capture {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def tool(name: str) -> str:
    for candidate in (name, FALLBACK.get(name)):
        if candidate:
            for d in ("", "/usr/sbin/", "/usr/libexec/"):
                path = shutil.which(d + candidate) if d else shutil.which(candidate)
                if path:
                    return path
    raise CaptureError(f"{name} not found (run with --install, or install fio, mariadb-server and sysbench)")


def install() -> None:
    for manager, pkgs in PACKAGES.items():
        if shutil.which(manager):
            log(f"installing {' '.join(pkgs)} with {manager}")
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            if manager == "apt-get":
                subprocess.run([manager, "update", "-q"], check=True, env=env)
            subprocess.run([manager, "install", "-y", "-q", *pkgs], check=True, env=env)
            return
    raise CaptureError("no apt-get or dnf: install fio, mariadb-server and sysbench by hand")


def version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else "unknown"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_cache(source: str) -> str:
    """/sys/block/DEV/queue/write_cache of the device under `source` (its disk for a partition)."""
    names = [Path(source).name, version(["lsblk", "-ndo", "PKNAME", source])]
    for name in names:
        f = Path("/sys/class/block") / name / "queue" / "write_cache"
        if name and f.is_file():
            return f.read_text().strip()
    return "unknown"


# -- fio -----------------------------------------------------------------------------------------

def fio_jobs(depths: list[int]) -> list[dict]:
    jobs = []
    for rw in ("randread", "randwrite"):
        for bs in ("4k", "16k"):
            for qd in depths:
                jobs.append({"rw": rw, "bs": bs, "iodepth": qd, "numjobs": 1})
            for qd in (2, 8):
                jobs.append({"rw": rw, "bs": bs, "iodepth": qd, "numjobs": 4})
    return jobs


# Appending 4K O_DIRECT writes, each followed by fdatasync(), as InnoDB writes and syncs its redo
# log: fio's `sync` latency is then the filesystem's fdatasync plus the device's cache flush
# (`innosim calibrate fio` fits the profile's flush_s from it). fio >= 3.5 reports it.
FDATASYNC_JOB = {"name": "fdatasync-4k-qd1-nj1", "rw": "write", "bs": "4k", "ioengine": "psync", "fdatasync": 1}


def fdatasync_cmd(name: str, target: Path, size: str, seconds: int, output: Path, ramp_s: int) -> list[str]:
    """fio's command line for FDATASYNC_JOB under `name`, `ramp_s` seconds of ramp (0: none)."""
    j = FDATASYNC_JOB
    return [tool("fio"), f"--name={name}", f"--filename={target}", f"--size={size}", f"--rw={j['rw']}",
            f"--bs={j['bs']}", "--direct=1", f"--ioengine={j['ioengine']}", f"--fdatasync={j['fdatasync']}",
            "--time_based", f"--runtime={seconds}", *([f"--ramp_time={ramp_s}"] if ramp_s else []),
            "--output-format=json", f"--output={output}"]


def run_fio(out: Path, work: Path, seconds: int, depths: list[int], size: str) -> list[str]:
    fio = tool("fio")
    d = out / "fio"
    d.mkdir(parents=True, exist_ok=True)
    target = work / "fio.dat"
    names = []
    jobs = fio_jobs(depths)
    for n, j in enumerate(jobs, 1):
        name = f"{j['rw']}-{j['bs']}-qd{j['iodepth']}-nj{j['numjobs']}"
        log(f"fio {n}/{len(jobs)}: {name}")
        cmd = [fio, f"--name={name}", f"--filename={target}", f"--size={size}", f"--rw={j['rw']}",
               f"--bs={j['bs']}", f"--iodepth={j['iodepth']}", f"--numjobs={j['numjobs']}", "--direct=1",
               "--ioengine=libaio", "--time_based", f"--runtime={seconds}", "--ramp_time=1", "--group_reporting",
               "--randrepeat=0", "--output-format=json", f"--output={d / (name + '.json')}"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        names.append(name + ".json")
    name = FDATASYNC_JOB["name"]
    log(f"fio {len(jobs) + 1}/{len(jobs) + 1}: {name}")
    subprocess.run(fdatasync_cmd(name, target, size, seconds, d / (name + ".json"), ramp_s=1), check=True,
                   stdout=subprocess.DEVNULL)
    names.append(name + ".json")
    target.unlink(missing_ok=True)
    return names


# -- MariaDB -------------------------------------------------------------------------------------

def my_cnf(work: Path, port: int, args) -> str:
    return f"""[mariadbd]
datadir = {work / 'data'}
socket = {work / 'mysqld.sock'}
pid-file = {work / 'mysqld.pid'}
port = {port}
bind-address = 127.0.0.1
skip-name-resolve
skip-log-bin
performance_schema = OFF
max_connections = 200
innodb_buffer_pool_size = {args.buffer_pool}
innodb_log_file_size = {args.log_file_size}
innodb_flush_method = O_DIRECT
innodb_flush_log_at_trx_commit = 1
innodb_io_capacity = {args.io_capacity}
innodb_io_capacity_max = {args.io_capacity * 2}
innodb_doublewrite = 1
innodb_file_per_table = 1
"""


class Server:
    def __init__(self, work: Path, args) -> None:
        self.work = work
        self.port = free_port()
        self.cnf = work / "my.cnf"
        self.cnf.write_text(my_cnf(work, self.port, args))
        self.sock = work / "mysqld.sock"
        self.proc: subprocess.Popen | None = None
        self.client = tool("mariadb")
        self.user = ["--user=root"] if os.geteuid() == 0 else []

    def start(self) -> None:
        data = self.work / "data"
        if not (data / "mysql").exists():
            log("initialising a private data directory")
            subprocess.run([tool("mariadb-install-db"), f"--defaults-file={self.cnf}", *self.user,
                            "--auth-root-authentication-method=normal", "--skip-test-db"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        log(f"starting mariadbd on 127.0.0.1:{self.port}")
        self.proc = subprocess.Popen([tool("mariadbd"), f"--defaults-file={self.cnf}", *self.user],
                                     stdout=open(self.work / "mariadbd.out", "w"), stderr=subprocess.STDOUT)
        for _ in range(120):
            if self.proc.poll() is not None:
                raise CaptureError(f"mariadbd exited; see {self.work / 'mariadbd.out'}")
            if self.sock.exists() and self.sql("SELECT 1", check=False).returncode == 0:
                return
            time.sleep(0.5)
        raise CaptureError("mariadbd did not come up within 60 s")

    def sql(self, query: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([self.client, f"--socket={self.sock}", "-uroot", "-N", "-B", "-e", query],
                              capture_output=True, text=True, check=check)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            log("stopping mariadbd")
            subprocess.run([tool("mariadb-admin"), f"--socket={self.sock}", "-uroot", "shutdown"],
                           capture_output=True)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def schedstat(pid: int) -> tuple[int, int, int] | None:
    """The threads of process `pid` summed from /proc/PID/task/*/schedstat (Linux with
    CONFIG_SCHED_INFO): ns on a CPU, ns waiting in a run queue, times run. None where not readable."""
    total, seen = [0, 0, 0], False
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            fields = (task / "schedstat").read_text().split()
            values = [int(x) for x in fields[:3]]
        except (OSError, ValueError):
            continue                                    # the thread ended, or no schedstat
        if len(values) == 3:
            seen = True
            for i in range(3):
                total[i] += values[i]
    return (total[0], total[1], total[2]) if seen else None


class Sampler(threading.Thread):
    """SHOW GLOBAL STATUS and INNODB_METRICS every second (one client call per sample), and the
    server's threads' scheduling counters summed (schedstat: `server_cpu_ns`, `server_runq_wait_ns`,
    `server_runs`; cumulative, as long as the server's threads live; absent where the kernel has
    no schedstat): their run-queue wait per run says how long a thread that becomes runnable
    waits for a CPU."""

    # Every metric (disabled ones read 0; MariaDB has an ENABLED column, MySQL a STATUS one).
    QUERY = "SHOW GLOBAL STATUS; SELECT NAME, COUNT FROM information_schema.INNODB_METRICS"

    def __init__(self, server: Server, t0: float) -> None:
        super().__init__(daemon=True)
        self.server, self.t0 = server, t0
        self.rows: list[dict] = []
        self.stop_event = threading.Event()

    def run(self) -> None:
        next_t = self.t0
        while not self.stop_event.is_set():
            now = time.time()
            out = self.server.sql(self.QUERY, check=False)
            if out.returncode == 0:
                row = {"timestamp": f"{now:.3f}", "time_s": f"{now - self.t0:.3f}"}
                for line in out.stdout.splitlines():
                    parts = line.split("\t")
                    if len(parts) == 2:
                        row[parts[0]] = parts[1]
                proc = self.server.proc
                sched = schedstat(proc.pid) if proc is not None else None
                if sched is not None:
                    row["server_cpu_ns"], row["server_runq_wait_ns"], row["server_runs"] = map(str, sched)
                self.rows.append(row)
            next_t += 1.0
            self.stop_event.wait(max(0.0, next_t - time.time()))

    def write(self, path: Path) -> None:
        names: list[str] = []
        seen = set()
        for r in self.rows:
            for k in r:
                if k not in seen:
                    seen.add(k)
                    names.append(k)
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=names)
            w.writeheader()
            w.writerows(self.rows)


def sysbench_args(server: Server, args) -> list[str]:
    return [tool("sysbench"), "oltp_read_write", "--db-driver=mysql", f"--mysql-socket={server.sock}",
            "--mysql-user=root", "--mysql-db=sbtest", f"--tables={args.tables}", f"--table-size={args.table_size}"]


def run_database(out: Path, work: Path, args) -> dict:
    server = Server(work, args)
    server.start()
    meta: dict = {"my_cnf": server.cnf.read_text()}
    # The server's option file, for `innosim run SCENARIO --my-cnf OUT/my.cnf`.
    (out / "my.cnf").write_text(meta["my_cnf"])
    try:
        server.sql("CREATE DATABASE IF NOT EXISTS sbtest")
        log(f"sysbench prepare: {args.tables} tables x {args.table_size} rows")
        subprocess.run([*sysbench_args(server, args), f"--threads={min(args.tables, 8)}", "prepare"], check=True,
                       stdout=subprocess.DEVNULL)
        server.sql("SET GLOBAL innodb_monitor_enable = 'all'", check=False)
        size = server.sql("SELECT SUM(data_length + index_length) FROM information_schema.TABLES "
                          "WHERE table_schema = 'sbtest'").stdout.strip()
        meta["data_bytes"] = int(float(size or 0))
        meta["variables"] = dict(line.split("\t", 1) for line in server.sql(
            "SHOW GLOBAL VARIABLES WHERE Variable_name LIKE 'innodb%' OR Variable_name IN "
            "('version', 'log_bin', 'sync_binlog')"
        ).stdout.splitlines() if "\t" in line)
        # As SHOW GLOBAL VARIABLES prints them, for `innosim run SCENARIO --server-vars OUT/variables.tsv`.
        (out / "variables.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in meta["variables"].items()))
        log(f"sysbench run: {args.threads} threads, {args.seconds} s")
        t0 = time.time()
        sampler = Sampler(server, t0)
        sampler.start()
        madmin = subprocess.Popen([tool("mariadb-admin"), f"--socket={server.sock}", "-uroot", "extended-status",
                                   "-r", "-i", "1"], stdout=open(out / "mysqladmin.txt", "w"),
                                  stderr=subprocess.DEVNULL)
        meta["sysbench_start_epoch"] = time.time()
        with open(out / "sysbench.txt", "w") as f:
            subprocess.run([*sysbench_args(server, args), f"--threads={args.threads}", f"--time={args.seconds}",
                            "--report-interval=1", "--percentile=95", "run"], check=True, stdout=f)
        sampler.stop_event.set()
        sampler.join(timeout=10)
        madmin.send_signal(signal.SIGTERM)
        madmin.wait(timeout=10)
        sampler.write(out / "samples.csv")
        meta.update({"sampler_start_epoch": t0, "samples": len(sampler.rows)})
    finally:
        server.stop()
    return meta


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="directory for the outputs (created)")
    ap.add_argument("--work", help="scratch directory on the storage to measure (default OUT/work; removed after)")
    ap.add_argument("--install", action="store_true", help="install fio, mariadb-server and sysbench first")
    ap.add_argument("--skip-fio", action="store_true", help="only the database part")
    ap.add_argument("--skip-db", action="store_true", help="only the fio grid (needs only fio)")
    ap.add_argument("--fio-seconds", type=int, default=4, help="measured seconds per fio job (default 4)")
    ap.add_argument("--fio-depths", default="1,2,4,8,16,32,64", help="iodepths of the 1-job runs")
    ap.add_argument("--fio-size", default="2G", help="fio test file size (default 2G)")
    ap.add_argument("--seconds", type=int, default=180, help="sysbench run time (default 180)")
    ap.add_argument("--threads", type=int, default=16, help="sysbench threads (default 16)")
    ap.add_argument("--tables", type=int, default=8, help="sysbench tables (default 8)")
    ap.add_argument("--table-size", type=int, default=400000, help="rows per table (default 400000)")
    ap.add_argument("--buffer-pool", default="256M", help="innodb_buffer_pool_size (default 256M)")
    ap.add_argument("--log-file-size", default="96M", help="innodb_log_file_size (default 96M)")
    ap.add_argument("--io-capacity", type=int, default=400, help="innodb_io_capacity (max: twice; default 400)")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    work = Path(args.work).resolve() if args.work else out / "work"
    try:
        if args.install:
            install()
        if args.skip_fio and args.skip_db:
            raise CaptureError("--skip-fio and --skip-db leave nothing to capture")
        needed = [t for t in TOOLS if (t == "fio" and not args.skip_fio) or (t != "fio" and not args.skip_db)]
        for t in needed:
            tool(t)
        out.mkdir(parents=True, exist_ok=True)
        work.mkdir(parents=True, exist_ok=True)
        mount = version(["findmnt", "-n", "-o", "FSTYPE,SOURCE,OPTIONS", "-T", str(work)])
        meta: dict = {
            "kit": "innosim validation/live/capture.py",
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                        "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
                        "work_dir": str(work),
                        "filesystem": mount,
                        # 1: the device reports itself rotational; MariaDB then flushes neighbour
                        # pages. Give `innosim calibrate fio --rotational` then.
                        "rotational": version(["lsblk", "-ndo", "ROTA", mount.split()[1]])
                        if len(mount.split()) > 1 else "unknown",
                        # "write back": the device caches writes and fdatasync() sends it a cache
                        # flush (what the fdatasync job times); "write through": it does not.
                        "write_cache": write_cache(mount.split()[1]) if len(mount.split()) > 1 else "unknown"},
            "versions": {t: version([tool(t), "--version"]) for t in ("fio", "sysbench", "mariadbd") if t in needed},
            "settings": {k: v for k, v in vars(args).items() if k not in ("out", "work")},
        }
        if not args.skip_fio:
            depths = [int(x) for x in args.fio_depths.split(",")]
            meta["fio_files"] = run_fio(out, work, args.fio_seconds, depths, args.fio_size)
        if not args.skip_db:
            meta["database"] = run_database(out, work, args)
        meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        (out / "capture.json").write_text(json.dumps(meta, indent=2) + "\n")
        shutil.rmtree(work, ignore_errors=True)
        log(f"done: {out}")
        return 0
    except CaptureError as err:
        print(f"capture: {err}", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as err:
        print(f"capture: {' '.join(map(str, err.cmd[:3]))} ... failed with exit code {err.returncode}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("capture: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
