"""The InnoDB engine run: wires the models of the scenario's server version into one SimPy
environment and records the series. models/versions.py says which variant of each part a
version runs (redo limits, foreground behaviour, page cleaner, checkpoint writer, doublewrite).

`run(scenario)` is a pure function of the scenario: the same scenario and seed give the same
result bit for bit (every random draw comes from generators spawned from run.seed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from models.buf_flush import FlushBatches, Flusher
from models.buffer_pool import BufferPool
from models.checksum import page_checksum_s
from models.device import Device, DeviceProfile, load_profile
from models.doublewrite import DETECT_ONLY, Doublewrite56, Doublewrite80, DoublewriteMariaDB
from models.file_access import FAST
from models.fil import FilIO
from models.filesystem import Filesystem, FsSpec, make_spec, mount_options_for
from models.log_checkpointer import LogSys80
from models.log_sys import LogState, LogSys56, LogSys57
from models.log_sys_mariadb import LogSysMariaDB
from models.oltp import PageSampler, TxnProfile, WeightedPageSampler
from models.page_population import sysbench_page_weights, tpcc_page_weights
from models.page_cleaner import PageCleaner56
from models.page_cleaner_coordinator import PageCleanerCoordinator
from models.page_cleaner_mariadb import PageCleanerMariaDB
from models.recovery import pages_to_recover
from models.redo import RedoLimits, redo_limits
from models.server import COUNTERS, Counters, ServerSettings
from models.user_threads import UserThreads
from models.versions import BUF_POOL_SIZE_THRESHOLD, Version, startup_instances, version as version_of


GAUGES = ("lsn", "log_lsn_last_checkpoint", "log_lsn_buf_pool_oldest", "Innodb_buffer_pool_pages_dirty",
          "Innodb_buffer_pool_pages_free", "device_queue_depth", "fs_lock_wait_s",
          "buffer_flush_n_to_flush_requested", "buffer_flush_pct_for_lsn", "buffer_flush_avg_page_rate",
          "threads_in_log_check_margins", "trx_queue", "device_busy_s", "device_write_backlog",
          "recovery_pages")


@dataclass
class EngineResult:
    """Everything a run produced; sim.metrics derives series, stalls and the summary from it."""

    scenario: object
    settings: ServerSettings
    limits: RedoLimits
    profile: TxnProfile
    tick_s: float
    n_ticks: int
    warmup_s: float
    counters: np.ndarray            # (n_ticks, len(COUNTERS)) cumulative, sampled at tick ends
    gauges: np.ndarray              # (n_ticks, len(GAUGES))
    thread_s: np.ndarray            # (len(STATE_NAMES), n_ticks) thread-seconds per state
    commit_t: np.ndarray
    latency_s: np.ndarray
    n_instances: int
    n_pages: int
    frames: int
    redo_capacity_bytes: int
    device_units: int = 1           # the device profile's parallelism (for device_busy_pct)
    page_read_iops: float = 0.0     # the data device's random-read capacity for one page (crash recovery)
    warnings: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    final_checks: dict = field(default_factory=dict)
    log_threads: dict | None = None  # MySQL 8.0's log threads over the whole run (LogThreads.stats)


def settings_from(scn, profile: DeviceProfile | None = None) -> tuple[ServerSettings, list[str]]:
    """The engine's settings from a scenario, adjusting what the server adjusts (with its warning).
    `profile` is the scenario's device profile (loaded when not given)."""
    if profile is None:
        profile = load_profile(scn.hardware.device)
    s = scn.server
    v = version_of(s.version)
    warnings = list(getattr(scn, "notes", ()))
    inst = startup_instances(s.innodb_buffer_pool_size_bytes, s.innodb_buffer_pool_instances)
    if inst != s.innodb_buffer_pool_instances:
        warnings.append(f"Adjusting innodb_buffer_pool_instances from {s.innodb_buffer_pool_instances} to 1 "
                        f"since innodb_buffer_pool_size is less than {BUF_POOL_SIZE_THRESHOLD >> 20} MiB "
                        f"(the {v.label} server does the same at startup)")
    neighbors = s.innodb_flush_neighbors
    if v.is_mariadb and neighbors and not profile.rotational:
        # MariaDB 10.5+ buf_flush_try_neighbors: neighbours only when space->is_rotational()
        # (the device's /sys/block/DEV/queue/rotational, fil_node_t::find_metadata).
        neighbors = 0
    return ServerSettings(
        version=v.name,
        redo_log_capacity_bytes=s.innodb_redo_log_capacity_bytes,
        page_cleaners=max(1, min(s.innodb_page_cleaners, inst)) if v.cleaner in ("57", "80") else 1,
        flush_sync=s.innodb_flush_sync,
        idle_flush_pct=s.innodb_idle_flush_pct,
        doublewrite_pages=s.innodb_doublewrite_pages,
        page_size_bytes=s.innodb_page_size_bytes,
        buffer_pool_size_bytes=s.innodb_buffer_pool_size_bytes,
        buffer_pool_instances=inst,
        log_file_size_bytes=s.innodb_log_file_size_bytes,
        log_files_in_group=s.innodb_log_files_in_group,
        log_buffer_size_bytes=s.innodb_log_buffer_size_bytes,
        flush_log_at_trx_commit=s.innodb_flush_log_at_trx_commit,
        flush_log_at_timeout_s=float(s.innodb_flush_log_at_timeout_s),
        log_bin=s.log_bin,
        sync_binlog=s.sync_binlog,
        # MariaDB's binlog_commit_wait_count / _usec is the same wait: up to usec for count commits,
        # none when count is 0 (MYSQL_BIN_LOG::wait_for_sufficient_commits).
        binlog_group_commit_sync_delay_us=(
            (s.binlog_commit_wait_usec if s.binlog_commit_wait_count > 0 else 0) if v.is_mariadb
            else s.binlog_group_commit_sync_delay_us),
        binlog_group_commit_sync_no_delay_count=(
            s.binlog_commit_wait_count if v.is_mariadb else s.binlog_group_commit_sync_no_delay_count),
        thread_concurrency=s.innodb_thread_concurrency,
        thread_sleep_delay_us=s.innodb_thread_sleep_delay_us,
        adaptive_max_sleep_delay_us=s.innodb_adaptive_max_sleep_delay_us,
        io_capacity=s.innodb_io_capacity,
        io_capacity_max=s.innodb_io_capacity_max,
        adaptive_flushing=s.innodb_adaptive_flushing,
        adaptive_flushing_lwm_pct=s.innodb_adaptive_flushing_lwm,
        max_dirty_pages_pct=s.innodb_max_dirty_pages_pct,
        max_dirty_pages_pct_lwm=s.innodb_max_dirty_pages_pct_lwm,
        flushing_avg_loops=s.innodb_flushing_avg_loops,
        lru_scan_depth=s.innodb_lru_scan_depth,
        flush_neighbors=neighbors,
        doublewrite=bool(s.innodb_doublewrite),
        doublewrite_reduced=s.innodb_doublewrite == DETECT_ONLY,
        flush_method=s.innodb_flush_method,
        old_blocks_pct=s.innodb_old_blocks_pct,
        old_blocks_time_s=s.innodb_old_blocks_time_ms / 1000.0,
        page_checksum_s=page_checksum_s(s.innodb_checksum_algorithm, s.innodb_page_size_bytes,
                                        s.innodb_checksums),
        use_native_aio=s.innodb_use_native_aio,
        datasync=s.innodb_use_fdatasync or v.always_fdatasync,
        log_o_sync=not v.is_mariadb,
        # innodb_log_file_buffering (MDEV-28766), ON with innodb_flush_log_at_trx_commit = 2 (sim.config)
        log_o_direct=v.is_mariadb and not s.innodb_log_file_buffering,
        data_buffered=s.innodb_data_file_buffering,
        data_write_through=s.innodb_data_file_write_through,
        log_write_through=s.innodb_log_file_write_through,
        doublewrite_fast=s.innodb_doublewrite == FAST,
        file_per_table=s.innodb_file_per_table,
        write_io_threads=s.innodb_write_io_threads,
        log_writer_threads=v.log_threads and s.innodb_log_writer_threads,
        log_spin_cpu_abs_lwm=s.innodb_log_spin_cpu_abs_lwm,
    ), warnings


@dataclass(frozen=True)
class Checked:
    """A scenario's parts that can be refused, built and checked (see preflight)."""

    settings: ServerSettings
    warnings: list[str]
    device_profile: DeviceProfile
    fs_spec: FsSpec
    log_device_profile: DeviceProfile | None   # hardware.log_device; None: the redo log on the data device
    limits: RedoLimits


def preflight(scn) -> Checked:
    """Everything Server(scn) may refuse, without building the server: the settings (with the
    server's startup adjustments and their warnings), the device profile, the filesystem, and the
    redo limits (log_calc_max_ages refuses a log too small). Server(scn) starts from this."""
    hw = scn.hardware
    profile = load_profile(hw.device)
    settings, warnings = settings_from(scn, profile)
    v = version_of(settings.version)
    limits, redo_warnings = redo_limits(v.redo, log_file_size_bytes=settings.log_file_size_bytes,
                                        log_files_in_group=settings.log_files_in_group,
                                        redo_log_capacity_bytes=settings.redo_log_capacity_bytes,
                                        page_size_bytes=settings.page_size_bytes,
                                        thread_concurrency=settings.thread_concurrency)
    if limits.version != v.name:
        limits = replace(limits, version=v.name)
    return Checked(
        settings=settings, warnings=warnings + redo_warnings, device_profile=profile,
        log_device_profile=load_profile(hw.log_device) if hw.log_device else None,
        fs_spec=make_spec(hw.filesystem[0], hw.kernel[0],
                          mount_options_for(hw.mount_options, hw.filesystem[0], hw.kernel[0]), source="hardware"),
        limits=limits)


def txn_profile_from(scn) -> TxnProfile:
    w = scn.workload
    return TxnProfile(w.profile, w.pages_read_per_txn, w.pages_modified_per_txn, int(w.redo_bytes_per_txn),
                      w.cpu_s_per_txn, w.serial_s_per_txn, w.hot_data_pct, w.hot_access_pct,
                      int(w.binlog_bytes_per_txn), w.log_free_checks_per_txn)


class Server:
    """One simulated server (of the scenario's version) and its machine."""

    def __init__(self, scn, check_every_s: float = 0.0) -> None:
        self.scn = scn
        checked = preflight(scn)
        self.settings, self.warnings, self.limits = checked.settings, checked.warnings, checked.limits
        st = self.settings
        hw, wl, run = scn.hardware, scn.workload, scn.run
        root = np.random.SeedSequence(run.seed)
        rng_dev, rng_pages, rng_users = (np.random.default_rng(s) for s in root.spawn(3))
        self.version = v = version_of(st.version)
        self.env = env = simpy.Environment()
        self.device = Device(env, checked.device_profile, rng_dev)
        n_files = hw.data_files[0]
        self.fs = Filesystem(env, self.device, checked.fs_spec, n_files + 2)
        # hardware.log_device: the redo log's files on a device of their own, under a filesystem of
        # the same kind (its own journal); its random stream is a fourth child of the run's seed, so
        # the three above are the same with or without it.
        self.log_fs = None
        if checked.log_device_profile is not None:
            rng_log = np.random.default_rng(root.spawn(1)[0])
            self.log_fs = Filesystem(env, Device(env, checked.log_device_profile, rng_log), checked.fs_spec, 1)
        self.counters = Counters()
        ps = st.page_size_bytes
        self.n_pages = max(1, wl.data_bytes // ps)
        self.fil = FilIO(env, self.fs, n_files, ps, st.flush_method, self.counters, access=st.file_access(),
                         page_cache_bytes=hw.page_cache_bytes, n_pages=self.n_pages,
                         native_aio=st.use_native_aio, write_io_threads=st.write_io_threads,
                         datasync=st.datasync, log_o_sync=st.log_o_sync, log_fs=self.log_fs,
                         dblwr_in_data_file=not st.file_per_table and v.doublewrite != "80",
                         redo_in_data_writes=v.redo_in_data_writes)
        pages_per_space = -(-self.n_pages // n_files)
        n_inst = st.buffer_pool_instances
        frames = max(1, st.buffer_pool_size_bytes // ps // n_inst)
        self.pool = BufferPool(self.n_pages, n_inst, frames, pages_per_space, st.old_blocks_pct,
                               st.old_blocks_time_s, st.lru_scan_depth)
        self.profile = txn_profile_from(scn)
        if wl.access == "tpcc":
            self.sampler = WeightedPageSampler(tpcc_page_weights(wl.warehouses, self.n_pages, ps), rng_pages)
        elif wl.access == "sysbench":
            read_w, modify_w = sysbench_page_weights(wl.tables, wl.table_size, self.n_pages, ps)
            self.sampler = WeightedPageSampler(read_w, rng_pages, modify_weights=modify_w)
        else:
            self.sampler = PageSampler(self.n_pages, self.profile.hot_data_pct, self.profile.hot_access_pct,
                                       rng_pages)
        if wl.warm_start:
            self.pool.preload(self.sampler.most_popular(self.pool.total_frames))
            if self.fil.os_cache is not None:
                self.fil.os_cache.preload(self.sampler.most_popular(self.fil.os_cache.capacity_pages).tolist())
        self.log = LogState()
        self.batches = FlushBatches(env, n_inst, writes_hold_batch=not v.is_mariadb)
        self.flusher = Flusher(env, self.pool, None, self.batches, self.counters, st, self.log,
                               mariadb=v.is_mariadb)
        self.dblwr = self._doublewrite(v)
        self.flusher.dblwr = self.dblwr
        self.flusher.os_cache = self.fil.os_cache
        logsys_cls = {"56": LogSys56, "57": LogSys57, "80": LogSys80, "mariadb": LogSysMariaDB}[v.foreground]
        extra = {"flush_order_lag": v.flush_order_lag_bytes} if v.foreground == "80" else {}
        self.logsys = logsys_cls(env, self.log, self.pool, self.flusher, self.fil, self.counters, self.limits, st,
                                 **extra)
        self.tick_s = run.resolution_s
        self.end_s = run.warmup_s + run.duration_s
        self.n_ticks = int(round(self.end_s / self.tick_s))
        self.users = UserThreads(env, n_users=wl.users, cores=hw.cpu_cores, profile=self.profile,
                                 sampler=self.sampler, pool=self.pool, log=self.log, logsys=self.logsys,
                                 fil=self.fil, counters=self.counters, settings=st, rng=rng_users,
                                 think_s=wl.think_s, tick_s=self.tick_s, n_ticks=self.n_ticks,
                                 rate_tps=wl.rate_tps, cpu_run_s=wl.cpu_s_per_run)
        self.users.free_block_sleep_s = v.free_block_sleep_s
        if v.cleaner == "56":
            self.cleaner = PageCleaner56(env, self.flusher, self.pool, self.log, self.counters, st, self.limits)
        elif v.cleaner in ("57", "80"):
            self.cleaner = PageCleanerCoordinator(env, self.flusher, self.pool, self.log, self.counters, st,
                                                  self.limits, mode_80=v.cleaner == "80",
                                                  flush_order_lag=v.flush_order_lag_bytes)
        else:
            self.cleaner = PageCleanerMariaDB(env, self.flusher, self.pool, self.log, self.logsys, self.counters,
                                              st, self.limits, wake_race=wl.cleaner_wake_race,
                                              rng=np.random.default_rng(root.spawn(1)[0]))
        self.logsys.cleaner = self.cleaner
        if v.is_mariadb:
            self.users.free_wake = self.cleaner.wake_for_free
        self.counter_rows = np.zeros((self.n_ticks, len(COUNTERS)), dtype=np.int64)
        self.gauge_rows = np.zeros((self.n_ticks, len(GAUGES)), dtype=np.float64)
        self.check_every_s = check_every_s
        self.violations: list[str] = []
        env.process(self.users.run())
        env.process(self.cleaner.run())
        env.process(self.logsys.master_thread(checkpoints=v.checkpoints == "master"))
        if v.checkpoints == "checkpointer":
            env.process(self.logsys.checkpointer())
        env.process(self._recorder())

    def _doublewrite(self, v: Version):
        st, args = self.settings, (self.env, self.fil, self.pool.space_of, self.counters,
                                   self.flusher.on_write_complete)
        if v.doublewrite == "80":
            return Doublewrite80(*args, enabled=st.doublewrite, inst_of=self.pool.inst_of,
                                 pages=st.doublewrite_pages, flush_method=st.flush_method,
                                 reduced=st.doublewrite_reduced)
        if v.doublewrite == "mariadb":
            return DoublewriteMariaDB(*args, enabled=st.doublewrite)
        return Doublewrite56(*args, enabled=st.doublewrite)

    def _recorder(self):
        env, tick = self.env, self.tick_s
        pool, log, c = self.pool, self.log, self.counters.values
        g = self.cleaner.gauges
        dev = self.device
        next_check = self.check_every_s
        # models.recovery.pages_to_recover walks every page, so it is taken once a second (and at
        # the first tick); the ticks in between carry the last value.
        every = max(1, int(round(1.0 / tick)))
        rec_pages = 0
        for k in range(self.n_ticks):
            yield env.timeout((k + 1) * tick - env.now)
            if k % every == every - 1 or k == 0:
                rec_pages = pages_to_recover(pool.newest_lsn, log.last_checkpoint_lsn)
            self.counter_rows[k] = [c[name] for name in COUNTERS]
            oldest = pool.oldest_modification_all()
            host_q, backlog = dev.queue_depths(env.now)
            self.gauge_rows[k] = (log.lsn, log.last_checkpoint_lsn, oldest if oldest else log.lsn,
                                  pool.dirty_pages(), pool.free_pages(), host_q,
                                  self.fil.tally.lock_wait_s, g["buffer_flush_n_to_flush_requested"],
                                  g["buffer_flush_pct_for_lsn"], g["buffer_flush_avg_page_rate"],
                                  self.logsys.in_margin, self.users.queued, dev.busy_s(env.now),
                                  backlog, rec_pages)
            if self.check_every_s and env.now >= next_check:
                next_check += self.check_every_s
                self.check_now()

    def check_now(self) -> None:
        """The engine's invariants at this instant (tests run with check_every_s > 0)."""
        self.violations += self._state_violations(f"t={self.env.now:.3f}")

    def _state_violations(self, when: str) -> list[str]:
        """Checkpoint <= oldest dirty page <= lsn, the checkpoint age within the redo capacity, every
        dirty page among those crash recovery would read, and the pool's counters against its page
        state, as messages prefixed with `when`."""
        log, pool = self.log, self.pool
        out = []
        oldest = pool.oldest_modification_all() or log.lsn
        if not log.last_checkpoint_lsn <= oldest <= log.lsn:
            out.append(f"{when}: checkpoint {log.last_checkpoint_lsn} <= oldest {oldest} <= lsn {log.lsn} does not hold")
        if log.lsn - log.last_checkpoint_lsn > self.limits.capacity_bytes:
            out.append(f"{when}: checkpoint age {log.lsn - log.last_checkpoint_lsn} "
                       f"exceeds the redo capacity {self.limits.capacity_bytes}")
        # Crash recovery would read every dirty page: each has a record from the checkpoint on.
        dirty_unread = np.count_nonzero((pool.oldest_lsn != 0) & (pool.newest_lsn < log.last_checkpoint_lsn))
        if dirty_unread:
            out.append(f"{when}: {dirty_unread} dirty page(s) with no record from the checkpoint "
                       f"{log.last_checkpoint_lsn}: crash recovery would not read them")
        if not log.flushed_lsn <= log.written_lsn <= log.lsn:
            out.append(f"{when}: redo flushed {log.flushed_lsn} <= written {log.written_lsn} <= lsn {log.lsn} "
                       "does not hold")
        stranded = self.users.writer.stranded() if self.users.log_threads else 0
        if stranded:
            out.append(f"{when}: {stranded} commit(s) whose redo is durable wait with no notifier to wake them")
        try:
            pool.check_invariants()
        except AssertionError as err:
            out.append(f"{when}: buffer pool: {err}")
        return out

    def end_violations(self, res: EngineResult) -> list[str]:
        """Every invariant broken by a finished run, as messages (empty: none): the checks made
        during the run, nothing lost (no write completed twice, every doublewrite-posted write
        completed once or still in flight, every change written or still dirty; the last needs
        pool.track_writes() before the run), and `_state_violations` at the end."""
        out = list(res.final_checks.get("violations", []))
        pool, dblwr = self.pool, self.dblwr
        if pool.double_completions:
            out.append(f"{pool.double_completions} page writes completed twice")
        if dblwr.issued != dblwr.completed + dblwr.pending:
            out.append(f"doublewrite: {dblwr.issued} writes posted, {dblwr.completed} completed, "
                       f"{dblwr.pending} in flight")
        lost = pool.unwritten_changes() if pool.written_newest is not None else 0
        if lost:
            out.append(f"{lost} pages lost a change (neither dirty nor written)")
        u = self.users
        if u.rate_tps > 0.0:
            running = u.n - len(u.idle)
            commits = self.counters.values["commits"]
            if u.arrivals != commits + running + u.queued:
                out.append(f"open loop: {u.arrivals} transactions arrived, {commits} committed, {running} "
                           f"running, {u.queued} queued")
        return out + self._state_violations("end")

    def run(self, progress=None) -> EngineResult:
        t0 = time.perf_counter()
        env = self.env
        step = max(1.0, self.end_s / 100.0)
        t = 0.0
        while t < self.end_s:
            t = min(self.end_s, t + step)
            env.run(until=t + (self.tick_s / 2 if t >= self.end_s else 0.0))
            if progress is not None:
                progress(t / self.end_s)
        self.users.finish(self.end_s)
        over = self.logsys.capacity_warning()
        if over and over not in self.warnings:
            self.warnings.append(over)
        wall = time.perf_counter() - t0
        return EngineResult(
            scenario=self.scn, settings=self.settings, limits=self.limits, profile=self.profile,
            tick_s=self.tick_s, n_ticks=self.n_ticks, warmup_s=self.scn.run.warmup_s,
            counters=self.counter_rows, gauges=self.gauge_rows, thread_s=self.users.acc[:, : self.n_ticks],
            commit_t=np.asarray(self.users.commit_t), latency_s=np.asarray(self.users.latency_s),
            n_instances=self.pool.n_instances, n_pages=self.n_pages, frames=self.pool.total_frames,
            redo_capacity_bytes=self.limits.configured_bytes, device_units=self.device.profile.parallelism,
            page_read_iops=self.device.profile.capacity_iops(1.0, self.settings.page_size_bytes),
            warnings=self.warnings, wall_s=wall,
            final_checks={"violations": list(self.violations)},
            log_threads=self.users.writer.stats() if self.users.log_threads else None)


def run(scn, progress=None) -> EngineResult:
    """Simulate an oltp scenario."""
    return Server(scn).run(progress)
