"""Random search of the engine's invariants: many short runs with random settings, every version.

Each run draws a server version and its settings (buffer pool size and instances, redo size,
innodb_flush_log_at_trx_commit, doublewrite, flush method, native AIO, io_capacity and its max,
neighbour flushing, checksum algorithm, page size, innodb_thread_concurrency and its sleep delays,
file-per-table, binary log, innodb_dedicated_server, innodb_use_fdatasync, O_DSYNC, MySQL 8.0's
innodb_log_writer_threads and innodb_log_spin_cpu_abs_lwm), a device and
filesystem, and a workload (closed or open loop), then runs 2 simulated seconds (--duration) with the invariants checked every 100 ms
and at the end (`sim.engine.Server.end_violations`: nothing lost, checkpoint <= oldest dirty page
<= lsn, the checkpoint age within the redo capacity, redo flushed <= written <= lsn with no
durable commit left waiting, the pool's counters against its pages, and in
an open loop every arrival committed, running or queued). A combination a
version refuses (an InputError, as the CLI would print) is counted and skipped.

Usage: python validation/fuzz_engine.py [--seed 1] [--runs 500] [--duration 2s] [--out DIR]
Prints the counts; for each run that breaks an invariant or raises, its scenario is written to
DIR (default fuzz-engine-failures/), resolved with every default filled in as `innosim run -o`
writes it (sim.run_output.resolved_toml), and the exit code is 1.
The test suite runs the same checks on fixed settings (tests/test_engine.py and others).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from models.errors import InputError  # noqa: E402
from models.versions import VERSION_NAMES, version as version_of  # noqa: E402
from sim.config import scenario_from_dict  # noqa: E402
from sim.engine import Server  # noqa: E402
from sim.run_output import resolved_toml  # noqa: E402

DEVICES = ("seed-12core-disks-2012", "fusionio-2012", "samsung-pm883", "intel-d3-s4610", "rpi-hothanh7-nvme")
CHECKSUMS = {"mariadb-10.11": ("full_crc32", "crc32")}


def draw(rng: random.Random, duration: str = "2s") -> dict:
    """One random scenario document (the shape of a scenario TOML file)."""
    version = rng.choice(VERSION_NAMES)
    mariadb = version.startswith("mariadb")
    pool_mb = rng.choice((8, 24, 64, 1024))
    cap = rng.choice((100, 200, 1000))
    server = {
        "version": version,
        "innodb_buffer_pool_size": f"{pool_mb}M",
        "innodb_flush_log_at_trx_commit": rng.choice((0, 1, 2)),
        "innodb_doublewrite": rng.choice((True, False, "DETECT_ONLY") if version in ("mysql-8.0.30", "mysql-8.4")
                                         else (True, False)),
        "innodb_flush_method": rng.choice(("fsync", "O_DIRECT", "O_DIRECT_NO_FSYNC")),
        "innodb_use_native_aio": rng.choice((True, False)),
        "innodb_io_capacity": cap,
        "innodb_io_capacity_max": max(cap, rng.choice((200, 400, 2000, 20000))),
        "innodb_flush_neighbors": rng.choice((0, 1, 2)),
        "innodb_checksum_algorithm": rng.choice(CHECKSUMS.get(version, ("innodb", "crc32", "none"))),
        "innodb_lru_scan_depth": rng.choice((100, 1024)),
    }
    log_mb = rng.choice((2, 4, 16, 64))
    if version in ("mysql-8.0.30", "mysql-8.4"):
        server["innodb_redo_log_capacity"] = f"{2 * max(log_mb, 4)}M"
    else:
        server["innodb_log_file_size"] = f"{log_mb}M"
        if not mariadb:
            server["innodb_log_files_in_group"] = 2
    if not mariadb:
        server["innodb_buffer_pool_instances"] = rng.choice((1, 2, 8)) if pool_mb >= 1024 else 1
    kernel = rng.choice(("2012", "modern"))
    mount = "noatime" if kernel == "modern" else rng.choice(("noatime,nodiratime,nobarrier", "noatime"))
    doc = {
        "server": server,
        "hardware": {"device": rng.choice(DEVICES), "filesystem": rng.choice(("ext4", "xfs")), "kernel": kernel,
                     "mount_options": mount, "cpu_cores": rng.choice((2, 4, 12))},
        "workload": {"kind": "oltp", "profile": rng.choice(("dbt2", "sysbench")),
                     "data_size": rng.choice(("48M", "200M", "2G")), "users": rng.choice((1, 4, 16, 64))},
        "run": {"duration": duration, "seed": rng.randrange(10**6)},
    }
    # Drawn last (added 2026-11-25): a seed's first run draws the above as before; its later runs differ.
    doc["workload"]["warm_start"] = rng.random() < 0.75
    sizes = version_of(version).page_sizes
    server["innodb_page_size"] = rng.choice(sizes) if rng.random() < 0.3 else 16384
    if not mariadb and rng.random() < 0.25:                      # innodb_thread_concurrency (drawn last)
        conc = rng.choice((1, 2, 8))
        # log_calc_max_ages reserves 4 pages per seat: small logs with large pages would be refused.
        server["innodb_thread_concurrency"] = conc if log_mb >= 16 else 1
        server["innodb_thread_sleep_delay"] = rng.choice((0, 10000))
        server["innodb_adaptive_max_sleep_delay"] = rng.choice((0, 150000))
    if rng.random() < 0.25:
        server["innodb_file_per_table"] = False
    if rng.random() < 0.3:
        server["log_bin"] = True
        server["sync_binlog"] = rng.choice((0, 1, 5))
    if version.startswith("mysql-8") and rng.random() < 0.2:     # innodb_dedicated_server (drawn last)
        server["innodb_dedicated_server"] = True
        doc["hardware"]["memory"] = rng.choice(("700M", "2G", "3G", "6G"))
        if rng.random() < 0.5:                                      # and let it choose what it sizes
            for key in ("innodb_buffer_pool_size", "innodb_buffer_pool_instances", "innodb_log_file_size",
                        "innodb_log_files_in_group", "innodb_redo_log_capacity", "innodb_flush_method"):
                server.pop(key, None)
    if rng.random() < 0.2:                                       # open loop (drawn last)
        doc["workload"]["rate"] = rng.choice((100.0, 1000.0, 10000.0))
    # Drawn last (added 2026-11-26): fdatasync on 8.x, and O_DSYNC (the log opened O_SYNC on MySQL).
    if version.startswith("mysql-8") and rng.random() < 0.3:
        server["innodb_use_fdatasync"] = rng.choice((True, False))
    if rng.random() < 0.1:
        server["innodb_flush_method"] = "O_DSYNC"
    # Drawn last (added 2026-12-01): MySQL 8.0's log threads off, or spinning at another CPU floor.
    if version.startswith("mysql-8") and rng.random() < 0.3:
        server["innodb_log_writer_threads"] = rng.choice((True, False))
        server["innodb_log_spin_cpu_abs_lwm"] = rng.choice((0, 80, 400))
    return doc


def check_one(scn) -> list[str]:
    """The invariants a run of the scenario broke (empty: none)."""
    srv = Server(scn, check_every_s=0.1)
    srv.pool.track_writes()
    try:
        res = srv.run()
    except Exception:                      # noqa: BLE001 - any exception is a finding
        return ["raised: " + traceback.format_exc(limit=6)]
    return srv.end_violations(res)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--out", type=Path, default=Path("fuzz-engine-failures"))
    ap.add_argument("--duration", default="2s", help="simulated time per run (default 2s)")
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    t0 = time.perf_counter()
    ran = refused = failed = 0
    for i in range(a.runs):
        try:
            scn = scenario_from_dict(draw(rng, a.duration), f"fuzz-seed{a.seed}-run{i}")
        except InputError:
            refused += 1
            continue
        ran += 1
        found = check_one(scn)
        if found:
            failed += 1
            a.out.mkdir(parents=True, exist_ok=True)
            path = a.out / f"seed{a.seed}-run{i}.toml"
            path.write_text("# " + "\n# ".join(m.replace("\n", " | ") for m in found) + "\n" + resolved_toml(scn))
            print(f"run {i}: {found[0].splitlines()[0]} (scenario: {path})")
    print(f"{ran} runs checked, {refused} refused by the version (InputError), {failed} broke an invariant; "
          f"{time.perf_counter() - t0:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
