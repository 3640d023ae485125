"""raw / ext4 / XFS between the writer and the device: per-inode locks by kernel era, data files.

Lock modes per path follow shared/research/fs-device.md section 1.5(a):

* ext4, kernel era "2012" (2.6.32/2.6.39, Oracle Linux 6.2 as in the seed):
  - O_DIRECT write: i_mutex held exclusively from submission to device completion (generic DIO path
    with DIO_LOCKING; commit 7fb5409df092; the overwrite fast path 4bd809dbbf17 came with 3.6).
    That holds for a synchronous pwrite() (IObench, InnoDB's doublewrite and its I/O threads
    without native AIO). An asynchronous one (io_submit, InnoDB's default on Linux) holds it only
    while the write is submitted: generic_file_aio_write drops i_mutex when
    __generic_file_aio_write returns, and for an AIO write inside i_size the 2.6.3x direct_io_worker
    (fs/direct-io.c, dio->is_async) returns -EIOCBQUEUED without waiting for the bios
    (ext4_ext_direct_IO sets up the end_io callback for that case).
  - O_DIRECT read: i_mutex taken exclusively and held over the submission, dropped before the wait
    (fs/direct-io.c of that era: "taken briefly, initially, during a direct read"); skipped with
    `dioread_nolock` (b7adc1f363e7, 2.6.33).
  - write(): i_mutex exclusive over the copy into the page cache; fsync(): data writeback outside
    i_mutex, then `->fsync` (ext4_sync_file, jbd2 commit wait) inside it (VFS before 02c24a82187d).
* ext4 "modern" (>= 5.6): aligned O_DIRECT overwrites and reads take i_rwsem shared (bc6385dab125,
  16c54688592c); fsync waits for the jbd2 commit without the inode lock.
* XFS "2012": O_DIRECT takes IOLOCK shared; every write takes ILOCK exclusively for a short
  block-mapping / size-update step (before 507630b29f13) whose hand-off cost grows with the number
  of spinning contenders (section 1.5(c)). Buffered write() takes IOLOCK exclusive; writeback of the
  data takes the same ILOCK step; fsync logs the inode under ILOCK exclusive when its timestamps changed.
* XFS "modern": the mapping step takes ILOCK shared; `nobarrier` no longer exists (1c02d502c208).

The inode is dirty for the journal when a write changed its timestamp, which moves at the kernel
tick (`timestamp_granularity_s`): at most one commit per tick per file (section 1.5(b)). O_DIRECT
writes update it as buffered ones do (file_update_time, from __generic_file_aio_write on 2.6.3x
ext4 and xfs_file_aio_write_checks on XFS). fdatasync() commits only what reading the data back
needs (ext4_sync_file: i_datasync_tid; xfs_file_fsync: fields other than XFS_ILOG_TIMESTAMP), and
the files here are overwritten in place, so it never waits for a commit for them.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from models.device import READ, WRITE, Device
from models.errors import InputError
from models.locks import EXCL, SHARED, RWLock
from models.queueing import lock_handoff_s

FILESYSTEMS = ("raw", "ext4", "xfs")
KERNELS = ("2012", "modern")
IO_MODES = ("direct", "fsync")
MOUNT_OPTIONS = ("defaults", "noatime", "nodiratime", "relatime", "nobarrier", "barrier",
                 "dioread_nolock", "discard")
# The mount options of a scenario that names none, by kernel era. 2012: the seed's ("both
# filesystems are mounted with the following options: noatime,nodiratime,nobarrier",
# shared/seeds/000_3eea224cbcc51dec.txt). modern: the same less nobarrier, which XFS refuses
# (1c02d502c208) and which ext4 does not default to (barrier=1): cache flushes on fsync.
ERA_MOUNT_OPTIONS = {"2012": "noatime,nodiratime,nobarrier", "modern": "noatime,nodiratime"}
PAGE_4K = 4096


@dataclass(frozen=True)
class FsCosts:
    """CPU costs of filesystem paths, in seconds. Defaults: fs-device.md 5.2-5.4 unless noted."""

    # ext4 2012 O_DIRECT read: i_mutex held over submission (page pinning, block mapping, bio
    # submission). Fixed part + per 4K page. 1/(base + per_page) = 70K reads/s at 4K is the seed's
    # ext4 4K read ceiling; the split between fixed and per-page work is an assumption (UNVERIFIED).
    dio_read_submit_base_s: float = 10.0e-6
    dio_read_submit_per_page_s: float = 4.3e-6
    # ext4 2012 asynchronous (io_submit) O_DIRECT write: i_mutex held over the same submission steps
    # and released once the bios are queued. Assumed equal to the read's figures (same work: pin
    # the pages, map the blocks, build and submit the bios); nothing measures the write side.
    dio_write_submit_base_s: float = 10.0e-6
    dio_write_submit_per_page_s: float = 4.3e-6
    # XFS 2012 ILOCK exclusive step: s(n) = s0 + s1 * min(n, n_max) (fs-device.md 5.2).
    ilock_base_s: float = 5.0e-6
    ilock_per_waiter_s: float = 4.6e-6
    ilock_max_waiters: int = 15
    # Shared ILOCK mapping step (XFS reads; modern XFS writes).
    ilock_shared_s: float = 1.0e-6
    # Buffered write(): copy into the page cache and timestamp update (fs-device.md 5.2: 5 us at 4K).
    copy_base_s: float = 3.0e-6
    copy_per_page_s: float = 2.0e-6
    # ->fsync work that is not device I/O (fs-device.md 5.2, t_flush 35-50 us; low end taken).
    fsync_cpu_s: float = 35.0e-6
    # Journal commit (jbd2 commit / XFS log force): CPU plus journal blocks then a commit block.
    commit_cpu_s: float = 20.0e-6
    commit_writes: int = 2
    commit_write_bytes: int = 4096
    # Kernel tick: timestamp granularity, hence how often an overwritten inode needs logging.
    timestamp_granularity_s: float = 1.0e-3

    def copy_done_s(self, now_s: float, nbytes: int) -> float:
        """When a buffered write() of nbytes started at now_s ends: its copy into the page cache,
        a page at least."""
        return now_s + self.copy_base_s + self.copy_per_page_s * max(1, -(-nbytes // PAGE_4K))


@dataclass(frozen=True)
class FsSpec:
    """Which filesystem, kernel era and mount options; validated on construction via make_spec."""

    kind: str
    kernel: str
    mount_options: frozenset[str]
    costs: FsCosts = field(default_factory=FsCosts)

    @property
    def barriers(self) -> bool:
        """Cache flushes on fsync/commit unless mounted nobarrier (ignored by modern XFS)."""
        return "nobarrier" not in self.mount_options

    @property
    def ext4_dioread_nolock(self) -> bool:
        return self.kind == "ext4" and "dioread_nolock" in self.mount_options


def mount_options_for(given: str | None, kind: str, kernel: str) -> str:
    """The mount options one filesystem runs with: none on a raw device, else those given, else
    its kernel era's (ERA_MOUNT_OPTIONS)."""
    if kind == "raw":
        return ""
    return ERA_MOUNT_OPTIONS[kernel] if given is None else given


def make_spec(kind: str, kernel: str, mount_options: str | list[str] | tuple[str, ...] = "",
              source: str = "filesystem", costs: FsCosts | None = None) -> FsSpec:
    """Validate the filesystem choice; errors name the field and what is allowed."""
    if kind not in FILESYSTEMS:
        raise InputError(source, "filesystem", f"{kind!r} is not known", ", ".join(FILESYSTEMS))
    if kernel not in KERNELS:
        raise InputError(source, "kernel", f"{kernel!r} is not a known kernel era", ", ".join(KERNELS))
    if isinstance(mount_options, str):
        opts = [o.strip() for o in mount_options.split(",") if o.strip()]
    else:
        opts = [str(o).strip() for o in mount_options]
    for o in opts:
        if o not in MOUNT_OPTIONS:
            raise InputError(source, "mount_options", f"{o!r} is not a known option",
                             ", ".join(MOUNT_OPTIONS))
    if kind == "raw" and opts:
        raise InputError(source, "mount_options", "a raw device has no mount options", "none")
    if "dioread_nolock" in opts and kind != "ext4":
        raise InputError(source, "mount_options", "dioread_nolock is an ext4 option", "ext4 only")
    if kind == "xfs" and kernel == "modern" and ("nobarrier" in opts or "barrier" in opts):
        raise InputError(source, "mount_options",
                         "XFS removed the barrier/nobarrier options (commit 1c02d502c208; ignored "
                         "from 4.13, refused later)", "drop nobarrier, or use kernel = \"2012\"")
    return FsSpec(kind, kernel, frozenset(opts), costs or FsCosts())


@dataclass
class Inode:
    """One data file: its locks and whether its timestamps wait for the journal."""

    index: int
    lock: RWLock                 # ext4 i_mutex / i_rwsem, or XFS IOLOCK
    ilock: RWLock | None         # XFS ILOCK
    mtime_tick: int = -1
    sync_tid: int = 0            # journal transaction holding the inode's last change (i_sync_tid)
    writers_in_flight: int = 0   # writes between mapping and completion (XFS ILOCK contenders)
    submitting: int = 0          # asynchronous writes in their submission step (their contenders)
    dirty_bytes: list = field(default_factory=list)   # buffered writes not yet written back


class Journal:
    """jbd2 (ext4) / the XFS log: transactions by id, committed one at a time.

    Mirrors jbd2_log_start_commit(tid) + jbd2_log_wait_commit(tid) as ext4_sync_file calls them
    (2.6.32): changes join the running transaction; a commit closes it, so one commit covers every
    inode changed in it, and an fsync whose inode's tid is already committed waits for nothing.
    The journal is a contiguous area written in order, so its blocks continue one sequential
    stream (Device.schedule_append).
    """

    def __init__(self, env, device: Device, costs: FsCosts, host_s: float, barriers: bool) -> None:
        self.env = env
        self.device = device
        self.costs = costs
        self.host_s = host_s
        self.barriers = barriers
        self.running_tid = 1       # transaction that new changes join
        self.committed_tid = 0     # last transaction on the device
        self._waiters: list = []   # (tid, event)
        self._committing = False
        self.commits = 0

    def needs_commit(self, tid: int) -> bool:
        return tid > self.committed_tid

    def wait_commit(self, tid: int):
        """Event fired once transaction `tid` is committed; starts its commit if none runs.

        Already committed: an event that has fired (jbd2_log_wait_commit returns at once).
        """
        ev = self.env.event()
        if tid <= self.committed_tid:
            return ev.succeed()
        self._waiters.append((tid, ev))
        if not self._committing:
            self._committing = True
            self.env.process(self._run())
        return ev

    def commit_done_s(self, t_s: float) -> float:
        """When a commit started at `t_s` is on the device, computed without SimPy for the paths
        that cannot wait on events (the redo log's sync, single-page flushes): CPU, journal blocks,
        commit block, then the cache flush when barriers are on. It neither joins nor delays the
        SimPy commits of the data files (simplified: one journal serialises both in the kernel)."""
        c, dev = self.costs, self.device
        t_s += c.commit_cpu_s
        for _ in range(c.commit_writes):
            t_s = dev.schedule_append(t_s, c.commit_write_bytes) + self.host_s
        if self.barriers and dev.profile.volatile_write_cache:
            t_s = dev.schedule_flush(t_s)
        self.commits += 1
        return t_s

    def _run(self):
        env, dev, c = self.env, self.device, self.costs
        while any(tid > self.committed_tid for tid, _ in self._waiters):
            tid = self.running_tid
            self.running_tid += 1          # close the transaction; later changes join the next
            yield env.timeout(c.commit_cpu_s)
            for _ in range(c.commit_writes):
                # Journal blocks, then the commit block once they are on the device.
                done = dev.schedule_append(env.now, c.commit_write_bytes) + self.host_s
                yield env.timeout(done - env.now)
            if self.barriers and dev.profile.volatile_write_cache:
                yield dev.flush()
            self.commits += 1
            self.committed_tid = tid
            still = []
            for wtid, ev in self._waiters:
                if wtid <= tid:
                    ev.succeed()
                else:
                    still.append((wtid, ev))
            self._waiters = still
        self._committing = False


class Tally:
    """Per-I/O accounting filled in by the filesystem paths."""

    __slots__ = ("lock_wait_s", "pid")

    def __init__(self, pid: int | None = None) -> None:
        self.lock_wait_s = 0.0
        self.pid = pid            # the submitting process, for the host's block layer (models.host_io)


class Filesystem:
    """Data files on one filesystem over one device; SimPy generator paths for each I/O kind."""

    def __init__(self, env, device: Device, spec: FsSpec, n_files: int, cpu_cores: int | None = None,
                 host=None) -> None:
        if n_files < 1:
            raise ValueError("n_files must be >= 1")
        self.env = env
        self.device = device
        # models.host_io.HostQueue: the host's block layer between a process's I/O and the device
        # (iobench); None: the device alone (the journal's writes never go through it)
        self.host = host
        self.spec = spec
        self.host_s = device.profile.host_overhead_s
        is_xfs = spec.kind == "xfs"
        lock_name = "iolock" if is_xfs else ("i_mutex" if spec.kernel == "2012" else "i_rwsem")
        self.files = [
            Inode(i, RWLock(env, f"file{i}.{lock_name}"), RWLock(env, f"file{i}.ilock") if is_xfs else None)
            for i in range(n_files)
        ]
        self.journal = Journal(env, device, spec.costs, self.host_s, spec.barriers)
        # CPU cores for the copy out of the page cache (None: unlimited). A page-cache hit is CPU
        # work only, so without cores N processes would read at N / copy time (IObench's fsync-mode
        # reads of a cached data set: tens of millions per second).
        self.cores: list[float] | None = None if cpu_cores is None else [0.0] * max(1, cpu_cores)

    def _cpu(self, work_s: float):
        """The event of `work_s` of CPU on the first core to free (FCFS, busy-until; the user
        threads' cores work the same way)."""
        env = self.env
        cores = self.cores
        if cores is None:
            return env.timeout(work_s)
        free = heapq.heappop(cores)
        end = (env.now if free < env.now else free) + work_s
        heapq.heappush(cores, end)
        return env.timeout(end - env.now)

    # -- helpers ---------------------------------------------------------------------------

    def _waited(self, ev, tally: Tally):
        """Wait for a lock's grant event, counting the time as lock wait."""
        t0 = self.env.now
        yield ev
        tally.lock_wait_s += self.env.now - t0

    def _device_io(self, op: str, size: int, tally: Tally | None = None):
        """The event of one I/O's completion on the device, host path included (callers yield it);
        through the host's block layer when there is one and the I/O has a submitting process."""
        env = self.env
        if self.host is not None and tally is not None and tally.pid is not None:
            return self.host.io(tally.pid, op, size, self.host_s)
        now = env.now
        return env.timeout(self.device.schedule_sized(now, op, size) + self.host_s - now)

    def _ilock_hold_s(self, inode: Inode, exclusive: bool, in_flight: int | None = None) -> float:
        """How long the XFS ILOCK step holds the lock once granted.

        Exclusive: s(n) with n = the other writes in flight on the inode: each of them works the
        same lock cache lines (mapping at submission, size update at completion), which is what
        makes a hand-off cost grow with the contending CPUs (fs-device.md 1.3, 5.2). Shared: a
        short fixed step. `in_flight` replaces the inode's count of synchronous writers in flight
        (an asynchronous submission passes the writes being submitted).
        """
        c = self.spec.costs
        if not exclusive:
            return c.ilock_shared_s
        n = inode.writers_in_flight if in_flight is None else in_flight
        return lock_handoff_s(c.ilock_base_s, c.ilock_per_waiter_s, max(0, n - 1), c.ilock_max_waiters)

    def _ilock_step(self, inode: Inode, tally: Tally, exclusive: bool):
        """XFS ILOCK critical section: exclusive with spin hand-off cost, or a short shared one."""
        mode = EXCL if exclusive else SHARED
        ev = inode.ilock.acquire(mode)
        if ev is not None:
            yield from self._waited(ev, tally)
        yield self.env.timeout(self._ilock_hold_s(inode, exclusive))
        inode.ilock.release(mode)

    def _touch_timestamps(self, inode: Inode) -> None:
        """file_update_time: a new tick dirties the inode into the running transaction."""
        tick = math.floor(self.env.now / self.spec.costs.timestamp_granularity_s)
        if tick != inode.mtime_tick:
            inode.mtime_tick = tick
            inode.sync_tid = self.journal.running_tid

    # -- O_DIRECT --------------------------------------------------------------------------

    def direct_read(self, inode: Inode, size: int, tally: Tally):
        kind, era, c = self.spec.kind, self.spec.kernel, self.spec.costs
        if kind == "raw" or self.spec.ext4_dioread_nolock:
            yield self._device_io(READ, size, tally)
        elif kind == "ext4" and era == "2012":
            ev = inode.lock.acquire(EXCL)
            if ev is not None:
                yield from self._waited(ev, tally)
            pages = max(1, size // PAGE_4K)
            yield self.env.timeout(c.dio_read_submit_base_s + c.dio_read_submit_per_page_s * pages)
            inode.lock.release(EXCL)
            yield self._device_io(READ, size, tally)
        elif kind == "ext4":
            ev = inode.lock.acquire(SHARED)
            if ev is not None:
                yield from self._waited(ev, tally)
            yield self._device_io(READ, size, tally)
            inode.lock.release(SHARED)
        else:  # xfs, either era: IOLOCK shared, ILOCK shared for the mapping
            ev = inode.lock.acquire(SHARED)
            if ev is not None:
                yield from self._waited(ev, tally)
            yield from self._ilock_step(inode, tally, exclusive=False)
            yield self._device_io(READ, size, tally)
            inode.lock.release(SHARED)

    def direct_write(self, inode: Inode, size: int, tally: Tally, submit_only: bool = False):
        """An O_DIRECT write (SimPy generator).

        Synchronous (pwrite, the default): the inode locks are held until the device completes it.
        `submit_only` (io_submit): the generator ends once the write is submitted and returns the
        event of its completion, which the submitter does not wait for; the inode locks cover the
        submission only (generic_file_aio_write / the 2.6.3x direct_io_worker returning
        -EIOCBQUEUED; xfs_file_dio_aio_write): ext4 2012 holds i_mutex over the submission work
        (`dio_write_submit_*`), and the XFS ILOCK step's hand-off cost counts the writes being
        submitted to the inode at that moment instead of the synchronous writers in flight.
        Every data-page write takes this path, so `_ilock_step` is written out here (the same
        events in the same order). As on every path, a lock is taken as `lock.acquire` then, only
        if it is not granted at once, `_waited`: an uncontended lock costs no generator (3-12% of
        the 8-instance DBT2 replay's wall time in alternating runs)."""
        kind, era = self.spec.kind, self.spec.kernel
        if kind == "raw":
            done = self._device_io(WRITE, size, tally)
            if submit_only:
                return done
            yield done
            return
        self._touch_timestamps(inode)
        lock = inode.lock
        if kind == "ext4":
            mode = EXCL if era == "2012" else SHARED
            ev = lock.acquire(mode)
            if ev is not None:
                yield from self._waited(ev, tally)
            if submit_only:
                if mode == EXCL:
                    c = self.spec.costs
                    yield self.env.timeout(c.dio_write_submit_base_s
                                           + c.dio_write_submit_per_page_s * max(1, size // PAGE_4K))
                done = self._device_io(WRITE, size, tally)
                lock.release(mode)
                return done
            yield self._device_io(WRITE, size, tally)
            lock.release(mode)
            return
        ev = lock.acquire(SHARED)
        if ev is not None:
            yield from self._waited(ev, tally)
        if submit_only:
            inode.submitting += 1
        else:
            inode.writers_in_flight += 1
        exclusive = era == "2012"
        imode = EXCL if exclusive else SHARED
        ev = inode.ilock.acquire(imode)
        if ev is not None:
            yield from self._waited(ev, tally)
        yield self.env.timeout(self._ilock_hold_s(inode, exclusive,
                                                  inode.submitting if submit_only else inode.writers_in_flight))
        inode.ilock.release(imode)
        if submit_only:
            inode.submitting -= 1
            done = self._device_io(WRITE, size, tally)
            lock.release(SHARED)
            return done
        yield self._device_io(WRITE, size, tally)
        inode.writers_in_flight -= 1
        lock.release(SHARED)

    # -- buffered: write() then fsync(), and buffered reads ---------------------------------

    def buffered_read(self, inode: Inode, size: int, tally: Tally, cache_hit: bool):
        """Page-cache read: ext4 takes no inode lock, XFS takes IOLOCK shared."""
        c = self.spec.costs
        xfs = self.spec.kind == "xfs"
        if xfs:
            ev = inode.lock.acquire(SHARED)
            if ev is not None:
                yield from self._waited(ev, tally)
        if cache_hit:
            yield self._cpu(c.copy_base_s + c.copy_per_page_s * max(1, size // PAGE_4K))
        else:
            yield self._device_io(READ, size, tally)
        if xfs:
            inode.lock.release(SHARED)

    def write_fsync(self, inode: Inode, size: int, tally: Tally):
        """write() of `size` bytes into the page cache, then fsync() of the file."""
        env, c, spec = self.env, self.spec.costs, self.spec
        xfs2012 = spec.kind == "xfs" and spec.kernel == "2012"
        # write(): exclusive inode lock (ext4 i_mutex / XFS IOLOCK) over the copy.
        ev = inode.lock.acquire(EXCL)
        if ev is not None:
            yield from self._waited(ev, tally)
        yield env.timeout(c.copy_base_s + c.copy_per_page_s * max(1, size // PAGE_4K))
        self._touch_timestamps(inode)
        inode.lock.release(EXCL)
        # fsync(): data writeback, outside the inode lock.
        inode.writers_in_flight += 1
        if xfs2012:
            yield from self._ilock_step(inode, tally, exclusive=True)
        yield self._device_io(WRITE, size, tally)
        inode.writers_in_flight -= 1
        yield from self._sync_file(inode, tally)

    def _sync_file(self, inode: Inode, tally: Tally, datasync: bool = False):
        """The filesystem's part of fsync() (fdatasync() with `datasync`), once the data is written
        back. A commit flushes the device cache itself; without one, a cache flush is sent when
        barriers are on (ext4_sync_file: jbd2_log_start_commit + jbd2_log_wait_commit, else
        blkdev_issue_flush; xfs_file_fsync likewise). fdatasync() of an overwritten file has no
        commit to wait for (module docstring)."""
        env, c, spec = self.env, self.spec.costs, self.spec
        flush_needed = spec.barriers and self.device.profile.volatile_write_cache
        if spec.kind == "raw":
            if flush_needed:
                yield self.device.flush()
            return
        if spec.kind == "ext4":
            held = spec.kernel == "2012"   # VFS held i_mutex around ->fsync before 3.1
            if held:
                ev = inode.lock.acquire(EXCL)
                if ev is not None:
                    yield from self._waited(ev, tally)
            yield env.timeout(c.fsync_cpu_s)
            tid = 0 if datasync else inode.sync_tid        # read once the lock is held
            if self.journal.needs_commit(tid):
                yield self.journal.wait_commit(tid)
            elif flush_needed:
                yield self.device.flush()
            if held:
                inode.lock.release(EXCL)
            return
        committing = not datasync and self.journal.needs_commit(inode.sync_tid)
        mode = EXCL if (committing and spec.kernel == "2012") else SHARED
        ev = inode.ilock.acquire(mode)
        if ev is not None:
            yield from self._waited(ev, tally)
        yield env.timeout(c.fsync_cpu_s)
        tid = 0 if datasync else inode.sync_tid            # read once the lock is held
        committed = self.journal.needs_commit(tid)
        if committed:
            yield self.journal.wait_commit(tid)
        inode.ilock.release(mode)
        if not committed and flush_needed:
            yield self.device.flush()

    # -- InnoDB's pattern: many writes, then one fsync per file --------------------------------

    def buffered_write(self, inode: Inode, size: int, tally: Tally):
        """pwrite() into the page cache (innodb_flush_method=fsync): the copy under the inode lock.

        The data reaches the device at the file's next fsync (`fsync`), as writeback would.
        """
        c = self.spec.costs
        ev = inode.lock.acquire(EXCL)
        if ev is not None:
            yield from self._waited(ev, tally)
        yield self.env.timeout(c.copy_base_s + c.copy_per_page_s * max(1, size // PAGE_4K))
        self._touch_timestamps(inode)
        inode.lock.release(EXCL)
        inode.dirty_bytes.append(size)

    def fsync(self, inode: Inode, tally: Tally, datasync: bool = False):
        """fsync() (fdatasync() with `datasync`) of one file: write back its dirty page-cache data,
        then the journal commit or a cache flush, with the inode-lock rules of `write_fsync`
        (ext4_sync_file / xfs_file_fsync)."""
        env = self.env
        dirty, inode.dirty_bytes = inode.dirty_bytes, []
        if dirty:
            now = env.now
            done = now
            for size in dirty:
                done = max(done, self.device.schedule_sized(now, WRITE, size))
            yield env.timeout(done + self.host_s - now)
        yield from self._sync_file(inode, tally, datasync)
