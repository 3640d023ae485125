"""InnoDB's file layer (fil0fil / os0file, MySQL 5.6) over the filesystem and device models.

* Data: one tablespace per data file (file-per-table); page g of the buffer pool model lives in
  file `(space - 1) % n_files`. ibdata1 (doublewrite area) and the redo log are files of their own.
  With innodb_file_per_table = OFF the tables live in the system tablespace, so the data files are
  ibdata1 (and the further files of innodb_data_file_path): the doublewrite blocks of 5.6/5.7 and
  MariaDB then go to the first data file's inode (`dblwr_in_data_file`); 8.0.20+ keeps its
  doublewrite in files of its own (#ib_*.dblwr).
* innodb_flush_method (5.6, Linux; os_file_create, fil_flush): `fsync` (default) writes data
  through the page cache and fsyncs; `O_DIRECT` opens data files with O_DIRECT and still fsyncs;
  `O_DIRECT_NO_FSYNC` skips those fsyncs; `O_DSYNC` opens the log with O_SYNC (no log fsync);
  `nosync`/`littlesync` skip data fsyncs. MariaDB 11.0+'s own settings and innodb_doublewrite =
  fast come as a models.file_access.FileAccess (`access`), which the method alone gives otherwise.
  A write-through data file (O_DSYNC) is never fsynced; each write ends with fdatasync's cost.
* Buffered data files (every method but O_DIRECT*) pass through the OS page cache
  (models.os_page_cache) when `hardware.page_cache` gives it room: `os_cache` is then the cache
  and `copy_s` the CPU time of one page's copy to or from it; otherwise `os_cache` is None and
  every read goes to the device, as before the cache was modelled.
* Page writes, the doublewrite blocks and data-file fsyncs are SimPy paths through the filesystem
  (inode locks, journal). User-thread reads, log flushes and single-page flushes are computed
  without SimPy from the device queue (`*_done_s`): they run inside the user-thread model, which
  cannot wait on SimPy events; they are therefore not delayed by inode locks.
* Data-page writes (the pages of a doublewrite batch, or every flushed page without doublewrite)
  are asynchronous fil_io requests. With innodb_use_native_aio (the Linux default) the flushing
  thread submits them itself, one after another (os_aio_linux_dispatch -> io_submit), and goes on
  without waiting for them, so an O_DIRECT write holds ext4 2012's i_mutex, or XFS's ILOCK step,
  only while it is submitted (models.filesystem.Filesystem.direct_write, submit_only). Without it they wait in the
  simulated AIO array for one of innodb_write_io_threads I/O handler threads, each issuing one
  synchronous write at a time (os_aio_simulated_handle): at most that many page writes are in
  flight, FIFO, and each holds ext4 2012's i_mutex to completion. Simplified: the handler threads
  do not merge adjacent pages into one write. The doublewrite blocks are synchronous writes of the
  flushing thread either way (buf_dblwr_flush_buffered_writes).
* fsync and the journal: a write that moves a file's timestamp to a new kernel tick leaves its inode
  for the journal, so the file's next fsync() waits for a commit (models.filesystem); fdatasync()
  does not (`datasync`: innodb_use_fdatasync, MySQL 8.0.26+, WL#14452, os_file_fsync_posix; MariaDB
  10.5+ always, os_file_sync_posix). That holds for the redo log too: log_write_up_to writes it
  through the page cache, then fil_flush fsyncs it (or, with O_DSYNC, MySQL opens it O_SYNC:
  os_file_create, "we map O_DSYNC to O_SYNC", so each write syncs as fsync() does). The computed
  paths keep each file's tick here and take the commit from Journal.commit_done_s.
* Block-layer merging (device profile `merge_adjacent_writes`): the page writes of one doublewrite
  batch are posted within microseconds, so they sit in the I/O scheduler's queue together, sorted
  by address, and adjacent ones are merged into one request of up to max_sectors_kb
  (MAX_MERGED_BYTES; `contiguous_runs`). That is what makes innodb_flush_neighbors pay on disks:
  a victim and its dirty neighbours reach the device as one sequential write. Modelled for O_DIRECT
  data files with native AIO; buffered files and the simulated-AIO threads write page by page.
* Counters as the server keeps them in os0file: `Innodb_data_writes` is os_n_file_writes, one per
  write request InnoDB issues (os_aio_func, os_file_pwrite): each data page, each doublewrite
  block write, and in MySQL each redo write and checkpoint block (log_group_write_buf and
  log_group_checkpoint go through fil_io too). MariaDB 10.5+ writes its log outside os_aio: on
  the live captures (10.11.19) Innodb_data_writes is exactly the pages flushed plus
  Innodb_dblwr_writes (`redo_in_data_writes`). `Innodb_data_fsyncs` is os_n_fsyncs, one per
  fsync()/fdatasync() of any InnoDB file, the redo log's included (os_file_fsync, MySQL 5.6-8.x;
  os_file_sync_posix, MariaDB); `Innodb_os_log_fsyncs` counts the log's alone.
"""

from __future__ import annotations

import math

import simpy

from models.device import READ, WRITE, Device
from models.file_access import NO_DATA_FSYNC, FileAccess, file_access
from models.filesystem import PAGE_4K, Filesystem, Tally
from models.os_page_cache import OsPageCache
MAX_MERGED_BYTES = 512 << 10      # /sys/block/*/queue/max_sectors_kb, 512 on the kernels of 2012


def contiguous_runs(entries: list, space_of, max_pages: int) -> list[list]:
    """Entries (tuples whose first item is a global page id) grouped as the block layer would merge
    their writes: sorted by (tablespace, page), consecutive pages of one tablespace in one run of at
    most `max_pages`. With max_pages <= 1 every entry is a run of its own, in the given order."""
    if max_pages <= 1 or len(entries) < 2:
        return [[e] for e in entries]
    ordered = sorted(entries, key=lambda e: (int(space_of[e[0]]), e[0]))
    runs = [[ordered[0]]]
    for e in ordered[1:]:
        run = runs[-1]
        last = run[-1][0]
        if e[0] == last + 1 and space_of[e[0]] == space_of[last] and len(run) < max_pages:
            run.append(e)
        else:
            runs.append([e])
    return runs


def log_block_bytes(bytes_: int) -> int:
    """Bytes of redo as whole 512-byte log blocks written (one block at least)."""
    return max(512, -(-bytes_ // 512) * 512)


class FilIO:
    """Page-granular I/O of the InnoDB files."""

    def __init__(self, env, fs: Filesystem, n_data_files: int, page_size_bytes: int, flush_method: str,
                 counters, page_cache_bytes: int = 0, n_pages: int = 0, native_aio: bool = True,
                 write_io_threads: int = 4, dblwr_in_data_file: bool = False, datasync: bool = False,
                 log_o_sync: bool = True, log_fs: Filesystem | None = None,
                 redo_in_data_writes: bool = True, access: FileAccess | None = None) -> None:
        self.env = env
        self.fs = fs
        self.dev: Device = fs.device
        self.n_data_files = n_data_files
        self.page_size = page_size_bytes
        self.access = access = access or file_access(flush_method)
        self.direct = access.data_direct
        self.write_through = access.data_write_through
        # The computed single-page path (MySQL's; MariaDB, the only server with write-through or
        # fast, has none) skips the fsync under nosync/littlesync; the SimPy paths fsync buffered
        # files even then: page-cache writeback is modelled only at fsync (models.file_access).
        self.data_fsync = flush_method not in NO_DATA_FSYNC
        # The file the doublewrite blocks go to: ibdata1, a data file itself without file-per-table.
        self.ibdata = fs.files[0] if dblwr_in_data_file else fs.files[n_data_files]
        self.tally = Tally()                   # filesystem lock wait of InnoDB's own writes
        self.host_s = self.dev.profile.host_overhead_s
        self.fsync_cpu_s = fs.spec.costs.fsync_cpu_s
        # An fsync without a journal commit ends with a cache flush (barriers on, volatile cache).
        self.cache_flush = fs.spec.barriers and self.dev.profile.volatile_write_cache
        # The redo log's files: on the data device, or on a device of their own (log_fs, with its
        # own journal): innodb_log_group_home_dir on other storage.
        log_fs = log_fs or fs
        self.log_dev: Device = log_fs.device
        self.log_journal = log_fs.journal
        self.log_host_s = self.log_dev.profile.host_overhead_s
        self.log_cache_flush = fs.spec.barriers and self.log_dev.profile.volatile_write_cache
        self.log_costs = log_fs.spec.costs
        self.counters = counters               # Innodb_data_writes, Innodb_data_fsyncs, Innodb_os_log_fsyncs
        self.redo_in_data_writes = redo_in_data_writes
        self.datasync = datasync               # fdatasync() instead of fsync()
        self.log_o_sync = log_o_sync           # O_DSYNC opens the log O_SYNC (MySQL), not O_DSYNC
        self.journaled = fs.spec.kind != "raw"
        self.tick_s = fs.spec.costs.timestamp_granularity_s
        self._ticks: dict[str, int] = {}       # computed paths: file -> timestamp tick of its last write
        self._meta_dirty: set[str] = set()     # files whose timestamps wait for a commit
        self.binlog_unsynced_bytes = 0         # appended to the binlog since its last fsync
        cache_pages = page_cache_bytes // page_size_bytes
        self.os_cache = (OsPageCache(cache_pages, n_pages)
                         if not self.direct and cache_pages >= 1 and n_pages >= 1 else None)
        costs = fs.spec.costs
        self.copy_s = costs.copy_base_s + costs.copy_per_page_s * max(1, page_size_bytes // PAGE_4K)
        # innodb_use_native_aio = OFF: the write I/O handler threads (a FIFO pool).
        self.io_threads = None if native_aio else simpy.Resource(env, capacity=max(1, write_io_threads))
        self._written = env.event().succeed()   # completion of a write that is done when submitted
        # Pages one merged request may carry (1: no merging).
        merges = self.dev.profile.merge_adjacent_writes and self.direct and native_aio
        self.merge_pages = max(1, MAX_MERGED_BYTES // page_size_bytes) if merges else 1

    def file_of_space(self, space_id: int):
        return self.fs.files[(space_id - 1) % self.n_data_files]

    # -- SimPy paths -----------------------------------------------------------------------------

    def submit_page(self, space_id: int, n_pages: int = 1):
        """One data page (or `n_pages` adjacent ones merged below InnoDB, see `contiguous_runs`) to
        its tablespace, an asynchronous fil_io (buf_flush_write_block_low,
        buf_dblwr_write_block_to_datafile). A SimPy generator run by the flushing thread: with
        native AIO it is the io_submit (os_aio_linux_dispatch) and its inode-lock steps; a buffered
        file is written in the call, as Linux does for io_submit on a file without O_DIRECT;
        without native AIO it only queues the request for the I/O threads. Returns the event of
        the write's completion."""
        inode = self.file_of_space(space_id)
        if self.io_threads is not None:
            return self.env.process(self._write_by_io_thread(inode))
        if self.write_through:
            return self.env.process(self._write_through(inode, self.page_size * n_pages))
        if self.direct:
            return (yield from self.fs.direct_write(inode, self.page_size * n_pages, self.tally,
                                                    submit_only=True))
        yield from self.fs.buffered_write(inode, self.page_size, self.tally)
        return self._written

    def _write_through(self, inode, size_bytes: int):
        """A write to a file opened O_DSYNC (MariaDB 11.0+ innodb_data_file_write_through): the
        write, then what fdatasync() of an overwrite costs, before it completes. A buffered write
        goes to the device at once (the page cache keeps nothing unwritten)."""
        if self.direct:
            yield from self.fs.direct_write(inode, size_bytes, self.tally)
        else:
            yield from self.fs.buffered_write(inode, size_bytes, self.tally)
        yield from self.fs.fsync(inode, self.tally, datasync=True)

    def _write_by_io_thread(self, inode):
        """Simulated AIO: wait for a free write I/O thread, which writes the page synchronously."""
        with self.io_threads.request() as slot:
            yield slot
            yield from self._write(inode, self.page_size)

    def write_ibdata(self, size_bytes: int):
        """A synchronous write to ibdata1 (the doublewrite blocks); a SimPy generator."""
        self.counters.add("Innodb_data_writes")
        return self._write(self.ibdata, size_bytes)

    def _write(self, inode, size_bytes: int):
        """The filesystem path's generator itself (callers `yield from` it)."""
        if self.write_through:
            return self._write_through(inode, size_bytes)
        if self.direct:
            return self.fs.direct_write(inode, size_bytes, self.tally)
        return self.fs.buffered_write(inode, size_bytes, self.tally)

    def fsync_ibdata(self):
        """fil_flush(TRX_SYS_SPACE): the doublewrite area after its write (with innodb_doublewrite =
        fast too; never with write-through)."""
        if self.access.dblwr_fsync:
            self.counters.add("Innodb_data_fsyncs")
            yield from self.fs.fsync(self.ibdata, self.tally, self.datasync)

    def fsync_data_files(self):
        """fil_flush_file_spaces(FIL_TABLESPACE): fsync every data file in turn (none with
        innodb_doublewrite = fast or write-through, fil_space_t::flush_low)."""
        if not self.access.data_fsync:
            return
        for inode in self.fs.files[: self.n_data_files]:
            self.counters.add("Innodb_data_fsyncs")
            yield from self.fs.fsync(inode, self.tally, self.datasync)

    def write_checkpoint_block(self):
        """log_group_checkpoint: 512 bytes into the first log file's header, then flushed."""
        done = self.log_flush_done_s(self.env.now, 512, append=False)
        yield self.env.timeout(done - self.env.now)

    # -- computed paths (no SimPy) ---------------------------------------------------------------

    def read_done_s(self, now_s: float) -> float:
        """A data page read issued at now_s (buf_read_page -> fil_io, synchronous for the reader)."""
        return self.dev.schedule(now_s, READ, self.page_size) + self.host_s

    def _touch(self, name: str, t_s: float) -> None:
        """A write to file `name` at t_s (computed paths): a new tick dirties its timestamps."""
        if self.journaled:
            tick = math.floor(t_s / self.tick_s)
            if self._ticks.get(name) != tick:
                self._ticks[name] = tick
                self._meta_dirty.add(name)

    def _sync_done_s(self, name: str, t_s: float, metadata: bool) -> float:
        """The filesystem's part of syncing file `name` from t_s (computed paths): the journal
        commit when its timestamps changed and the sync covers them (fsync, O_SYNC), else a cache
        flush when barriers are on and the device has a volatile write cache."""
        on_log = name == "log"
        if metadata and name in self._meta_dirty:
            self._meta_dirty.discard(name)
            return (self.log_journal if on_log else self.fs.journal).commit_done_s(t_s)
        if on_log:
            return self.log_dev.schedule_flush(t_s) if self.log_cache_flush else t_s
        return self.dev.schedule_flush(t_s) if self.cache_flush else t_s

    def count_log_write(self) -> None:
        """One write() of redo (log_group_write_buf): Innodb_log_writes, and in MySQL also
        Innodb_data_writes."""
        vals = self.counters.values
        vals["Innodb_log_writes"] += 1
        if self.redo_in_data_writes:
            vals["Innodb_data_writes"] += 1

    def log_flush_done_s(self, now_s: float, bytes_: int, append: bool = True) -> float:
        """log_write_up_to with flush: write() the log bytes, then fsync the log file (fil_flush).

        Writes go in 512-byte log blocks. The fsync commits the journal when the write moved the
        log file's timestamps to a new tick, unless it is fdatasync(); otherwise it carries a cache
        flush when barriers are on and the device has a volatile write cache. With O_DSYNC the
        write itself is synchronous and no fsync follows: MySQL opens the log O_SYNC, which syncs
        the timestamps too; MariaDB opens it O_DSYNC (os_file_create_func: "We let O_DSYNC only affect
        log files"), which syncs the data only, as fdatasync() does. The write continues
        the log's sequential stream (Device.schedule_append) unless `append` is False (the
        checkpoint block in the first file's header). Counts the write: a redo write, or the
        checkpoint block (in MySQL a data write, not a log write).
        """
        size = log_block_bytes(bytes_)
        if append:
            t = self.log_dev.schedule_append(now_s, size) + self.log_host_s
        else:
            t = self.log_dev.schedule_sized(now_s, WRITE, size) + self.log_host_s
        self._touch("log", now_s)
        if append:
            self.count_log_write()
        elif self.redo_in_data_writes:
            self.counters.values["Innodb_data_writes"] += 1
        if self.access.log_write_through:
            return self._sync_done_s("log", t, self.log_o_sync)
        return self._log_fsync_done_s(t)

    def _log_fsync_done_s(self, t_s: float) -> float:
        """fsync() of the log once its bytes are on the device at t_s (fil_flush): counted in
        Innodb_os_log_fsyncs and Innodb_data_fsyncs; a journal commit or a cache flush."""
        vals = self.counters.values
        vals["Innodb_os_log_fsyncs"] += 1
        vals["Innodb_data_fsyncs"] += 1
        return self._sync_done_s("log", t_s + self.fsync_cpu_s, not self.datasync)

    def log_write_done_s(self, now_s: float, bytes_: int) -> float:
        """MySQL 8.0's log_writer: one write() of the redo ready (log_writer_write_buffer), no fsync.

        MySQL never opens its log O_DIRECT, so the write is a copy into the page cache and the
        device sees the bytes at the next fsync (log_fsync_done_s); with O_DSYNC the file is opened
        O_SYNC and the write waits for the device and the sync, as log_flush_done_s's write does.
        Counts the write (Innodb_log_writes)."""
        size = log_block_bytes(bytes_)
        self._touch("log", now_s)
        self.count_log_write()
        if self.access.log_write_through:
            t = self.log_dev.schedule_append(now_s, size) + self.log_host_s
            return self._sync_done_s("log", t, self.log_o_sync)
        return self.log_costs.copy_done_s(now_s, size)

    def log_fsync_done_s(self, now_s: float, bytes_: int) -> float:
        """MySQL 8.0's log_flusher: fsync the log (log_flush_low, fil_flush_file_redo) after the
        writes of `bytes_` of redo since the last one: the page cache writes them back, then the
        sync commits the journal or flushes the device cache as log_flush_done_s's fsync does.
        With O_DSYNC there is no fsync (do_flush is false) and the writes are on the device already."""
        if self.access.log_write_through:
            return now_s
        written_back_s = self.log_dev.schedule_append(now_s, log_block_bytes(bytes_)) + self.log_host_s
        return self._log_fsync_done_s(written_back_s)

    def binlog_group_done_s(self, now_s: float, nbytes: int, sync: bool) -> float:
        """One binary log group commit (MYSQL_BIN_LOG::ordered_commit, 5.6+): the flush stage
        appends the group's events to the binlog file (a buffered write: a copy into the page
        cache); with `sync` the sync stage fsyncs it: the data appended since the last fsync is
        written back, then the filesystem journal commits the file's new size (one 4 KiB journal
        write), and the device cache is flushed when barriers are on and it caches writes. The
        binlog has its own file, written only by the group's leader, so no InnoDB inode lock is
        involved. The binlog data and the journal write each continue a sequential stream
        (Device.schedule_append)."""
        t = self.fs.spec.costs.copy_done_s(now_s, nbytes)
        self.binlog_unsynced_bytes += nbytes
        if not sync:
            return t
        size = max(PAGE_4K, -(-self.binlog_unsynced_bytes // PAGE_4K) * PAGE_4K)
        self.binlog_unsynced_bytes = 0
        t = self.dev.schedule_append(t, size) + self.host_s
        t += self.fsync_cpu_s
        t = self.dev.schedule_append(t, PAGE_4K) + self.host_s
        if self.cache_flush:
            t = self.dev.schedule_flush(t)
        return t

    def sync_page_write_done_s(self, now_s: float, doublewrite: bool) -> float:
        """buf_flush_single_page_from_LRU (5.6): one page written synchronously.

        With doublewrite: the page to its doublewrite slot, fsync ibdata, the page to its file,
        fsync the file (buf_dblwr_write_single_page). Without: the write and the file's fsync.
        """
        t = now_s
        ps = self.page_size
        for name in (("ibdata", "data") if doublewrite else ("data",)):
            self.counters.add("Innodb_data_writes")
            self._touch(name, t)
            t = self.dev.schedule(t, WRITE, ps) + self.host_s
            if self.data_fsync:
                self.counters.add("Innodb_data_fsyncs")
                t = self._sync_done_s(name, t + self.fsync_cpu_s, not self.datasync)
        return t
