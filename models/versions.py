"""The server versions innosim simulates: which algorithms each runs, its defaults, its settings.

`[server] version` picks one of VERSIONS. A version names the variant of every mechanism that
changed between releases (shared/research/innodb-flushing.md section 10ter):

* redo: how capacity and thresholds are computed (models.redo: "56" log_calc_max_ages of 5.6/5.7,
  "80" log_calc_max_ages of 8.0.11-8.0.29, "8030" log0files_capacity of 8.0.30+, "mariadb"
  log_t::set_capacity of 10.5+);
* foreground: what a user thread does past a threshold ("56" flushes itself, "57" asks the page
  cleaner and polls, "80" waits for the checkpointer, "mariadb" flush-ahead and 1 MiB steps);
* cleaner: the page cleaner ("56" one thread, "57" coordinator + workers, "80" the same with a
  sync-flush mode, "mariadb" one thread with furious flushing);
* checkpoints: who writes them ("master" 5.6/5.7 srv_master_thread, "checkpointer" 8.0
  log_checkpointer, "cleaner" MariaDB's page cleaner);
* doublewrite: "56" (ibdata, one 120-page batch in flight), "80" (8.0.20+ files, per-instance
  buffers), "mariadb" (two 128-page slots, asynchronous).

Defaults are the version's compiled defaults of the settings innosim reads (spec section 9; MySQL
8.4 from its manual's table of changed InnoDB defaults, dev.mysql.com/doc/refman/8.4/en/
mysql-nutshell.html, and lefred.be "MySQL 8.4 LTS - new production-ready defaults for InnoDB";
MariaDB 10.11 measured here: `mariadbd --no-defaults --verbose --help` of 10.11.19).
`absent` lists settings the version does not have: the server refuses to start on an unknown
variable. `removed` lists settings MariaDB still accepts and ignores; 10.11.19 logs, measured here:
"'innodb-buffer-pool-instances' was removed. It does nothing now and exists only for compatibility
with old my.cnf files." (the same for innodb-thread-concurrency, -thread-sleep-delay and
-adaptive-max-sleep-delay, checked with 10.11.19's `mariadbd --no-defaults --verbose --help`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from models.checksum import MARIADB_ALGORITHMS, MYSQL_ALGORITHMS

M = 1 << 20
# innodb_page_size: 4K to 64K since MySQL 5.7.6 (WL#5757) and MariaDB 10.1; 5.6 stops at 16K
# (MySQL 5.6 and 5.7 manuals, innodb_page_size).
PAGE_SIZES = (4096, 8192, 16384, 32768, 65536)
PAGE_SIZES_56 = (4096, 8192, 16384)


@dataclass(frozen=True)
class Version:
    name: str
    label: str                          # what a reader calls it
    source: str                         # the source tree or measurement its models follow
    redo: str
    foreground: str
    cleaner: str
    checkpoints: str
    doublewrite: str
    free_block_sleep_s: float           # buf_LRU_get_free_block's sleep from the second round on
    defaults: dict = field(default_factory=dict)   # my.cnf name -> value (scenario units)
    absent: tuple = ()                  # unknown variables: the server refuses to start
    removed: tuple = ()                 # accepted and ignored, with the server's warning
    flush_order_lag_bytes: int = 0      # 8.0 innodb_log_recent_closed_size (relaxed flush-list order)
    checksum_algorithms: tuple = MYSQL_ALGORITHMS   # innodb_checksum_algorithm values it accepts
    page_sizes: tuple = PAGE_SIZES      # innodb_page_size values it accepts
    dedicated_server: str = ""          # innodb_dedicated_server's rules (models.dedicated_server): "80"
    #                                     8.0.14-8.0.29, "8030" 8.0.30+, "84" 8.4; "" no such variable
    log_threads: bool = False           # 8.0.11+: log_writer / log_flusher threads (models.log_threads)

    @property
    def margin_wait(self) -> str:
        """What a user thread stopped at log_free_check is doing, as a stall cause: 5.6 flushes
        itself and 5.7 waits for the page cleaner's sync flush ("sync flush"); 8.0 and MariaDB
        threads wait for the checkpoint to free redo space."""
        return "sync flush" if self.foreground in ("56", "57") else "redo space wait"

    @property
    def is_mariadb(self) -> bool:
        return self.name.startswith("mariadb")

    @property
    def always_fdatasync(self) -> bool:
        """MariaDB 10.5+ syncs every InnoDB file with fdatasync(): os_file_sync_posix (MDEV-21382
        for the redo log in 10.5.1, MDEV-22177 for the rest: "InnoDB doesn't care about file
        timestamps")."""
        return self.is_mariadb

    @property
    def redo_in_data_writes(self) -> bool:
        """Innodb_data_writes counts the redo writes: MySQL's log writes go through fil_io and
        os_file_pwrite (os_n_file_writes++); MariaDB 10.5+'s do not (live captures on 10.11.19:
        Innodb_data_writes = Innodb_buffer_pool_pages_flushed + Innodb_dblwr_writes exactly)."""
        return not self.is_mariadb

    @property
    def pool_chunks(self) -> bool:
        """The pool is made of innodb_buffer_pool_chunk_size chunks (MySQL 5.7.5+; MariaDB 10.11
        keeps the variable as "Deprecated parameter with no effect", its --help)."""
        return self.name != "mysql-5.6" and not self.is_mariadb


# MariaDB's file settings (models.file_access): innodb_log_file_buffering from 10.8.4, the rest 11.0+.
# MySQL 8.0's redo log threads: innodb_log_spin_cpu_abs_lwm from 8.0.11 (WL#10310, which made the
# threads), innodb_log_writer_threads from 8.0.22 (Bug#30088404, mysql-server commit 9bfe602).
_LOG_THREADS_80 = ("innodb_log_writer_threads", "innodb_log_spin_cpu_abs_lwm")
_MARIADB_ONLY = ("binlog_commit_wait_count", "binlog_commit_wait_usec", "innodb_log_file_buffering",
                 "innodb_log_file_write_through", "innodb_data_file_buffering", "innodb_data_file_write_through")
# innodb_dedicated_server came in MySQL 8.0.3 (WL#9193); MariaDB has none (10.11.19's --help).
# innodb_use_fdatasync came in MySQL 8.0.26 (WL#14452, default false); MariaDB has none (its
# os_file_sync_posix always calls fdatasync, MDEV-22177).
_ABSENT_56 = ("innodb_dedicated_server", "innodb_use_fdatasync", "innodb_buffer_pool_chunk_size",
              "innodb_page_cleaners", "innodb_flush_sync", "innodb_redo_log_capacity", "innodb_idle_flush_pct",
              "innodb_doublewrite_pages", "binlog_group_commit_sync_delay",
              "binlog_group_commit_sync_no_delay_count") + _MARIADB_ONLY + _LOG_THREADS_80
_ABSENT_57 = ("innodb_dedicated_server", "innodb_use_fdatasync", "innodb_redo_log_capacity",
              "innodb_idle_flush_pct", "innodb_doublewrite_pages") + _MARIADB_ONLY + _LOG_THREADS_80
# innodb_checksum_algorithm: crc32 from 5.7.7 (WL#8315); innodb_checksums removed in 8.0 (WL#8893).
# sync_binlog 1 from 5.7.7 (was 0); log_bin on by default from 8.0.3 (MySQL manuals, "Changes in MySQL 5.7"
# and "What Is New in MySQL 8.0").
_DEFAULTS_57 = {"innodb_log_buffer_size": 16 * M, "innodb_page_cleaners": 4, "innodb_flush_sync": True,
                "innodb_checksum_algorithm": "crc32", "sync_binlog": 1}
_DEFAULTS_80 = dict(_DEFAULTS_57, innodb_max_dirty_pages_pct=90, innodb_max_dirty_pages_pct_lwm=10,
                    innodb_flush_neighbors=0, innodb_idle_flush_pct=100, innodb_doublewrite_pages=4,
                    log_bin=True)
_DEFAULTS_8030 = dict(_DEFAULTS_80, innodb_redo_log_capacity=100 * M)
# innodb_use_fdatasync ON in 8.4: mysql-server's sys_vars test innodb_use_fdatasync_basic.result
# (commit 2ca2c55) reads 1 at startup and after SET ... = DEFAULT; WL#14452 gave 8.0.26 false.
_DEFAULTS_84 = dict(_DEFAULTS_8030, innodb_io_capacity=10000, innodb_flush_method="O_DIRECT",
                    innodb_log_buffer_size=64 * M, innodb_doublewrite_pages=128, innodb_use_fdatasync=True)
RECENT_CLOSED_BYTES = 2 * M             # innodb_log_recent_closed_size default (8.0)

VERSIONS: dict[str, Version] = {v.name: v for v in (
    Version("mysql-5.6", "MySQL 5.6", "MySQL 5.6.29 source", "56", "56", "56", "master", "56", 0.1,
            absent=_ABSENT_56, page_sizes=PAGE_SIZES_56),
    Version("mysql-5.7", "MySQL 5.7", "MySQL 5.7.44 source", "56", "57", "57", "master", "56", 0.01,
            defaults=_DEFAULTS_57, absent=_ABSENT_57),
    Version("mysql-8.0", "MySQL 8.0.20-8.0.29", "MySQL 8.0.27 source", "80", "80", "80", "checkpointer", "80",
            0.01, defaults=_DEFAULTS_80, absent=("innodb_redo_log_capacity", "innodb_checksums") + _MARIADB_ONLY,
            flush_order_lag_bytes=RECENT_CLOSED_BYTES, dedicated_server="80", log_threads=True),
    Version("mysql-8.0.30", "MySQL 8.0.30+", "MySQL 8.0.3x source (log0files_capacity.cc, log0chkp.cc)", "8030",
            "80", "80", "checkpointer", "80", 0.01, defaults=_DEFAULTS_8030,
            absent=("innodb_checksums",) + _MARIADB_ONLY,
            flush_order_lag_bytes=RECENT_CLOSED_BYTES, dedicated_server="8030", log_threads=True),
    Version("mysql-8.4", "MySQL 8.4 LTS", "MySQL 8.0.3x source with the 8.4 defaults", "8030", "80", "80",
            "checkpointer", "80", 0.01, defaults=_DEFAULTS_84, absent=("innodb_checksums",) + _MARIADB_ONLY,
            flush_order_lag_bytes=RECENT_CLOSED_BYTES, dedicated_server="84", log_threads=True),
    Version("mariadb-10.11", "MariaDB 10.11", "MariaDB 10.11/11.x source; defaults measured on 10.11.19",
            "mariadb", "mariadb", "mariadb", "cleaner", "mariadb", 0.0,
            defaults={"innodb_log_file_size": 96 * M, "innodb_log_buffer_size": 16 * M,
                      "innodb_flush_method": "O_DIRECT", "innodb_max_dirty_pages_pct": 90,
                      "innodb_lru_scan_depth": 1536, "innodb_flush_sync": True,
                      "innodb_checksum_algorithm": "full_crc32", "innodb_buffer_pool_chunk_size": 0},
            absent=("innodb_dedicated_server", "innodb_use_fdatasync", "innodb_redo_log_capacity",
                    "innodb_idle_flush_pct", "innodb_doublewrite_pages", "innodb_checksums",
                    "binlog_group_commit_sync_delay", "binlog_group_commit_sync_no_delay_count") + _LOG_THREADS_80,
            checksum_algorithms=MARIADB_ALGORITHMS,
            removed=("innodb_buffer_pool_instances", "innodb_page_cleaners", "innodb_log_files_in_group",
                     "innodb_thread_concurrency", "innodb_thread_sleep_delay",
                     "innodb_adaptive_max_sleep_delay")),
)}
VERSION_NAMES = tuple(VERSIONS)


def version(name: str) -> Version:
    return VERSIONS[name]


def io_capacity_max_default(v: Version, io_capacity: int) -> int:
    """innodb_io_capacity_max when not set: max(2000, 2 x innodb_io_capacity) (5.6/5.7/8.0
    innobase_init, SRV_MAX_IO_CAPACITY_DUMMY_DEFAULT; assumed the same for MariaDB, whose help
    shows the dummy 4294967295); 2 x innodb_io_capacity in 8.4 (lefred.be, MySQL 8.4 defaults)."""
    if v.name == "mysql-8.4":
        return 2 * io_capacity
    return max(2000, 2 * io_capacity)


BUFFER_POOL_CHUNK_BYTES = 128 * M       # innodb_buffer_pool_chunk_size default (MySQL 5.7.5+)
BUF_POOL_SIZE_THRESHOLD = 1 << 30       # below 1 GiB the server runs one instance, whatever is set


def startup_instances(pool_bytes: int, instances: int) -> int:
    """The instances the server runs: one below 1 GiB (innobase_init / innodb_buffer_pool_size_init,
    "Adjusting innodb_buffer_pool_instances from N to 1"), else as set."""
    return 1 if pool_bytes < BUF_POOL_SIZE_THRESHOLD else instances


def buf_pool_size_align(pool_bytes: int, instances: int, chunk_bytes: int = BUFFER_POOL_CHUNK_BYTES) -> int:
    """innodb_buffer_pool_size as MySQL 5.7.5+ runs it: the chunk shrinks to pool / instances when
    chunk x instances exceeds the pool, then the pool rounds up to a multiple of chunk x instances
    (innobase_init / innodb_buffer_pool_size_init, buf_pool_size_align)."""
    if chunk_bytes * instances > pool_bytes:
        chunk_bytes = -(-pool_bytes // instances)
    unit = chunk_bytes * instances
    return -(-pool_bytes // unit) * unit


def buffer_pool_instances_default(v: Version, pool_bytes: int, cpu_cores: int) -> int:
    """innodb_buffer_pool_instances when not set: 5.6-8.0: 8, and 1 below 1 GiB (the server's
    startup adjustment); 8.4: 1 up to 1 GiB, else min((pool / chunk) / 2, cores / 4) in 1..64
    (8.4 manual, innodb_buffer_pool_instances); MariaDB 10.5+: one pool."""
    if v.is_mariadb:
        return 1
    if v.name == "mysql-8.4":
        if pool_bytes <= 1 << 30:
            return 1
        return max(1, min(64, (pool_bytes // BUFFER_POOL_CHUNK_BYTES) // 2, cpu_cores // 4))
    return 8
