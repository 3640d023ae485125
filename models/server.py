"""The simulated server's shared state: settings, counters, and the parts the processes share.

Counter names are the server's own (INNODB_METRICS / SHOW GLOBAL STATUS, shared/research/
innodb-flushing.md section 7) where one exists; `buffer_LRU_single_flush_pages` (pages written by
user threads' single-page flushes, 5.6 buf_flush_single_page_from_LRU) has no 5.6 counter of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from models.file_access import FileAccess, file_access

COUNTERS = (
    "buffer_flush_adaptive_total_pages",     # page cleaner, flush list (active server)
    "buffer_flush_background_total_pages",   # page cleaner, flush list (idle server)
    "buffer_flush_sync_total_pages",         # user threads' sync preflush
    "buffer_LRU_batch_total_pages",          # page cleaner, LRU tail
    "buffer_LRU_single_flush_pages",         # user threads, no free page
    "buffer_flush_neighbor_total_pages",     # neighbours written along (included in the above)
    "buffer_flush_sync_waits",
    "log_on_file_space_waits",               # 8.0: user threads waiting for redo space (log_free_check)
    "buffer_flush_sync",                     # sync preflush batches (calls)
    "Innodb_buffer_pool_wait_free",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_data_reads",
    "Innodb_data_writes",
    "Innodb_data_fsyncs",
    "Innodb_dblwr_pages_written",
    "Innodb_dblwr_writes",
    "Innodb_log_writes",
    "Innodb_os_log_fsyncs",
    "Innodb_os_log_written",
    "log_checkpoints",
    "Innodb_pages_written",
    "commits",
    "os_page_cache_read_hits",               # not a server counter: page reads the OS cache served
    "Binlog_commits",                        # MariaDB's status names; MySQL shows no such counters
    "Binlog_group_commits",
    "Binlog_bytes_written",
    "binlog_fsyncs",                         # not a server counter: fsyncs of the binary log
    "buffer_flush_adaptive",                 # page cleaner passes: adaptive flush-list batches
    "buffer_flush_background",               # page cleaner passes: background flush-list batches
    "buffer_LRU_batch_num_scan",             # LRU batches (per instance)
)

FLUSH_KIND_COUNTER = {
    "adaptive": "buffer_flush_adaptive_total_pages",
    "background": "buffer_flush_background_total_pages",
    "sync": "buffer_flush_sync_total_pages",
    "lru": "buffer_LRU_batch_total_pages",
    "single_page": "buffer_LRU_single_flush_pages",
}


@dataclass(frozen=True)
class ServerSettings:
    """The my.cnf settings the engine reads, resolved to numbers (units in names)."""

    version: str = "mysql-5.6"
    page_size_bytes: int = 16384
    buffer_pool_size_bytes: int = 128 << 20
    buffer_pool_instances: int = 1
    log_file_size_bytes: int = 48 << 20
    log_files_in_group: int = 2
    log_buffer_size_bytes: int = 8 << 20
    flush_log_at_trx_commit: int = 1
    flush_log_at_timeout_s: float = 1.0
    log_bin: bool = False
    sync_binlog: int = 0
    binlog_group_commit_sync_delay_us: int = 0
    binlog_group_commit_sync_no_delay_count: int = 0
    thread_concurrency: int = 0
    thread_sleep_delay_us: int = 10000
    adaptive_max_sleep_delay_us: int = 150000
    io_capacity: int = 200
    io_capacity_max: int = 2000
    adaptive_flushing: bool = True
    adaptive_flushing_lwm_pct: int | float = 10       # a fraction only on MariaDB (a double there)
    max_dirty_pages_pct: int | float = 75          # a fraction only where the server takes one (5.7+, MariaDB)
    max_dirty_pages_pct_lwm: int | float = 0
    flushing_avg_loops: int = 30
    lru_scan_depth: int = 1024
    flush_neighbors: int = 1
    doublewrite: bool = True
    doublewrite_reduced: bool = False     # innodb_doublewrite = DETECT_ONLY (8.0.30+): page identifiers only
    flush_method: str = "fsync"
    old_blocks_pct: int = 37
    old_blocks_time_s: float = 1.0
    redo_log_capacity_bytes: int = 100 << 20
    page_cleaners: int = 1
    flush_sync: bool = True
    idle_flush_pct: int = 100
    doublewrite_pages: int = 4
    page_checksum_s: float = 0.0        # per page written or read (models.checksum)
    use_native_aio: bool = True
    datasync: bool = False               # fdatasync() (innodb_use_fdatasync; MariaDB always)
    log_o_sync: bool = True              # innodb_flush_method = O_DSYNC opens the log O_SYNC (MySQL)
    log_o_direct: bool = False           # the redo log opened O_DIRECT (MariaDB innodb_log_file_buffering = OFF)
    data_buffered: bool = False          # MariaDB 11.0+ innodb_data_file_buffering
    data_write_through: bool = False     # MariaDB 11.0+ innodb_data_file_write_through
    log_write_through: bool = False      # MariaDB 11.0+ innodb_log_file_write_through
    doublewrite_fast: bool = False       # MariaDB 11.0.6+ innodb_doublewrite = fast
    file_per_table: bool = True          # False: the tables are in ibdata1 with the doublewrite area
    write_io_threads: int = 4
    log_writer_threads: bool = False     # MySQL 8.0's log_writer / log_flusher threads (models.log_threads)
    log_spin_cpu_abs_lwm: int = 80       # innodb_log_spin_cpu_abs_lwm (8.0): their spinning's CPU floor

    def file_access(self) -> FileAccess:
        """How the data files and the redo log are opened and synced (models.file_access)."""
        return file_access(self.flush_method, data_buffered=self.data_buffered,
                           data_write_through=self.data_write_through, log_write_through=self.log_write_through,
                           doublewrite_fast=self.doublewrite_fast, log_direct=self.log_o_direct)


@dataclass
class Counters:
    """Cumulative counters; the recorder samples them every tick."""

    values: dict[str, int] = field(default_factory=lambda: {k: 0 for k in COUNTERS})

    def add(self, name: str, n: int = 1) -> None:
        self.values[name] += n

    def __getitem__(self, name: str) -> int:
        return self.values[name]
