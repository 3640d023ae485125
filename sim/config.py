"""Scenario files: TOML with [server], [hardware], [workload], [run]; validated, units resolved.

Every key is declared once in SCHEMA with its type, default, range and meaning. Loading rejects
unknown sections and keys, wrong types and out-of-range values with one InputError naming the
file (or `--set`), the key, the value and what is allowed. `--set section.key=value` overrides
are applied to the raw document before validation, so they are checked the same way.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from models import dedicated_server
from models.block_layer import NR_REQUESTS, NR_REQUESTS_RANGE, QUEUE_DEPTH_RANGE, QUEUE_DEPTH_SATA
from models.checksum import ALL_ALGORITHMS
from models.device import builtin_profile_names
from models.doublewrite import DETECT_ONLY, WORDS_ENUM, doublewrite_word
from models.errors import InputError
from models.file_access import FAST, translate_flush_method_110
from models.filesystem import (ERA_MOUNT_OPTIONS, FILESYSTEMS, IO_MODES, KERNELS, MOUNT_OPTIONS, make_spec,
                               mount_options_for)
from models.iobench import PATTERNS
from models.page_cleaner_mariadb import CLEANER_WAKE_RACE
from models.redo import REDO_LOG_CAPACITY_MAX, REDO_LOG_CAPACITY_MIN, redo_limits
from models.releases import (MYSQL_80_SETTINGS_FROM, SETTINGS_INTRODUCED, mysql_80_lacks, release_has,
                             setting_introduced)
from models.run_queue import CPU_RUN_S
from models.versions import (PAGE_SIZES, VERSION_NAMES, VERSIONS, buf_pool_size_align, buffer_pool_instances_default,
                             io_capacity_max_default, startup_instances, version as version_of)
from sim.units import format_size, parse_duration_s, parse_size_bytes


@dataclass(frozen=True)
class Key:
    """One scenario key: how to parse it and what is allowed."""

    attr: str                     # dataclass attribute (with its unit suffix)
    kind: str                     # size | duration | int | float | choice | bool | str
    default: Any
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    listable: bool = False        # may be a list: a grid axis (iobench)
    doc: str = ""

    def allowed(self) -> str:
        if self.kind == "choice":
            text = ", ".join(str(c) for c in self.choices)
        elif self.kind == "size":
            text = f"a size from {format_size(int(self.lo))} to {format_size(int(self.hi))}"
        elif self.kind == "duration":
            text = f"a duration from {self.lo:g}s to {self.hi:g}s"
        elif self.kind == "int":
            text = f"int from {int(self.lo)} to {int(self.hi)}"
        elif self.kind == "float":
            text = f"float from {self.lo:g} to {self.hi:g}"
        elif self.kind == "bool":
            text = "true or false (ON, OFF, 1 or 0 as in my.cnf)"
        else:
            text = "a string"
        return text + (" (or a list of them)" if self.listable else "")


G = 1 << 30
SCHEMA: dict[str, dict[str, Key]] = {
    "server": {
        "version": Key("version", "choice", "mysql-5.6", choices=VERSION_NAMES,
                       doc="server whose algorithms and defaults are simulated (models/versions.py)"),
        "innodb_page_size": Key("innodb_page_size_bytes", "choice", 16384, choices=PAGE_SIZES,
                                doc="InnoDB page size (5.6: 4K, 8K, 16K; 5.7+ and MariaDB also 32K, 64K)"),
        "innodb_flush_method": Key("innodb_flush_method", "choice", "fsync",
                                   choices=("fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT",
                                            "O_DIRECT_NO_FSYNC"),
                                   doc="how data and log files are opened and flushed (5.6, Linux)"),
        "innodb_dedicated_server": Key("innodb_dedicated_server", "bool", False,
                                       doc="8.0+: size the buffer pool and redo log from hardware.memory (8.4: "
                                           "the redo log from hardware.cpu_cores) and, in 8.0, use "
                                           "O_DIRECT_NO_FSYNC, for what is left out (models/dedicated_server.py)"),
        "innodb_buffer_pool_size": Key("innodb_buffer_pool_size_bytes", "size", 128 << 20, 5 << 20, 1 << 42),
        "innodb_buffer_pool_chunk_size": Key("innodb_buffer_pool_chunk_size_bytes", "size", 128 << 20, 0,
                                             1 << 42, doc="5.7.5+: the pool is rounded up to a multiple of "
                                                          "this x the instances (at least 1M; MariaDB: no "
                                                          "effect, default 0)"),
        "innodb_buffer_pool_instances": Key("innodb_buffer_pool_instances", "int", 8, 1, 64,
                                            doc="default 8 (8.4: from the pool size and cores; MariaDB: one pool)"),
        "innodb_log_file_size": Key("innodb_log_file_size_bytes", "size", 48 << 20, 1 << 20, 512 * G),
        "innodb_log_files_in_group": Key("innodb_log_files_in_group", "int", 2, 2, 100),
        "innodb_redo_log_capacity": Key("innodb_redo_log_capacity_bytes", "size", 100 << 20, REDO_LOG_CAPACITY_MIN,
                                        REDO_LOG_CAPACITY_MAX, doc="8.0.30+: redo size (replaces the two above)"),
        "innodb_thread_concurrency": Key("innodb_thread_concurrency", "int", 0, 0, 1000,
                                         doc="user threads inside InnoDB at once (0: no limit; models/srv_conc.py)"),
        "innodb_thread_sleep_delay": Key("innodb_thread_sleep_delay_us", "int", 10000, 0, 1000000,
                                         doc="microseconds a thread sleeps before trying to enter InnoDB "
                                             "again (with innodb_thread_concurrency)"),
        "innodb_adaptive_max_sleep_delay": Key("innodb_adaptive_max_sleep_delay_us", "int", 150000, 0, 1000000,
                                               doc="upper bound of the self-tuned innodb_thread_sleep_delay, "
                                                   "in microseconds (0: no tuning)"),
        "innodb_io_capacity": Key("innodb_io_capacity", "int", 200, 100, 2**64 - 1),
        "innodb_io_capacity_max": Key("innodb_io_capacity_max", "int", 2000, 100, 2**64 - 1,
                                      doc="default max(2000, 2 x innodb_io_capacity); 8.4: 2 x innodb_io_capacity"),
        "innodb_page_cleaners": Key("innodb_page_cleaners", "int", 4, 1, 64,
                                    doc="5.7+: page cleaner threads (at most the instances; 8.4 default: instances)"),
        "innodb_flush_sync": Key("innodb_flush_sync", "bool", True,
                                 doc="5.7+: the page cleaner ignores io_capacity for sync flushing"),
        "innodb_idle_flush_pct": Key("innodb_idle_flush_pct", "int", 100, 0, 100,
                                     doc="8.0: % of innodb_io_capacity flushed when idle"),
        "innodb_doublewrite_pages": Key("innodb_doublewrite_pages", "int", 4, 1, 512,
                                        doc="8.0.20+: pages per doublewrite batch (8.0 default: "
                                            "innodb_write_io_threads = 4; 8.4: 128)"),
        "innodb_doublewrite": Key("innodb_doublewrite", "bool", True,
                                  doc="MySQL 8.0.30+ also DETECT_ONLY (page identifiers only); MariaDB 11.0.6+ "
                                      "also fast (the data files are never fsynced)"),
        "innodb_log_file_buffering": Key("innodb_log_file_buffering", "bool", False,
                                         doc="MariaDB 10.8.4+: ib_logfile0 through the page cache (false: "
                                             "O_DIRECT; true at startup with innodb_flush_log_at_trx_commit = 2)"),
        "innodb_log_file_write_through": Key("innodb_log_file_write_through", "bool", False,
                                             doc="MariaDB 11.0+: the log opened O_DSYNC, no fdatasync after a write"),
        "innodb_data_file_buffering": Key("innodb_data_file_buffering", "bool", False,
                                          doc="MariaDB 11.0+: data files through the page cache (false: O_DIRECT)"),
        "innodb_data_file_write_through": Key("innodb_data_file_write_through", "bool", False,
                                              doc="MariaDB 11.0+: data files opened O_DSYNC and never fsynced"),
        "innodb_use_native_aio": Key("innodb_use_native_aio", "bool", True,
                                     doc="Linux: page writes submitted with io_submit (ext4 2012 holds i_mutex "
                                         "only while submitting); false: innodb_write_io_threads threads write "
                                         "them one at a time"),
        "innodb_use_fdatasync": Key("innodb_use_fdatasync", "bool", False,
                                    doc="8.0.26+: fdatasync() instead of fsync(), so an overwrite whose only "
                                        "metadata change is its timestamps needs no journal commit (8.0 "
                                        "default OFF, 8.4 ON; MariaDB 10.5+ always uses fdatasync)"),
        "innodb_log_writer_threads": Key("innodb_log_writer_threads", "bool", True,
                                         doc="MySQL 8.0.22+: dedicated log_writer / log_flusher threads write "
                                             "and fsync the redo (false: each committing thread does)"),
        "innodb_log_spin_cpu_abs_lwm": Key("innodb_log_spin_cpu_abs_lwm", "int", 80, 0, 4294967295,
                                           doc="MySQL 8.0: the log threads spin only while the server's user "
                                               "CPU is at least this % of one core"),
        "innodb_write_io_threads": Key("innodb_write_io_threads", "int", 4, 1, 64,
                                       doc="I/O threads issuing page writes when innodb_use_native_aio is false"),
        "innodb_checksum_algorithm": Key("innodb_checksum_algorithm", "choice", "innodb", choices=ALL_ALGORITHMS,
                                         doc="page checksum written and verified (5.6: innodb; 5.7+: crc32; "
                                             "MariaDB: full_crc32, crc32 and their strict_ forms only)"),
        "innodb_checksums": Key("innodb_checksums", "bool", True,
                                doc="5.6/5.7 only: false means innodb_checksum_algorithm = none"),
        "innodb_file_per_table": Key("innodb_file_per_table", "bool", True,
                                     doc="false: the tables live in ibdata1, the file of the doublewrite "
                                         "area (5.6/5.7, MariaDB; 8.0.20+ has separate doublewrite files)"),
        "innodb_log_buffer_size": Key("innodb_log_buffer_size_bytes", "size", 8 << 20, 256 << 10, 4 * G),
        "innodb_flush_log_at_trx_commit": Key("innodb_flush_log_at_trx_commit", "int", 1, 0, 3,
                                              doc="0, 1 or 2; MariaDB also 3 (with the binary log: a second "
                                                  "flush at commit, after the binlog's)"),
        "log_bin": Key("log_bin", "bool", False,
                       doc="binary log on (8.0+: on by default); commits then go through its group commit"),
        "sync_binlog": Key("sync_binlog", "int", 0, 0, 4294967295,
                           doc="fsync the binary log every N commit groups (0: never; 5.7+ default 1)"),
        "binlog_group_commit_sync_delay": Key("binlog_group_commit_sync_delay_us", "int", 0, 0, 1000000,
                                              doc="5.7.5+: microseconds the binlog group's leader waits "
                                                  "for more commits before its fsync"),
        "binlog_group_commit_sync_no_delay_count": Key("binlog_group_commit_sync_no_delay_count", "int", 0, 0,
                                                       100000, doc="5.7.5+: stop that wait once this many "
                                                                   "commits have queued (0: no limit)"),
        "binlog_commit_wait_count": Key("binlog_commit_wait_count", "int", 0, 0, 4294967295,
                                        doc="MariaDB: the binlog group commit waits for this many commits "
                                            "(0: no wait)"),
        "binlog_commit_wait_usec": Key("binlog_commit_wait_usec", "int", 100000, 0, 4294967295,
                                       doc="MariaDB: but no longer than this many microseconds"),
        "innodb_flush_log_at_timeout": Key("innodb_flush_log_at_timeout_s", "int", 1, 0, 2700,
                                           doc="seconds between background log flushes (what makes "
                                               "innodb_flush_log_at_trx_commit = 0 or 2 durable; "
                                               "MySQL from 1, MariaDB from 0: each second)"),
        "innodb_adaptive_flushing": Key("innodb_adaptive_flushing", "bool", True),
        "innodb_adaptive_flushing_lwm": Key("innodb_adaptive_flushing_lwm", "float", 10, 0, 70,
                                            doc="% of the redo capacity; MySQL: whole (ulong), MariaDB: a "
                                                "fraction too (double)"),
        "innodb_max_dirty_pages_pct": Key("innodb_max_dirty_pages_pct", "float", 75, 0, 99.999,
                                          doc="5.6: whole, up to 99 (ulong); 5.7+ and MariaDB: a fraction "
                                              "too (double)"),
        "innodb_max_dirty_pages_pct_lwm": Key("innodb_max_dirty_pages_pct_lwm", "float", 0, 0, 99.999,
                                              doc="5.6: whole, up to 99; 5.7+ and MariaDB: a fraction too"),
        "innodb_flushing_avg_loops": Key("innodb_flushing_avg_loops", "int", 30, 1, 1000),
        "innodb_lru_scan_depth": Key("innodb_lru_scan_depth", "int", 1024, 100, 2**64 - 1),
        "innodb_flush_neighbors": Key("innodb_flush_neighbors", "int", 1, 0, 2),
        "innodb_old_blocks_pct": Key("innodb_old_blocks_pct", "int", 37, 5, 95),
        "innodb_old_blocks_time": Key("innodb_old_blocks_time_ms", "int", 1000, 0, 2**32 - 1),
    },
    "hardware": {
        "device": Key("device", "str", "fusionio-2012",
                      doc="built-in device profile name, or path to a JSON profile (relative: to the working "
                          "directory, else to the scenario file)"),
        "filesystem": Key("filesystem", "choice", "xfs", choices=FILESYSTEMS, listable=True),
        "kernel": Key("kernel", "choice", "2012", choices=KERNELS, listable=True,
                      doc="kernel era of the filesystem locking rules"),
        "mount_options": Key("mount_options", "str", None,
                             doc="comma-separated: " + ", ".join(MOUNT_OPTIONS) + "; left out: by kernel era, "
                                 + "; ".join(f"{k}: {v}" for k, v in ERA_MOUNT_OPTIONS.items())),
        "data_files": Key("data_files", "int", 1, 1, 1024, listable=True,
                          doc="files the data set is spread over"),
        "page_cache": Key("page_cache_bytes", "size", 0, 0, 1 << 44,
                          doc="OS page cache for buffered files: iobench's fsync mode, and oltp data files unless "
                              "innodb_flush_method is O_DIRECT or O_DIRECT_NO_FSYNC (0: every read misses)"),
        "memory": Key("memory_bytes", "size", None, 16 << 20, 1 << 44,
                      doc="the machine's memory as the server detects it (what innodb_dedicated_server "
                          "sizes from; nothing else reads it)"),
        "cpu_cores": Key("cpu_cores", "int", 8, 1, 4096,
                         doc="cores the user threads run on (oltp); iobench: cores for copies out of the page cache"),
        "io_scheduler": Key("io_scheduler", "choice", "off", choices=("off", "none", "cfq"),
                            doc="iobench: the host's block layer between each process and the device "
                                "(models/block_layer.py, Linux 4.x legacy path): off = the device alone; none "
                                "(noop) or cfq with queue_depth tags and nr_requests requests"),
        "queue_depth": Key("queue_depth", "int", QUEUE_DEPTH_SATA, *QUEUE_DEPTH_RANGE,
                           doc="with io_scheduler: requests the device holds at once (SATA NCQ: 32)"),
        "nr_requests": Key("nr_requests", "int", NR_REQUESTS, *NR_REQUESTS_RANGE,
                           doc="with io_scheduler: the request list's size (/sys/block/DEV/queue/nr_requests)"),
        "log_device": Key("log_device", "str", "",
                          doc="oltp: the device holding the redo log files (innodb_log_group_home_dir), a profile "
                              "name or JSON path like device, with a filesystem of its own of the same kind (data pages "
                              "and the binary log stay on device; the series' device figures are device's); "
                              "empty: the data device"),
    },
    "workload": {
        "kind": Key("kind", "choice", "iobench", choices=("iobench", "oltp")),
        "pattern": Key("pattern", "choice", "wrnd", choices=PATTERNS, listable=True,
                       doc="rrnd random reads, wrnd random writes, rwrnd 50/50"),
        "block_size": Key("block_bytes", "size", 16384, 512, 1 << 20, listable=True),
        "processes": Key("processes", "int", 16, 1, 4096, listable=True),
        "io_mode": Key("io_mode", "choice", "direct", choices=IO_MODES, listable=True,
                       doc="direct: O_DIRECT; fsync: write() then fsync() per write"),
        "data_size": Key("data_bytes", "size", None, 1 << 20, 1 << 50,
                         doc="data set size (iobench default 128G; oltp: from warehouses if not given)"),
        # -- oltp ---------------------------------------------------------------------------
        "profile": Key("profile", "choice", "dbt2", choices=("dbt2", "sysbench"),
                       doc="transaction profile whose figures are the defaults below"),
        "users": Key("users", "int", 32, 1, 10000, doc="concurrent client sessions"),
        "warehouses": Key("warehouses", "int", None, 1, 100000,
                          doc="TPC-C warehouses (about 100 MB each); sets data_size"),
        "tables": Key("tables", "int", None, 1, 100000,
                      doc="with access = \"sysbench\": sbtest tables (sysbench --tables)"),
        "table_size": Key("table_size", "int", None, 1, 2_000_000_000,
                          doc="with access = \"sysbench\": rows per table (sysbench --table-size)"),
        "pages_read_per_txn": Key("pages_read_per_txn", "float", None, 0.0, 10000.0),
        "pages_modified_per_txn": Key("pages_modified_per_txn", "float", None, 0.0, 10000.0),
        "redo_bytes_per_txn": Key("redo_bytes_per_txn", "size", None, 0, 64 << 20),
        "binlog_bytes_per_txn": Key("binlog_bytes_per_txn", "size", None, 0, 64 << 20,
                                    doc="binary log events per transaction (with server.log_bin)"),
        "log_free_checks_per_txn": Key("log_free_checks_per_txn", "float", None, 1.0, 10000.0,
                                       doc="log_free_check calls a transaction makes (one before each "
                                           "row operation and each index entry it changes); its CPU "
                                           "work is split into that many pieces, and a thread that "
                                           "finds check_flush_or_checkpoint set between two waits in "
                                           "log_check_margins there"),
        "cpu_per_txn": Key("cpu_s_per_txn", "duration", None, 0.0, 10.0),
        "cpu_per_run": Key("cpu_s_per_run", "duration", CPU_RUN_S, 0.0, 1.0,
                           doc="CPU a server thread runs each time it gets a core before it blocks again "
                               "(a statement, then the client's next one); with more threads in a CPU "
                               "phase than cpu_cores, a thread woken from the redo log's write or fsync "
                               "waits (threads - cores) / cores of these for a core (models.run_queue; "
                               "the default is measured on MariaDB 10.11 under sysbench)"),
        "serial_per_txn": Key("serial_s_per_txn", "duration", None, 0.0, 1.0,
                              doc="time per transaction inside server-wide latches"),
        "think_time": Key("think_s", "duration", 0.0, 0.0, 3600.0, doc="mean think time (exponential)"),
        "rate": Key("rate_tps", "float", 0.0, 0.0, 1e7,
                    doc="open loop: transactions offered per second (exponential gaps, as sysbench --rate), "
                        "queueing for the users; 0: each user starts its next one after think_time"),
        "access": Key("access", "choice", "two-tier", choices=("two-tier", "tpcc", "sysbench"),
                      doc="which pages transactions touch: two-tier (hot_access_pct of them uniformly on "
                          "hot_data_pct of the pages, the rest uniformly), tpcc (TPC-C's stock, customer, "
                          "district and warehouse pages with NURand skew; needs warehouses) or sysbench "
                          "(oltp_read_write's clustered and k index pages with --rand-type=special; needs "
                          "tables and table_size)"),
        "hot_data_pct": Key("hot_data_pct", "float", None, 0.001, 100.0),
        "hot_access_pct": Key("hot_access_pct", "float", None, 0.0, 100.0),
        "warm_start": Key("warm_start", "bool", True,
                          doc="start with the most popular pages in the buffer pool (clean)"),
        "cleaner_wake_race": Key("cleaner_wake_race", "float", CLEANER_WAKE_RACE, 0.0, 1.0,
                                 doc="MariaDB 10.5+ only: share of the page cleaner's wake-ups for free "
                                     "blocks at which need_LRU_eviction() reads false, so that it makes an "
                                     "adaptive pass instead of an LRU one (models/page_cleaner_mariadb.py; "
                                     "measured from a capture without background passes: "
                                     "buffer_flush_adaptive / buffer_LRU_batch_num_scan)"),
    },
    "run": {
        "duration": Key("duration_s", "duration", None, 1e-3, 86400.0,
                        doc="measured simulated time after the warm-up (iobench 0.2s, oltp 60s)"),
        "warmup": Key("warmup_s", "duration", None, 0.0, 86400.0, doc="iobench 0.05s, oltp 0s"),
        "seed": Key("seed", "int", 1, 0, 2**63 - 1),
        "resolution": Key("resolution_s", "duration", 0.01, 1e-3, 60.0,
                          doc="interval of the time series (the base tick); oltp: a divisor of 100 ms"),
        "stall_threshold_pct": Key("stall_threshold_pct", "float", 50.0, 1.0, 99.0,
                                   doc="an interval is a stall below this % of the median throughput"),
    },
}


def _parse_scalar(key: Key, value: Any, src: str, name: str) -> Any:
    bad = lambda problem: InputError(src, name, problem, key.allowed())  # noqa: E731
    if key.kind == "size":
        try:
            n = parse_size_bytes(value)
        except ValueError as err:
            raise bad(f"{value!r} is not valid: {err}") from None
        if not (key.lo <= n <= key.hi):
            raise bad(f"{value!r} is out of range")
        return n
    if key.kind == "duration":
        try:
            s = parse_duration_s(value)
        except ValueError as err:
            raise bad(f"{value!r} is not valid: {err}") from None
        if not (key.lo <= s <= key.hi):
            raise bad(f"{value!r} is out of range")
        return s
    if key.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(f"{value!r} is not a whole number")
        if not (key.lo <= value <= key.hi):
            raise bad(f"{value!r} is out of range")
        return value
    if key.kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad(f"{value!r} is not a number")
        if not (key.lo <= value <= key.hi):
            raise bad(f"{value!r} is out of range")
        return float(value)
    if key.kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.upper() in ("ON", "OFF", "TRUE", "FALSE", "1", "0"):
            return value.upper() in ("ON", "TRUE", "1")
        if name.endswith("innodb_doublewrite") and isinstance(value, str):
            # 8.0.30+ and MariaDB 11.0.6+ values, as the option-file reader takes them
            # (sim.mycnf.convert_value); _apply_version checks the version takes them.
            word = doublewrite_word(value.upper())
            if word is not None:
                return word
        if isinstance(value, int) and value in (0, 1):
            # The server takes 0 and 1 for a boolean variable, so --set server.innodb_doublewrite=0
            # (parsed as the integer 0) and `innodb_doublewrite = 0` in a scenario mean OFF.
            return value == 1
        if name.endswith("innodb_doublewrite"):
            raise InputError(src, name, f"{value!r} is not a boolean",
                             f"{key.allowed()}; {WORDS_ENUM}")
        raise bad(f"{value!r} is not a boolean")
    if key.kind == "choice":
        if key.choices and isinstance(key.choices[0], int):
            try:
                value = parse_size_bytes(value)
            except ValueError:
                raise bad(f"{value!r} is not allowed") from None
            if value not in key.choices:
                raise bad(f"{format_size(value)} is not allowed")
            return value
        if value not in key.choices and name.startswith("server.") and isinstance(value, str):
            # mysqld takes an enumeration's value without regard to case (as sim.mycnf reads a
            # my.cnf): innodb_flush_method = o_direct is O_DIRECT.
            value = next((c for c in key.choices if c.casefold() == value.casefold()), value)
        if value not in key.choices:
            raise bad(f"{value!r} is not allowed")
        return value
    if not isinstance(value, str):
        raise bad(f"{value!r} is not a string")
    return value


def parse_key(section: str, name: str, value: Any, src: str) -> Any:
    """Validate one value; lists become tuples for listable keys."""
    key = SCHEMA[section][name]
    label = f"{section}.{name}"
    if isinstance(value, list):
        if not key.listable:
            raise InputError(src, label, "takes one value, not a list", key.allowed())
        if not value:
            raise InputError(src, label, "an empty list", key.allowed())
        parsed = tuple(_parse_scalar(key, v, src, label) for v in value)
        twice = next((p for i, p in enumerate(parsed) if p in parsed[:i]), None)
        if twice is not None:
            # 4K and 4096 are one block size: the grid would run the same case twice.
            raise InputError(src, label, f"{value!r} names {twice!r} twice", "distinct values")
        return parsed
    parsed = _parse_scalar(key, value, src, label)
    return (parsed,) if key.listable else parsed


@dataclass(frozen=True)
class ServerConfig:
    version: str
    innodb_page_size_bytes: int
    innodb_flush_method: str
    innodb_dedicated_server: bool
    innodb_buffer_pool_size_bytes: int
    innodb_buffer_pool_chunk_size_bytes: int
    innodb_buffer_pool_instances: int
    innodb_log_file_size_bytes: int
    innodb_log_files_in_group: int
    innodb_redo_log_capacity_bytes: int
    innodb_thread_concurrency: int
    innodb_thread_sleep_delay_us: int
    innodb_adaptive_max_sleep_delay_us: int
    innodb_io_capacity: int
    innodb_io_capacity_max: int
    innodb_page_cleaners: int
    innodb_flush_sync: bool
    innodb_idle_flush_pct: int
    innodb_doublewrite_pages: int
    innodb_doublewrite: bool | str            # True, False, DETECT_ONLY (8.0.30+) or fast (MariaDB 11.0.6+)
    innodb_log_file_buffering: bool
    innodb_log_file_write_through: bool
    innodb_data_file_buffering: bool
    innodb_data_file_write_through: bool
    innodb_use_native_aio: bool
    innodb_use_fdatasync: bool
    innodb_write_io_threads: int
    innodb_log_writer_threads: bool
    innodb_log_spin_cpu_abs_lwm: int
    innodb_checksum_algorithm: str
    innodb_checksums: bool
    innodb_file_per_table: bool
    innodb_log_buffer_size_bytes: int
    innodb_flush_log_at_trx_commit: int
    innodb_flush_log_at_timeout_s: int
    log_bin: bool
    sync_binlog: int
    binlog_group_commit_sync_delay_us: int
    binlog_group_commit_sync_no_delay_count: int
    binlog_commit_wait_count: int
    binlog_commit_wait_usec: int
    innodb_adaptive_flushing: bool
    innodb_adaptive_flushing_lwm: int | float         # int when whole
    innodb_max_dirty_pages_pct: int | float
    innodb_max_dirty_pages_pct_lwm: int | float
    innodb_flushing_avg_loops: int
    innodb_lru_scan_depth: int
    innodb_flush_neighbors: int
    innodb_old_blocks_pct: int
    innodb_old_blocks_time_ms: int


@dataclass(frozen=True)
class HardwareConfig:
    device: str
    filesystem: tuple[str, ...]
    kernel: tuple[str, ...]
    mount_options: str | None          # None: each kernel era's own (a grid over hardware.kernel)
    data_files: tuple[int, ...]
    page_cache_bytes: int
    memory_bytes: int | None
    cpu_cores: int
    io_scheduler: str = "off"
    queue_depth: int = QUEUE_DEPTH_SATA
    nr_requests: int = NR_REQUESTS
    log_device: str = ""


@dataclass(frozen=True)
class WorkloadConfig:
    kind: str
    pattern: tuple[str, ...]
    block_bytes: tuple[int, ...]
    processes: tuple[int, ...]
    io_mode: tuple[str, ...]
    data_bytes: int
    profile: str
    users: int
    warehouses: int | None
    pages_read_per_txn: float
    pages_modified_per_txn: float
    redo_bytes_per_txn: int
    cpu_s_per_txn: float
    serial_s_per_txn: float
    binlog_bytes_per_txn: int
    think_s: float
    rate_tps: float
    hot_data_pct: float
    hot_access_pct: float
    warm_start: bool
    cleaner_wake_race: float = 0.0
    log_free_checks_per_txn: float = 1.0
    cpu_s_per_run: float = CPU_RUN_S
    access: str = "two-tier"
    tables: int | None = None
    table_size: int | None = None


@dataclass(frozen=True)
class RunConfig:
    duration_s: float
    warmup_s: float
    seed: int
    resolution_s: float
    stall_threshold_pct: float


@dataclass(frozen=True)
class Scenario:
    name: str
    source: str
    server: ServerConfig
    hardware: HardwareConfig
    workload: WorkloadConfig
    run: RunConfig
    present_sections: frozenset[str]
    notes: tuple[str, ...] = ()           # what the server would say about settings it maps or ignores
    origins: tuple[tuple[str, str], ...] = ()   # ("section.key", where its value came from)
    release: str = ""                     # server.version as written, where it names a release (mariadb-11.4.2)


_SECTION_TYPES = {"server": ServerConfig, "hardware": HardwareConfig, "workload": WorkloadConfig,
                  "run": RunConfig}


def parse_override(text: str) -> tuple[str, str, Any]:
    """`section.key=value` -> (section, key, value). The value is read as TOML if it parses
    (numbers, booleans, quoted strings, [lists]); otherwise taken as a bare string."""
    if "=" not in text or "." not in text.split("=", 1)[0]:
        raise InputError("--set", text, "expected section.key=value", "e.g. hardware.filesystem=ext4")
    lhs, rhs = text.split("=", 1)
    section, key = lhs.strip().split(".", 1)
    rhs = rhs.strip()
    try:
        value = tomllib.loads(f"v = {rhs}")["v"]
    except tomllib.TOMLDecodeError:
        value = rhs
    spec = SCHEMA.get(section, {}).get(key)
    if spec is not None and isinstance(value, (int, float)) and not isinstance(value, bool) and (
            spec.kind == "str" or spec.kind == "choice" and spec.choices and isinstance(spec.choices[0], str)):
        value = rhs                      # a name that looks like a number: hardware.kernel=2012
    return section, key, value


def _final_version(doc: dict, src: str, overrides) -> tuple[str, str | None]:
    """server.version after the overrides (validated), which picks the option groups read, and the
    major.minor of the release it names (sim.server_vars.release_series)."""
    value, where = doc.get("server", {}).get("version", SCHEMA["server"]["version"].default), src
    for text in overrides:
        section, key, v = parse_override(text)
        if (section, key) == ("server", "version"):
            value, where = v, "--set"
    from sim.server_vars import release_series, scenario_version

    return scenario_version(value, where)[0], release_series(value)


def _merge_option_files(doc: dict, origin: dict, src: str, overrides, option_files,
                       option_texts: dict[str, str] | None = None, server_vars: str | None = None) -> list[str]:
    """Put a server's variables (sim.server_vars: its version and settings), then the option
    files' settings (sim.mycnf, for the version the scenario ends up with) into doc["server"], in
    place; `origin` records the file and line of each. Returns the notes about them.
    `option_texts`: the contents of some of the files, by name (text pasted into the app)."""
    notes: list[str] = []
    if server_vars:
        from sim.server_vars import settings_from_variables

        _, got = settings_from_variables(server_vars, option_texts)
        server = doc.setdefault("server", {})
        server["version"] = got.release            # mapped to `name` below, with a note
        origin[("server", "version")] = server_vars
        for key, (value, where) in got.settings.items():
            server[key] = value
            origin[("server", key)] = where
        notes += got.notes
    if not option_files:
        return notes
    from sim.mycnf import settings_from_option_files

    version_name, series = _final_version(doc, src, overrides)
    cnf = settings_from_option_files(option_files, version_name, option_texts, series=series)
    for key, (value, where) in cnf.settings.items():
        doc.setdefault("server", {})[key] = value
        origin[("server", key)] = where
    return notes + cnf.notes


# Keys that give one quantity two ways (the data's size; the load's pace): a --set of one replaces
# the other where the scenario or an option file gave it, rather than clash with it.
_ALTERNATIVES = {("workload", "data_size"): ("workload", "warehouses"),
                 ("workload", "warehouses"): ("workload", "data_size"),
                 ("workload", "rate"): ("workload", "think_time"),
                 ("workload", "think_time"): ("workload", "rate")}


def scenario_from_dict(doc: dict, src: str, name: str = "scenario",
                       overrides: list[str] | tuple[str, ...] = (),
                       option_files: list[str] | tuple[str, ...] = (),
                       option_texts: dict[str, str] | None = None, server_vars: str | None = None) -> Scenario:
    """Validate a scenario document (plus a server's variables, option files, then overrides) into
    a typed Scenario.

    Precedence: the scenario's [server] < the server's variables (sim.server_vars, which also set
    the version) < the option files' settings (sim.mycnf) < --set."""
    return scenario_and_doc(doc, src, name, overrides, option_files, option_texts, server_vars)[0]


def scenario_and_doc(doc: dict, src: str, name: str = "scenario",
                     overrides: list[str] | tuple[str, ...] = (),
                     option_files: list[str] | tuple[str, ...] = (),
                     option_texts: dict[str, str] | None = None,
                     server_vars: str | None = None) -> tuple[Scenario, dict]:
    """scenario_from_dict, and the document with the variables' and option files' settings in its
    [server] (not the overrides): what later overrides apply to (a sweep's points, a fit's values,
    the app's form), so the files are read once."""
    doc = {k: dict(v) if isinstance(v, dict) else v for k, v in doc.items()}
    origin: dict[tuple[str, str], str] = {}
    for section, body in doc.items():
        if section not in SCHEMA:
            raise InputError(src, section, "unknown section", ", ".join(f"[{s}]" for s in SCHEMA))
        if not isinstance(body, dict):
            raise InputError(src, section, "must be a table", f"[{section}] with keys")
        for key in body:
            origin[(section, key)] = src
    cnf_notes = _merge_option_files(doc, origin, src, overrides, option_files, option_texts, server_vars)
    merged = {k: dict(v) if isinstance(v, dict) else v for k, v in doc.items()}
    set_notes: list[str] = []               # what --set and server.version changed
    for text in overrides:
        section, key, value = parse_override(text)
        if section not in SCHEMA:
            raise InputError("--set", f"{section}.{key}", "unknown section", ", ".join(SCHEMA))
        doc.setdefault(section, {})[key] = value
        origin[(section, key)] = "--set"
        other = _ALTERNATIVES.get((section, key))
        if other is not None and other[1] in doc.get(other[0], {}) and origin.get(other) != "--set":
            # The scenario's way of giving the same quantity gives way to the one set here.
            del doc[other[0]][other[1]]
            set_notes.append(f"--set {section}.{key} replaces {other[0]}.{other[1]} of {origin.pop(other)}")
    release = None                          # (major, minor, patch or None) of the release written
    written_text = ""
    if isinstance(doc.get("server"), dict) and "version" in doc["server"]:
        from sim.server_vars import release_numbers, scenario_version

        written = doc["server"]["version"]
        doc["server"]["version"], note = scenario_version(written, origin[("server", "version")])
        release = release_numbers(written)
        written_text = written.strip() if isinstance(written, str) else ""
        set_notes += [note] if note else []
    values: dict[str, dict[str, Any]] = {}
    for section, keys in SCHEMA.items():
        body = doc.get(section, {})
        for key in body:
            if key not in keys:
                raise InputError(origin[(section, key)], f"{section}.{key}", "unknown key",
                                 ", ".join(keys))
        out = {}
        for key, spec in keys.items():
            if key in body:
                out[spec.attr] = parse_key(section, key, body[key], origin[(section, key)])
            else:
                out[spec.attr] = (spec.default,) if spec.listable else spec.default
        values[section] = out
    hw = values["hardware"]
    if hw["mount_options"] is None and len(hw["kernel"]) == 1:
        hw["mount_options"] = ERA_MOUNT_OPTIONS[hw["kernel"][0]]
    notes = set_notes + cnf_notes + _apply_version(doc.get("server", {}), values, origin, src, release)
    _check_workload_keys(doc, values, origin, src)
    _check_cross_fields(values, origin, src)
    return Scenario(
        name=name,
        source=src,
        present_sections=frozenset(doc),
        notes=tuple(notes),
        origins=_origins(doc, values, origin, src),
        release=written_text if written_text != values["server"]["version"] else "",
        **{s: _SECTION_TYPES[s](**values[s]) for s in SCHEMA},
    ), merged


def _server_default_origin(key: str, v, given: dict) -> str:
    """Where a [server] setting left out gets its value (mirrors _apply_version)."""
    if key in v.removed:                # MariaDB's ignored settings
        return f"{v.label}: fixed (one buffer pool, one page cleaner, one log file)"
    if key in v.absent:
        return f"not a {v.label} variable"
    if key == "innodb_buffer_pool_chunk_size" and not v.pool_chunks:
        return f"no effect in {v.label}"
    if v.redo == "8030" and key in ("innodb_log_file_size", "innodb_log_files_in_group"):
        return f"not used by {v.label} (innodb_redo_log_capacity)"
    if v.redo == "8030" and key == "innodb_redo_log_capacity" and (
            "innodb_log_file_size" in given or "innodb_log_files_in_group" in given):
        return "innodb_log_file_size x innodb_log_files_in_group (deprecated since 8.0.30)"
    if key == "innodb_io_capacity_max":
        return ("default: 2 x innodb_io_capacity" if v.name == "mysql-8.4"
                else "default: max(2000, 2 x innodb_io_capacity)")
    if key == "innodb_buffer_pool_instances" and v.name == "mysql-8.4":
        return "default: from the pool size and hardware.cpu_cores"
    if key == "innodb_page_cleaners" and v.name == "mysql-8.4":
        return "default: innodb_buffer_pool_instances"
    if key in v.defaults:
        return f"{v.label} default"
    return "default"


def _origins(doc: dict, values: dict, origin: dict, src: str) -> tuple[tuple[str, str], ...]:
    """Where every setting's value came from: the file (and line), --set, a default, a profile."""
    v = VERSIONS[values["server"]["version"]]
    given = {section: body for section, body in doc.items() if isinstance(body, dict)}
    wl = values["workload"]
    out = []
    for section, keys in SCHEMA.items():
        body = given.get(section, {})
        for key in keys:
            if key in body:
                where = origin.get((section, key), src)
            elif (section, key) in origin:       # set by another setting (innodb_dedicated_server)
                where = origin[(section, key)]
            elif section == "server":
                where = _server_default_origin(key, v, body)
            elif section == "workload" and wl["kind"] == "oltp" and SCHEMA[section][key].attr in _PROFILE_KEYS:
                where = f"profile {wl['profile']}"
            elif (section, key) == ("hardware", "mount_options"):
                kernels = values["hardware"]["kernel"]
                where = (f"default for kernel {kernels[0]}" if len(kernels) == 1 else
                         "default for each kernel: " + "; ".join(f"{k} {ERA_MOUNT_OPTIONS[k]}" for k in kernels))
            elif (section, key) == ("workload", "data_size") and wl.get("warehouses"):
                where = "warehouses x 100 MB"
            elif (section, key) == ("workload", "data_size") and wl.get("access") == "sysbench" \
                    and "data_size" not in body:
                where = "the sbtest tables' leaf pages"
            else:
                where = "default"
            out.append((f"{section}.{key}", where))
    return tuple(out)


def version_keys(version_name: str) -> list[str]:
    """The [server] keys a version has (it refuses the absent ones and ignores the removed ones)."""
    v = version_of(version_name)
    skip = set(v.absent) | set(v.removed)
    if v.redo == "8030":
        skip |= {"innodb_log_file_size", "innodb_log_files_in_group"}
    return [k for k in SCHEMA["server"] if k not in skip]


# Percentages the server declares a double in some versions and a ulong in others
# (MYSQL_SYSVAR_DOUBLE / MYSQL_SYSVAR_ULONG in ha_innodb.cc): the versions where a fraction is taken.
_FRACTION_TAKEN = {"innodb_max_dirty_pages_pct": lambda v: v.name != "mysql-5.6",
                   "innodb_max_dirty_pages_pct_lwm": lambda v: v.name != "mysql-5.6",
                   "innodb_adaptive_flushing_lwm": lambda v: v.is_mariadb}


# [server] settings whose SCHEMA range is the range the servers declare for them (their
# MYSQL_SYSVAR_* in ha_innodb.cc, MySQL 5.6-8.4; MariaDB's sysvars_innodb.result), as server_range
# narrows it per version. A my.cnf value outside it is adjusted to the bound, as mysqld's option
# parser does (sim.mycnf); the other settings' ranges are partly the simulator's own.
DECLARED_RANGE_KEYS = frozenset({
    "innodb_io_capacity", "innodb_io_capacity_max", "innodb_lru_scan_depth", "innodb_old_blocks_time",
    "innodb_old_blocks_pct", "innodb_flushing_avg_loops", "innodb_flush_neighbors", "innodb_adaptive_flushing_lwm",
    "innodb_max_dirty_pages_pct", "innodb_max_dirty_pages_pct_lwm", "innodb_flush_log_at_timeout",
    "innodb_page_cleaners", "innodb_buffer_pool_instances", "innodb_thread_concurrency", "innodb_write_io_threads",
    "innodb_flush_log_at_trx_commit"})


def server_range(key: str, v) -> tuple[float, float]:
    """The range version `v` declares for [server] `key`: SCHEMA's, narrowed where a version's
    declaration is narrower. MySQL: innodb_flush_log_at_timeout from 1 (MariaDB 0: a flush each
    second) and innodb_flush_log_at_trx_commit to 2 (MariaDB 3 too); 5.6: the dirty-page
    percentages to 99 (ulong; later versions' doubles go to 99.999)."""
    spec = SCHEMA["server"][key]
    lo, hi = spec.lo, spec.hi
    if not v.is_mariadb and key == "innodb_flush_log_at_timeout":
        lo = 1
    elif not v.is_mariadb and key == "innodb_flush_log_at_trx_commit":
        hi = 2
    elif v.name == "mysql-5.6" and key.startswith("innodb_max_dirty_pages_pct"):
        hi = 99
    return lo, hi


def whole_numbers_only(scn: "Scenario", section: str, name: str) -> bool:
    """Whether a numeric setting takes only whole numbers in this scenario (its server's version
    for the percentages some versions declare doubles); a sweep's random draws follow it."""
    kind = SCHEMA[section][name].kind
    if kind in ("size", "int"):
        return True
    if section == "server" and name in _FRACTION_TAKEN:
        return not _FRACTION_TAKEN[name](VERSIONS[scn.server.version])
    return False


def _whole_where_declared_so(srv: dict, v, origin: dict) -> None:
    """A whole percentage stays an int (the formulas of the versions that declare it a ulong use
    integer arithmetic); a fraction is refused where the server declares the variable a ulong (its
    option parser stops at the '.': "Unknown suffix '.' used for variable")."""
    for key, fraction_taken in _FRACTION_TAKEN.items():
        attr = SCHEMA["server"][key].attr
        x = srv[attr]
        if float(x).is_integer():
            srv[attr] = int(x)
        elif not fraction_taken(v):
            lo, hi = server_range(key, v)
            raise InputError(origin[("server", key)], f"server.{key}", f"{x:g}: {v.label} declares it a whole "
                             f"number (ulong)", f"a whole number from {lo:g} to {hi:g}")


def _apply_version(given: dict, values: dict, origin: dict, src: str,
                   release: tuple[int, int, int | None] | None = None) -> list[str]:
    """Fill the settings left out with the version's defaults; refuse what it does not have; map
    or ignore (with the server's own message) what it has deprecated or removed. `release`: the
    release server.version names (sim.server_vars.release_numbers), for what came in MariaDB
    patch releases."""
    srv, hw = values["server"], values["hardware"]
    v = VERSIONS[srv["version"]]
    notes = []
    for key in given:
        if key in v.absent:
            raise InputError(origin[("server", key)], f"server.{key}",
                             f"{v.label} has no such variable (the server stops at startup: unknown variable)",
                             f"the keys of {v.name}: " + ", ".join(version_keys(v.name)))
        if key in v.removed:
            notes.append(f"{v.label}: '{key}' was removed. It does nothing now and exists only for "
                         "compatibility with old my.cnf files (the server's startup warning)")
    _whole_where_declared_so(srv, v, origin)
    for key in sorted(DECLARED_RANGE_KEYS):
        # SCHEMA holds the widest declaration (MariaDB's); server_range narrows it per version.
        lo, hi = server_range(key, v)
        x, spec = srv[SCHEMA["server"][key].attr], SCHEMA["server"][key]
        if (lo, hi) != (spec.lo, spec.hi) and not lo <= x <= hi:
            below = x < lo
            raise InputError(origin[("server", key)], f"server.{key}",
                             f"{x} is {'below' if below else 'above'} {v.label}'s {'minimum' if below else 'maximum'} "
                             f"(MariaDB takes {spec.lo:g} to {spec.hi:g})", f"int from {lo:g} to {hi:g}")
    if srv["innodb_doublewrite"] == DETECT_ONLY and v.redo != "8030":
        # innodb_doublewrite became an enumeration in MySQL 8.0.30; before, and in MariaDB, it is a
        # boolean, and the server refuses the value at startup.
        raise InputError(origin[("server", "innodb_doublewrite")], "server.innodb_doublewrite",
                         f"DETECT_ONLY is not a value {v.label} accepts (MySQL 8.0.30 and later)",
                         "ON or OFF" + (", or fast from MariaDB 11.0.6" if v.is_mariadb else ""))
    if srv["innodb_doublewrite"] == FAST and not v.is_mariadb:
        raise InputError(origin[("server", "innodb_doublewrite")], "server.innodb_doublewrite",
                         f"fast is not a value {v.label} accepts (MariaDB 11.0.6 and later, MDEV-33545)",
                         "ON or OFF" + (", DETECT_AND_RECOVER or DETECT_ONLY" if v.redo == "8030" else ""))
    if v.is_mariadb:
        notes += _mariadb_file_settings(given, srv, origin, release or (10, 11, None))
    else:
        for key in sorted(MYSQL_80_SETTINGS_FROM):
            first = mysql_80_lacks(key, release) if key in given else None
            if first is not None:
                raise InputError(origin[("server", key)], f"server.{key}",
                                 f"MySQL 8.0.{release[2]} has no such variable (first in 8.0.{first}); the server "
                                 "stops at startup: unknown variable",
                                 f"leave it out, or server.version = mysql-8.0.{first} or later")
    algo = srv["innodb_checksum_algorithm"]
    if "innodb_checksum_algorithm" in given and algo not in v.checksum_algorithms:
        raise InputError(origin[("server", "innodb_checksum_algorithm")], "server.innodb_checksum_algorithm",
                         f"{algo!r} is not a value {v.label} accepts (the server refuses to start InnoDB)",
                         ", ".join(v.checksum_algorithms))
    page = srv["innodb_page_size_bytes"]
    if page not in v.page_sizes:
        raise InputError(origin[("server", "innodb_page_size")], "server.innodb_page_size",
                         f"{format_size(page)} is not a page size {v.label} supports (32K and 64K came "
                         "in MySQL 5.7.6)", ", ".join(format_size(p) for p in v.page_sizes))
    for key, spec in SCHEMA["server"].items():
        if key not in given and key in v.defaults:
            srv[spec.attr] = v.defaults[key]
    if "innodb_io_capacity_max" not in given:
        srv["innodb_io_capacity_max"] = max(io_capacity_max_default(v, srv["innodb_io_capacity"]),
                                            srv["innodb_io_capacity"])
    dedicated: list[str] = []
    if srv["innodb_dedicated_server"]:
        _dedicated_pool(given, srv, hw, v, origin, dedicated)
    if v.is_mariadb:
        srv["innodb_buffer_pool_instances"] = 1
        srv["innodb_page_cleaners"] = 1
        srv["innodb_log_files_in_group"] = 1
        srv["innodb_thread_concurrency"] = 0
    elif "innodb_buffer_pool_instances" not in given:
        srv["innodb_buffer_pool_instances"] = buffer_pool_instances_default(
            v, srv["innodb_buffer_pool_size_bytes"], hw["cpu_cores"])
    aligned = _align_pool(given, srv, v, origin)
    if srv["innodb_dedicated_server"]:
        _dedicated_rest(given, srv, hw, v, origin, dedicated)
        notes.append(f"{v.label}: innodb_dedicated_server " + "; ".join(dedicated))
    notes.extend(aligned)
    if v.name == "mysql-8.4" and "innodb_page_cleaners" not in given:
        srv["innodb_page_cleaners"] = srv["innodb_buffer_pool_instances"]
    if v.redo == "8030":
        old = [k for k in ("innodb_log_file_size", "innodb_log_files_in_group") if k in given]
        if old and "innodb_redo_log_capacity" in given:
            notes.append(f"{v.label}: innodb_redo_log_capacity is set, so " + " and ".join(old)
                         + " are ignored (deprecated since 8.0.30)")
        elif old:
            srv["innodb_redo_log_capacity_bytes"] = min(REDO_LOG_CAPACITY_MAX, max(
                REDO_LOG_CAPACITY_MIN, srv["innodb_log_file_size_bytes"] * srv["innodb_log_files_in_group"]))
            notes.append(f"{v.label}: " + " and ".join(old) + " are deprecated; innodb_redo_log_capacity = "
                         f"innodb_log_file_size x innodb_log_files_in_group = "
                         f"{format_size(srv['innodb_redo_log_capacity_bytes'])}")
        # The old settings play no further part; they resolve to their defaults.
        for key in ("innodb_log_file_size", "innodb_log_files_in_group"):
            srv[SCHEMA["server"][key].attr] = SCHEMA["server"][key].default
    return notes


def _lts_with(entry) -> str:
    """The first MariaDB long-term series (10.11, 11.4, 11.8) whose releases have a setting of
    models.releases.SETTINGS_INTRODUCED, as a server.version (a release where only later ones do)."""
    for series in ((10, 11), (11, 4), (11, 8)):
        if series in entry.first:
            return f"mariadb-{series[0]}.{series[1]}.{entry.first[series]}"
        if series >= entry.all_from:
            return f"mariadb-{series[0]}.{series[1]}"
    return f"mariadb-{entry.all_from[0]}.{entry.all_from[1]}"


def _mariadb_file_settings(given: dict, srv: dict, origin: dict, release: tuple[int, int, int | None]) -> list[str]:
    """MariaDB's file settings for the release run (models.file_access): those it does not have
    are refused as the server refuses them; on 11.0+ a given innodb_flush_method is translated
    into the settings it stands for (overriding them, as startup does); innodb_log_file_buffering
    is ON with innodb_flush_log_at_trx_commit = 2. Returns the notes."""
    major, minor, patch = release
    label = f"MariaDB {major}.{minor}" + (f".{patch}" if patch is not None else "")
    notes = []
    for entry in SETTINGS_INTRODUCED:
        key = entry.setting
        if key not in given or entry.value is not None and srv[key] != entry.value:
            continue
        has = release_has(entry, major, minor, patch)
        firsts = [f"{a}.{b}.{p}" for (a, b), p in sorted(entry.first.items())] or [
            f"{entry.all_from[0]}.{entry.all_from[1]}.0"]
        came = f"{entry.name}, first in MariaDB " + ", ".join(firsts)
        if has is False and entry.value is not None:
            raise InputError(origin[("server", key)], f"server.{key}",
                             f"{entry.value} is not a value {label} accepts ({came})", "ON or OFF")
        if has is False:
            raise InputError(origin[("server", key)], f"server.{key}",
                             f"{label} has no such variable ({came}); the server stops at startup: unknown variable",
                             f"leave it out, or a server.version of a release that has it, e.g. {_lts_with(entry)}")
        if has is None:
            what = f"{key} = {entry.value}" if entry.value is not None else key
            notes.append(f"whether {label} takes {what} is not known here ({came}); simulated as if it did")
    if (major, minor) >= (11, 0) and "innodb_flush_method" in given:
        method = srv["innodb_flush_method"]
        where = origin[("server", "innodb_flush_method")]
        has_fast = release_has(setting_introduced("innodb_doublewrite", FAST), major, minor, patch)
        mapped = translate_flush_method_110(method, srv["innodb_doublewrite"], has_fast)
        taken = []
        for key, value in mapped.items():
            if key != "innodb_flush_method":
                if key in given and srv[key] != value:
                    notes.append(f"{label}: innodb_flush_method = {method} ({where}) overrides {key} = "
                                 f"{value_text(SCHEMA['server'][key], srv[key])} ({origin[('server', key)]}), "
                                 "as the server translates it at startup")
                taken.append(f"{key} = {value_text(SCHEMA['server'][key], value)}")
                origin[("server", key)] = f"innodb_flush_method = {method} ({where})"
            srv[key] = value
        if mapped["innodb_flush_method"] != method:
            origin[("server", "innodb_flush_method")] = f"{where}: {method}, translated (MariaDB 11.0+)"
        if taken:
            runs_as = ", ".join(taken)
        elif mapped["innodb_flush_method"] == "O_DIRECT":
            runs_as = "the defaults of the settings that replace it"
        else:
            runs_as = "in 10.11 (this release predates innodb_doublewrite = fast, MDEV-33545)"
        notes.append(f"{label}: innodb_flush_method is deprecated (MariaDB 11.0, MDEV-30136); {method} runs as {runs_as}")
    if srv["innodb_flush_log_at_trx_commit"] == 2 and not srv["innodb_log_file_buffering"]:
        if "innodb_log_file_buffering" in given:
            notes.append(f"{label}: innodb_log_file_buffering = OFF ({origin[('server', 'innodb_log_file_buffering')]}) "
                         "is changed to ON at startup with innodb_flush_log_at_trx_commit = 2 (MDEV-28766)")
        srv["innodb_log_file_buffering"] = True
        origin[("server", "innodb_log_file_buffering")] = "innodb_flush_log_at_trx_commit = 2 (MDEV-28766)"
    return notes


def _dedicated_memory(hw: dict, origin: dict, needed_for: str) -> int:
    """hardware.memory, which innodb_dedicated_server needs for `needed_for`."""
    if hw["memory_bytes"] is None:
        raise InputError(origin[("server", "innodb_dedicated_server")], "server.innodb_dedicated_server",
                         f"sizes {needed_for} from the machine's memory, which the scenario does not give",
                         'set hardware.memory (e.g. "64G"), or give the settings it would choose')
    return hw["memory_bytes"]


def _dedicated_ignored(key: str, given: dict, srv: dict, out: list[str]) -> bool:
    """True (and the server's warning) when `key` is given, so innodb_dedicated_server leaves it."""
    if key not in given:
        return False
    spec = SCHEMA["server"][key]
    out.append(f"is ignored for {key} because {key}={value_text(spec, srv[spec.attr])} is specified "
               "explicitly (the server's warning)")
    return True


def _dedicated_pool(given: dict, srv: dict, hw: dict, v, origin: dict, out: list[str]) -> None:
    """innodb_dedicated_server's buffer pool size (innodb_buffer_pool_size_init), before the
    instance count is chosen from it."""
    if _dedicated_ignored("innodb_buffer_pool_size", given, srv, out):
        return
    mem = _dedicated_memory(hw, origin, "innodb_buffer_pool_size")
    pool = dedicated_server.buffer_pool_bytes(mem)
    if pool is None:
        out.append(f"keeps innodb_buffer_pool_size at its default (hardware.memory {format_size(mem)} is "
                   "under 1G)")
        return
    srv["innodb_buffer_pool_size_bytes"] = pool
    origin[("server", "innodb_buffer_pool_size")] = f"innodb_dedicated_server (hardware.memory {format_size(mem)})"
    out.append(f"sets innodb_buffer_pool_size = {format_size(pool)} ({dedicated_server.pool_share(mem):g} x "
               f"hardware.memory {format_size(mem)})")


def _align_pool(given: dict, srv: dict, v, origin: dict) -> list[str]:
    """MySQL 5.7.5+ runs the pool rounded up to a multiple of innodb_buffer_pool_chunk_size x the
    instances it runs (models.versions.buf_pool_size_align); the chunk size itself is a multiple
    of 1M (its sysvar's block size). MariaDB 10.11 ignores the chunk size."""
    notes = []
    if not v.pool_chunks:
        if v.is_mariadb and "innodb_buffer_pool_chunk_size" in given:
            notes.append(f"{v.label}: innodb_buffer_pool_chunk_size is a deprecated parameter with no effect "
                         "(its --help); ignored")
        return notes
    chunk = srv["innodb_buffer_pool_chunk_size_bytes"]
    if chunk % (1 << 20) or chunk < (1 << 20):
        srv["innodb_buffer_pool_chunk_size_bytes"] = fixed = max(1 << 20, chunk >> 20 << 20)
        notes.append(f"{v.label}: innodb_buffer_pool_chunk_size {format_size(chunk)} adjusted to "
                     f"{format_size(fixed)} (a multiple of 1M, at least 1M), as the server adjusts it")
        chunk = fixed
    pool = srv["innodb_buffer_pool_size_bytes"]
    inst = startup_instances(pool, srv["innodb_buffer_pool_instances"])
    aligned = buf_pool_size_align(pool, inst, chunk)
    if aligned != pool:
        srv["innodb_buffer_pool_size_bytes"] = aligned
        key = ("server", "innodb_buffer_pool_size")
        was = origin.get(key, f"{v.label} default")
        origin[key] = f"{was}, rounded up to a multiple of {format_size(chunk)} x {inst} (buf_pool_size_align)"
        notes.append(f"{v.label}: innodb_buffer_pool_size {format_size(pool)} runs as {format_size(aligned)}, "
                     f"the next multiple of innodb_buffer_pool_chunk_size ({format_size(chunk)}) x "
                     f"innodb_buffer_pool_instances ({inst}), as the server rounds it at startup")
    return notes


def _dedicated_rest(given: dict, srv: dict, hw: dict, v, origin: dict, out: list[str]) -> None:
    """innodb_dedicated_server after the pool is sized and aligned: the redo log and (8.0) the
    flush method."""
    mem = hw["memory_bytes"]
    by_memory = f"innodb_dedicated_server (hardware.memory {format_size(mem)})" if mem else ""

    def set_key(key: str, value, how: str, where: str) -> None:
        spec = SCHEMA["server"][key]
        srv[spec.attr] = value
        origin[("server", key)] = where
        out.append(f"sets {key} = {value_text(spec, value)}{how}")

    pool_given = "innodb_buffer_pool_size" in given
    if v.dedicated_server == "80":
        keys = ("innodb_log_file_size", "innodb_log_files_in_group")
        left = [k for k in keys if not _dedicated_ignored(k, given, srv, out)]
        if left:
            mem = _dedicated_memory(hw, origin, " and ".join(left))
            files = dedicated_server.log_files_80(mem, srv["innodb_buffer_pool_size_bytes"], pool_given)
            if files is None:
                out.append("keeps " + " and ".join(left) + " at their defaults (a pool under 1G)")
            else:
                for key, value in zip(keys, files):
                    if key in left:
                        set_key(key, value, " (from the pool size)", by_memory)
    elif not any(_dedicated_ignored(k, given, srv, out) for k in
                 ("innodb_redo_log_capacity", "innodb_log_file_size", "innodb_log_files_in_group")):
        if v.dedicated_server == "84":
            cap = dedicated_server.redo_capacity_84(hw["cpu_cores"])
            set_key("innodb_redo_log_capacity", cap, f" (hardware.cpu_cores {hw['cpu_cores']} / 2 GB, at most 16G)",
                    f"innodb_dedicated_server (hardware.cpu_cores {hw['cpu_cores']})")
        else:
            mem = _dedicated_memory(hw, origin, "innodb_redo_log_capacity")
            cap = dedicated_server.redo_capacity_8030(mem, pool_given)
            if cap is None:
                out.append(f"keeps innodb_redo_log_capacity at its default (hardware.memory {format_size(mem)} "
                           "is under 2G)")
            else:
                set_key("innodb_redo_log_capacity", cap, " (from hardware.memory)", by_memory)
    if v.dedicated_server in ("80", "8030") and not _dedicated_ignored("innodb_flush_method", given, srv, out):
        set_key("innodb_flush_method", "O_DIRECT_NO_FSYNC", "", "innodb_dedicated_server")


IOBENCH_ONLY = ("pattern", "block_size", "processes", "io_mode")
OLTP_ONLY = ("profile", "users", "warehouses", "tables", "table_size", "pages_read_per_txn", "pages_modified_per_txn",
             "redo_bytes_per_txn", "binlog_bytes_per_txn", "cpu_per_txn", "serial_per_txn", "think_time", "rate",
             "hot_data_pct", "hot_access_pct", "warm_start", "access", "cleaner_wake_race",
             "log_free_checks_per_txn", "cpu_per_run")
TWO_TIER_KEYS = ("hot_data_pct", "hot_access_pct")      # the two-tier access model's; none with tpcc or sysbench
SYSBENCH_KEYS = ("tables", "table_size")                # the sysbench access model's
_PROFILE_KEYS = ("pages_read_per_txn", "pages_modified_per_txn", "redo_bytes_per_txn", "cpu_s_per_txn",
                 "serial_s_per_txn", "hot_data_pct", "hot_access_pct", "binlog_bytes_per_txn",
                 "log_free_checks_per_txn")


def _refuse_access_keys(given: dict, origin: dict, src: str, keys: tuple, owner: str, access: str,
                        why: str = "") -> None:
    """Keys of another access model (`owner`'s: TWO_TIER_KEYS, SYSBENCH_KEYS) given with `access`."""
    for key in keys:
        if key in given:
            raise InputError(origin.get(("workload", key), src), f"workload.{key}",
                             f"is a setting of access = \"{owner}\"",
                             f"leave it out with access = \"{access}\"" + (f" ({why})" if why else ""))


def _check_workload_keys(doc: dict, values: dict, origin: dict, src: str) -> None:
    """Keys of the other workload kind are refused; kind-dependent defaults are filled in."""
    from models.oltp import TPCC_BYTES_PER_WAREHOUSE, profile

    wl, run = values["workload"], values["run"]
    given = doc.get("workload", {})
    kind = wl["kind"]
    foreign = IOBENCH_ONLY if kind == "oltp" else OLTP_ONLY
    for key in foreign:
        if key in given:
            raise InputError(origin.get(("workload", key), src), f"workload.{key}",
                             f"is not a setting of a kind = \"{kind}\" workload",
                             "the keys of that kind (see docs/ARCHITECTURE.md)")
    if "cleaner_wake_race" in given and not version_of(values["server"]["version"]).is_mariadb:
        raise InputError(origin.get(("workload", "cleaner_wake_race"), src), "workload.cleaner_wake_race",
                         f"is a setting of MariaDB's page cleaner; server.version is {values['server']['version']!r}",
                         "leave it out, or a server.version mariadb-10.11 or later")
    if kind == "iobench" and values["hardware"]["log_device"] != "":
        raise InputError(origin.get(("hardware", "log_device"), src), "hardware.log_device",
                         f"{values['hardware']['log_device']!r}: an iobench workload has no redo log",
                         "\"\" (empty) for an iobench workload")
    if kind == "oltp" and values["hardware"]["io_scheduler"] != "off":
        raise InputError(origin.get(("hardware", "io_scheduler"), src), "hardware.io_scheduler",
                         f"{values['hardware']['io_scheduler']!r}: the InnoDB engine's I/O does not go through "
                         "the host's block layer (models/block_layer.py); only iobench workloads do",
                         "\"off\" for an oltp workload")
    if kind == "oltp":
        prof = profile(wl["profile"])
        if wl["access"] == "tpcc":
            if wl["warehouses"] is None:
                raise InputError(origin.get(("workload", "access"), src), "workload.access",
                                 "\"tpcc\" without workload.warehouses",
                                 "warehouses = N with access = \"tpcc\" (TPC-C's tables are sized by it)")
            _refuse_access_keys(given, origin, src, TWO_TIER_KEYS, "two-tier", "tpcc", "NURand sets the skew")
        if wl["access"] == "sysbench":
            for key in SYSBENCH_KEYS:
                if wl[key] is None:
                    raise InputError(origin.get(("workload", "access"), src), "workload.access",
                                     f"\"sysbench\" without workload.{key}",
                                     "tables = N and table_size = ROWS with access = \"sysbench\" "
                                     "(sysbench --tables, --table-size)")
            _refuse_access_keys(given, origin, src, TWO_TIER_KEYS, "two-tier", "sysbench",
                                "--rand-type=special sets the skew")
            if wl["warehouses"] is not None:
                raise InputError(origin.get(("workload", "warehouses"), src), "workload.warehouses",
                                 "is a setting of access = \"tpcc\" or \"two-tier\"",
                                 "tables and table_size with access = \"sysbench\"")
        else:
            _refuse_access_keys(given, origin, src, SYSBENCH_KEYS, "sysbench", wl["access"])
        for attr in _PROFILE_KEYS:
            if wl[attr] is None:
                wl[attr] = getattr(prof, attr)
        if wl["access"] == "sysbench":
            from models.page_population import sysbench_layout
            page = values["server"].get("innodb_page_size_bytes", 16384)
            pk, kp = sysbench_layout(wl["tables"], wl["table_size"], page)
            need = wl["tables"] * (pk + kp) * page                   # the leaf pages alone
            if wl["data_bytes"] is None:
                wl["data_bytes"] = need
            elif wl["data_bytes"] // page // wl["tables"] < pk + kp:
                raise InputError(origin.get(("workload", "data_size"), src), "workload.data_size",
                                 f"{wl['data_bytes']:,} bytes cannot hold {wl['tables']} sbtest tables of "
                                 f"{wl['table_size']:,} rows ({pk + kp:,} leaf pages of {page} bytes a table)",
                                 f"at least {need:,} bytes, or leave data_size out")
        if wl["data_bytes"] is None:
            if wl["warehouses"] is None:
                raise InputError(src, "workload.data_size", "an oltp workload needs its data size",
                                 "data_size (e.g. \"5G\") or warehouses")
            wl["data_bytes"] = wl["warehouses"] * TPCC_BYTES_PER_WAREHOUSE
        elif wl["warehouses"] is not None:
            raise InputError(origin.get(("workload", "warehouses"), src), "workload.warehouses",
                             "given together with data_size", "one of warehouses or data_size")
        run["duration_s"] = 60.0 if run["duration_s"] is None else run["duration_s"]
        run["warmup_s"] = 0.0 if run["warmup_s"] is None else run["warmup_s"]
    else:
        if wl["data_bytes"] is None:
            wl["data_bytes"] = 128 * G
        run["duration_s"] = 0.2 if run["duration_s"] is None else run["duration_s"]
        run["warmup_s"] = 0.05 if run["warmup_s"] is None else run["warmup_s"]


def _check_cross_fields(values: dict, origin: dict, src: str) -> None:
    srv, hw = values["server"], values["hardware"]

    def where(section: str, key: str) -> str:
        return origin.get((section, key), src)

    wl = values["workload"]
    if wl.get("rate_tps") and wl.get("think_s"):
        raise InputError(where("workload", "rate"), "workload.rate",
                         "an open loop (rate) has no think time: a user takes the next queued transaction",
                         "rate or think_time, not both")
    if srv["innodb_io_capacity_max"] < srv["innodb_io_capacity"]:
        raise InputError(where("server", "innodb_io_capacity_max"), "server.innodb_io_capacity_max",
                         f"{srv['innodb_io_capacity_max']} is below innodb_io_capacity "
                         f"{srv['innodb_io_capacity']}", ">= innodb_io_capacity")
    total = srv["innodb_log_file_size_bytes"] * srv["innodb_log_files_in_group"]
    if total > 512 * G:
        raise InputError(where("server", "innodb_log_file_size"), "server.innodb_log_file_size",
                         f"log files come to {format_size(total)} in all",
                         "innodb_log_file_size x innodb_log_files_in_group <= 512G (5.6)")
    try:
        redo_limits(version_of(srv["version"]).redo, log_file_size_bytes=srv["innodb_log_file_size_bytes"],
                    log_files_in_group=srv["innodb_log_files_in_group"],
                    redo_log_capacity_bytes=srv["innodb_redo_log_capacity_bytes"],
                    page_size_bytes=srv["innodb_page_size_bytes"],
                    thread_concurrency=srv["innodb_thread_concurrency"])
    except InputError as err:
        raise InputError(where("server", "innodb_log_file_size"), f"server.{err.field}", err.problem,
                         err.allowed) from None
    for key in ("device", "log_device"):
        device = hw[key]
        if key == "log_device" and device == "":
            continue                                    # the redo log on the data device
        if device not in builtin_profile_names() and not Path(device).is_file():
            # A relative path is looked up beside the scenario file that names it.
            beside = Path(where("hardware", key)).parent / device
            if not Path(device).is_absolute() and Path(where("hardware", key)).is_file() and beside.is_file():
                hw[key] = device = str(beside)
        if device not in builtin_profile_names() and not Path(device).is_file():
            raise InputError(where("hardware", key), f"hardware.{key}", f"{device!r} is not found",
                             "a built-in profile (" + ", ".join(builtin_profile_names()) + ") or a JSON file"
                             + (", or \"\" for the data device" if key == "log_device" else ""))
    for fs in hw["filesystem"]:
        for kernel in hw["kernel"]:
            try:
                make_spec(fs, kernel, mount_options_for(hw["mount_options"], fs, kernel),
                          source=where("hardware", "mount_options"))
            except InputError as err:
                raise InputError(err.source, f"hardware.{err.field}",
                                 f"{err.problem} (filesystem {fs}, kernel {kernel})", err.allowed) from None
    if srv["innodb_max_dirty_pages_pct_lwm"] > srv["innodb_max_dirty_pages_pct"]:
        raise InputError(where("server", "innodb_max_dirty_pages_pct_lwm"), "server.innodb_max_dirty_pages_pct_lwm",
                         f"{srv['innodb_max_dirty_pages_pct_lwm']} is above innodb_max_dirty_pages_pct "
                         f"{srv['innodb_max_dirty_pages_pct']} (the server: \"innodb_max_dirty_pages_pct_lwm "
                         "cannot be set higher than innodb_max_dirty_pages_pct\")",
                         "<= innodb_max_dirty_pages_pct")
    wl, run = values["workload"], values["run"]
    if wl["kind"] == "oltp":
        if "raw" in hw["filesystem"]:
            raise InputError(where("hardware", "filesystem"), "hardware.filesystem",
                             "InnoDB data files need a filesystem here", "ext4 or xfs for an oltp workload")
        for key in ("filesystem", "kernel", "data_files"):
            if len(hw[key if key != "data_files" else "data_files"]) > 1:
                raise InputError(where("hardware", key), f"hardware.{key}", "a list (grid) is for iobench only",
                                 "one value for an oltp workload")
        _check_tick_fits(run, origin, src)
        per_100ms = 0.1 / run["resolution_s"]
        if round(per_100ms) < 1 or abs(per_100ms - round(per_100ms)) > 1e-6:
            raise InputError(where("run", "resolution"), "run.resolution",
                             f"a tick of {run['resolution_s'] * 1000:g} ms does not divide 100 ms, so the series "
                             "at 100 ms, 1 s, 10 s and 60 s would not be whole numbers of ticks",
                             "a tick that divides 100 ms: 1ms, 2ms, 2.5ms, 4ms, 5ms, 10ms, 20ms, 25ms, 50ms "
                             "or 100ms")
        return
    if "raw" in hw["filesystem"] and "fsync" in wl["io_mode"]:
        raise InputError(where("workload", "io_mode"), "workload.io_mode",
                         "a raw device is written with O_DIRECT only", "direct when filesystem is raw")
    for bs in wl["block_bytes"]:
        if bs % 512:
            raise InputError(where("workload", "block_size"), "workload.block_size",
                             f"{bs} bytes is not a multiple of 512 (O_DIRECT alignment)",
                             "a multiple of 512")
        for n in hw["data_files"]:
            if wl["data_bytes"] // n < bs:
                raise InputError(where("workload", "data_size"), "workload.data_size",
                                 f"{format_size(wl['data_bytes'])} over {n} files leaves less than one block per file",
                                 "at least block_size x data_files")
    _check_tick_fits(run, origin, src)


def _check_tick_fits(run: dict, origin: dict, src: str) -> None:
    """The series' tick (run.resolution) fits in the measured time; the message names the key the
    user set: the resolution if given, else the duration (the tick is then the 10 ms default)."""
    if run["resolution_s"] <= run["duration_s"]:
        return
    if ("run", "resolution") in origin:
        raise InputError(origin[("run", "resolution")], "run.resolution",
                         f"{run['resolution_s']:g}s is longer than the duration {run['duration_s']:g}s",
                         "<= run.duration")
    raise InputError(origin.get(("run", "duration"), src), "run.duration",
                     f"{run['duration_s']:g}s is shorter than one tick of the series "
                     f"(run.resolution, {run['resolution_s'] * 1000:g} ms)", f">= {run['resolution_s']:g}s")


def scenario_doc_from_text(text: str, src: str) -> dict:
    """A scenario document from TOML text (not yet validated); a leading byte-order mark (editors
    on Windows write one) is dropped."""
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as err:
        raise InputError(src, "", f"invalid TOML: {err}", "TOML 1.0") from None


def read_scenario_doc(path: str | Path) -> dict:
    """A scenario file's document (not yet validated)."""
    p = Path(path)
    src = str(path)
    if not p.is_file():
        raise InputError(src, "", "no such scenario file", "a path to a .toml file")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(src, "", "not UTF-8 text", "a TOML file") from None
    except OSError as err:
        raise InputError(src, "", f"cannot be read: {err.strerror}", "a readable scenario file") from None
    return scenario_doc_from_text(text, src)


def load_scenario(path: str | Path, overrides: list[str] | tuple[str, ...] = (),
                  option_files: list[str] | tuple[str, ...] = (), server_vars: str | None = None) -> Scenario:
    """Read and validate a scenario file (with a server's variables, my.cnf option files and --set
    overrides)."""
    return scenario_from_dict(read_scenario_doc(path), str(path), name=Path(path).stem, overrides=overrides,
                              option_files=option_files, server_vars=server_vars)


def applicable_keys(scn: Scenario, section: str) -> list[str]:
    """The section's keys that apply to this scenario: not the other workload kind's, and not
    `warehouses` (it resolves into `data_size`), except with access = "tpcc", whose tables are
    sized by `warehouses` and which has no hot set; `cleaner_wake_race` with MariaDB only."""
    skip = IOBENCH_ONLY if scn.workload.kind == "oltp" else OLTP_ONLY
    keys = list(SCHEMA[section])
    if section == "workload":
        access = scn.workload.access if scn.workload.kind == "oltp" else ""
        if access == "tpcc":
            drop = ("data_size", *TWO_TIER_KEYS, *SYSBENCH_KEYS)
        elif access == "sysbench":
            drop = ("warehouses", *TWO_TIER_KEYS)
        else:
            drop = ("warehouses", *SYSBENCH_KEYS)
        if not version_of(scn.server.version).is_mariadb:
            drop = (*drop, "cleaner_wake_race")
        keys = [k for k in keys if k not in skip and k not in drop]
    if section == "server":
        keys = version_keys(scn.server.version)
        if version_of(scn.server.version).is_mariadb:
            release = scenario_release(scn)
            keys = [k for k in keys if not _release_lacks(release, k)]
    return keys


def scenario_release(scn: Scenario) -> tuple[int, int, int | None]:
    """(major, minor, patch or None) of the release a scenario runs: its written server.version,
    else its version (sim.server_vars.release_numbers)."""
    from sim.server_vars import release_numbers

    return release_numbers(scn.release or scn.server.version) or (0, 0, None)


def _release_lacks(release: tuple[int, int, int | None], key: str) -> bool:
    """A MariaDB setting that came after `release` (scenario_release; models.releases)."""
    entry = setting_introduced(key)
    return entry is not None and release_has(entry, *release) is False


def setting_value(scn: Scenario, section: str, key: str) -> Any:
    """A setting as the scenario holds it (bytes, seconds, ...); a one-value list as its value;
    server.version as written where it names a release (Scenario.release), which loads back as the
    version it runs as (scn.server.version)."""
    if (section, key) == ("server", "version") and scn.release:
        return scn.release
    v = getattr(getattr(scn, section), SCHEMA[section][key].attr)
    return v[0] if isinstance(v, tuple) and len(v) == 1 else v


def setting_text(scn: Scenario, section: str, key: str) -> str:
    """The value of one setting as a scenario file would hold it ("16G", "60s", "true", "xfs")."""
    return value_text(SCHEMA[section][key], setting_value(scn, section, key))


def value_text(spec: Key, v) -> str:
    """A setting's value as a scenario file would hold it ("16G", "60s", "true", "xfs")."""
    if isinstance(v, tuple):
        v = ",".join(map(str, v))
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if spec.kind == "size" and isinstance(v, int):
        return format_size(v)
    if spec.kind == "duration":
        return f"{v:g}s"
    return str(v)


def scenario_fields(section: str) -> list[str]:
    """Attribute names of a section's dataclass (for reports)."""
    return [f.name for f in fields(_SECTION_TYPES[section])]
