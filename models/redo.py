"""Redo log capacity and the checkpoint-age thresholds of every simulated version.

Mirrors (shared/research/innodb-flushing.md section 2, worked numbers in 2.5):
* 5.6 / 5.7: log_calc_max_ages, log_group_get_capacity (MySQL 5.6.29 / 5.7.44 log/log0log.cc);
* 8.0.11-8.0.29: log_calc_max_ages, log_calc_concurrency_margin (MySQL 8.0.27 log/log0chkp.cc);
* 8.0.30+: log_files_capacity_get_limits and its helpers (log/log0files_capacity.cc) and
  log_concurrency_margin (log/log0chkp.cc);
* MariaDB 10.5+: log_t::set_capacity (log/log0log.cc);
plus what 5.6/5.7 log_close decides about `log_sys->check_flush_or_checkpoint` and the arithmetic
of log_checkpoint_margin (5.6: twice the overshoot; 5.7: once). Integer (lsn_t) arithmetic, as in
the servers. Every version's limits come out as one RedoLimits whose ages are the *effective*
ones: 8.0 subtracts its concurrency margin at use time, and the values here have it subtracted,
so each is compared directly with the modified age (lsn - oldest) or the checkpoint age.
Plain functions: the engine's SimPy processes call them.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.errors import InputError

LOG_FILE_HDR_SIZE = 4 * 512            # bytes of header per log file (LOG_FILE_HDR_SIZE)
LOG_POOL_PREFLUSH_RATIO_ASYNC = 8
LOG_POOL_PREFLUSH_RATIO_SYNC = 16
LOG_POOL_CHECKPOINT_RATIO_ASYNC = 32
LOG_CHECKPOINT_FREE_PER_THREAD_PAGES = 4
LOG_CHECKPOINT_EXTRA_FREE_PAGES = 8


LIMIT_FIELDS = ("max_modified_age_async", "max_modified_age_sync", "max_checkpoint_age_async",
                "max_checkpoint_age")


@dataclass(frozen=True)
class RedoLimits:
    """The log limits computed once at startup (bytes of LSN), effective values (see module doc).

    5.6/5.7 meaning of each field; `names` gives the version's own name for each.
    """

    capacity_bytes: int                # LSN the log holds before it would overwrite the checkpoint
    log_group_capacity: int            # what innodb_adaptive_flushing_lwm is a % of (5.7: mtr stop)
    max_modified_age_async: int        # reference of LSN-based adaptive flushing
    max_modified_age_sync: int | None  # sync flushing beyond this modified age (None: MariaDB)
    max_checkpoint_age_async: int | None  # a checkpoint is written beyond this checkpoint age
    max_checkpoint_age: int            # user threads wait beyond this checkpoint age
    configured_bytes: int = 0          # the redo size configured (the base of the % figures)
    concurrency_margin: int = 0        # 8.0: already subtracted from the ages above
    version: str = "mysql-5.6"
    names: tuple = (("max_modified_age_async", "max_modified_age_async (adaptive reference)"),
                    ("max_modified_age_sync", "max_modified_age_sync (sync flush)"),
                    ("max_checkpoint_age_async", "max_checkpoint_age_async (checkpoint)"),
                    ("max_checkpoint_age", "max_checkpoint_age (sync checkpoint)"))

    def name_of(self, field: str) -> str:
        return dict(self.names)[field]

    def pct(self, field: str) -> float | None:
        """A limit as % of the configured redo size (None when the version has no such limit)."""
        v = getattr(self, field)
        return None if v is None else 100.0 * v / self.configured_bytes


def log_calc_max_ages_56(log_file_size_bytes: int, log_files_in_group: int, page_size_bytes: int,
                         thread_concurrency: int = 0) -> RedoLimits:
    """log_calc_max_ages (5.6/5.7). Refuses, as the server does, a log too small for the threads.

    free = 4 pages x (10 + innodb_thread_concurrency) + 8 pages; the server exits when
    free >= log_group_capacity / 2.
    """
    capacity = (log_file_size_bytes - LOG_FILE_HDR_SIZE) * log_files_in_group
    smallest = capacity - capacity // 10
    free = (LOG_CHECKPOINT_FREE_PER_THREAD_PAGES * page_size_bytes * (10 + thread_concurrency)
            + LOG_CHECKPOINT_EXTRA_FREE_PAGES * page_size_bytes)
    if free >= smallest // 2:
        raise InputError(
            "server", "innodb_log_file_size",
            f"ib_logfiles are too small for innodb_thread_concurrency {thread_concurrency}: "
            f"{log_files_in_group} x {log_file_size_bytes} bytes leave {smallest} bytes of log group "
            f"capacity, and the server needs more than twice {free} (log_calc_max_ages refuses to start)",
            "larger innodb_log_file_size or innodb_log_files_in_group, or lower innodb_thread_concurrency")
    margin = smallest - free
    margin = margin - margin // 10
    return RedoLimits(
        capacity_bytes=capacity,
        log_group_capacity=smallest,
        max_modified_age_async=margin - margin // LOG_POOL_PREFLUSH_RATIO_ASYNC,
        max_modified_age_sync=margin - margin // LOG_POOL_PREFLUSH_RATIO_SYNC,
        max_checkpoint_age_async=margin - margin // LOG_POOL_CHECKPOINT_RATIO_ASYNC,
        max_checkpoint_age=margin,
        configured_bytes=log_file_size_bytes * log_files_in_group,
    )


def oldest_or_lsn(oldest_modification_lsn: int | None, lsn: int) -> int:
    """log_buf_pool_get_oldest_modification: the oldest dirty page's LSN, or lsn if none is dirty."""
    return lsn if oldest_modification_lsn is None else oldest_modification_lsn


def log_close_needs_check_56(lsn: int, checkpoint_lsn: int, oldest_modification_lsn: int | None,
                             limits: RedoLimits, log_buffer_half_full: bool = False) -> bool:
    """Whether mtr commit (log_close, 5.6) sets check_flush_or_checkpoint for log_free_check."""
    if log_buffer_half_full:
        return True
    checkpoint_age = lsn - checkpoint_lsn
    if checkpoint_age <= limits.max_modified_age_sync:
        return False
    return (oldest_modification_lsn is None
            or lsn - oldest_modification_lsn > limits.max_modified_age_sync
            or checkpoint_age > limits.max_checkpoint_age_async)


@dataclass(frozen=True)
class MarginAction:
    """What one log_checkpoint_margin pass asks the user thread to do."""

    preflush_to_lsn: int | None        # buf_flush_list(ULINT_MAX, this) on every instance, in order
    checkpoint: str | None             # None, "async" or "sync" (wait for it, then loop)


def log_checkpoint_margin_56(lsn: int, checkpoint_lsn: int, oldest_modification_lsn: int | None,
                             limits: RedoLimits) -> MarginAction:
    """log_checkpoint_margin (5.6): beyond the sync age, preflush by twice the overshoot."""
    oldest = oldest_or_lsn(oldest_modification_lsn, lsn)
    age = lsn - oldest
    target = None
    if age > limits.max_modified_age_sync:
        target = oldest + 2 * (age - limits.max_modified_age_sync)
    checkpoint_age = lsn - checkpoint_lsn
    if checkpoint_age > limits.max_checkpoint_age:
        kind = "sync"
    elif checkpoint_age > limits.max_checkpoint_age_async:
        kind = "async"
    else:
        kind = None
    return MarginAction(target, kind)


def log_checkpoint_margin_57(lsn: int, checkpoint_lsn: int, oldest_modification_lsn: int | None,
                             limits: RedoLimits) -> MarginAction:
    """log_checkpoint_margin (5.7.44): as 5.6, but the preflush target is oldest + the overshoot
    (not twice it); the page cleaner does the flushing (log_preflush_pool_modified_pages)."""
    a = log_checkpoint_margin_56(lsn, checkpoint_lsn, oldest_modification_lsn, limits)
    if a.preflush_to_lsn is None:
        return a
    oldest = oldest_or_lsn(oldest_modification_lsn, lsn)
    return MarginAction(oldest + (lsn - oldest - limits.max_modified_age_sync), a.checkpoint)


def _align_up(n: int, a: int = 512) -> int:
    return -(-n // a) * a


def _align_down(n: int, a: int = 512) -> int:
    return n // a * a


# -- MySQL 8.0.11 - 8.0.29 (log/log0chkp.cc: log_calc_max_ages, log_calc_concurrency_margin) ----

LOG_EXTRA_MARGIN_PCT_80 = 5
LOG_BACKGROUND_THREADS_USING_RW_MTRS = 10
NAMES_80 = (("max_modified_age_async", "max_modified_age_async - margin (adaptive reference)"),
            ("max_modified_age_sync", "max_modified_age_sync - margin (sync flush mode)"),
            ("max_checkpoint_age_async", "max_checkpoint_age_async - margin (checkpoint forced)"),
            ("max_checkpoint_age", "free check capacity (log_free_check waits)"))


def log_calc_max_ages_80(log_file_size_bytes: int, log_files_in_group: int, page_size_bytes: int,
                         thread_concurrency: int = 0) -> tuple[RedoLimits, list[str]]:
    """log_calc_max_ages + log_calc_concurrency_margin (8.0.27), effective limits.

    Returns the limits and the server's warnings (a margin capped at half the writer capacity).
    """
    real = (log_file_size_bytes - LOG_FILE_HDR_SIZE) * log_files_in_group
    safety = min(real // 10, 256 * LOG_CHECKPOINT_FREE_PER_THREAD_PAGES * page_size_bytes)
    writer = _align_down(real - safety)
    extra = writer * LOG_EXTRA_MARGIN_PCT_80 // 100
    cap = writer - extra                                   # lsn_capacity_for_free_check
    margin = (LOG_CHECKPOINT_FREE_PER_THREAD_PAGES * page_size_bytes
              * (LOG_BACKGROUND_THREADS_USING_RW_MTRS + thread_concurrency)
              + LOG_CHECKPOINT_EXTRA_FREE_PAGES * page_size_bytes + extra)
    warnings = []
    if margin > writer // 2:
        margin = writer // 2
        warnings.append("Innodb: the redo log is too small for innodb_thread_concurrency: the concurrency "
                        "margin is capped at half the log capacity (log_calc_concurrency_margin)")
    return _effective_80(cap, margin, _align_up, capacity_bytes=real,
                         configured_bytes=log_file_size_bytes * log_files_in_group, version="mysql-8.0",
                         names=NAMES_80), warnings


def _effective_80(cap: int, margin: int, align, **fields) -> RedoLimits:
    """8.0's ages from the capacity everything but the log writer uses (lsn_capacity_for_free_check,
    8.0.30's soft capacity): cap - cap/8, - cap/16, - cap/32, each less the concurrency margin as
    the code subtracts it at use time; users wait past cap - margin (the free-check capacity)."""
    ages = [align(cap - cap // r) - margin for r in (LOG_POOL_PREFLUSH_RATIO_ASYNC, LOG_POOL_PREFLUSH_RATIO_SYNC,
                                                     LOG_POOL_CHECKPOINT_RATIO_ASYNC)]
    return RedoLimits(log_group_capacity=cap - margin, max_modified_age_async=ages[0], max_modified_age_sync=ages[1],
                      max_checkpoint_age_async=ages[2], max_checkpoint_age=cap - margin, concurrency_margin=margin,
                      **fields)


# -- MySQL 8.0.30+ (log/log0files_capacity.cc, log/log0chkp.cc: log_concurrency_margin) ----------

LOG_N_FILES = 32
UNIV_PAGE_SIZE_MAX = 64 << 10
LOG_EXTRA_SAFETY_MARGIN = 2 * UNIV_PAGE_SIZE_MAX
LOG_NEXT_FILE_EARLIER_MARGIN_PCT = 10
LOG_EXTRA_WRITER_MARGIN_PCT = 5
LOG_EXTRA_CONC_MARGIN_PCT = 5
LOG_FILES_DUMMY_INTAKE_SIZE = 4096
REDO_LOG_CAPACITY_MIN = 8 << 20
REDO_LOG_CAPACITY_MAX = 512 << 30
NAMES_8030 = (("max_modified_age_async", "adaptive_flush_min_age - margin (adaptive reference)"),
              ("max_modified_age_sync", "adaptive_flush_max_age - margin (sync flush mode)"),
              ("max_checkpoint_age_async", "aggressive_checkpoint_min_age - margin (checkpoint forced)"),
              ("max_checkpoint_age", "free check capacity (log_free_check waits)"))


def log_files_capacity_8030(redo_log_capacity_bytes: int, page_size_bytes: int,
                            thread_concurrency: int = 0) -> tuple[RedoLimits, list[str]]:
    """log_files_capacity_get_limits + log_concurrency_margin (8.0.30+), effective limits.

    P = innodb_redo_log_capacity in 32 files; two file slots are never counted; the writer sees
    the hard capacity, everything else the soft one (5 % less).
    """
    p = redo_log_capacity_bytes
    lsn_capacity = p * (LOG_N_FILES - 2) // LOG_N_FILES - ((LOG_N_FILES - 1) * LOG_FILE_HDR_SIZE
                                                          + LOG_EXTRA_SAFETY_MARGIN)
    next_file_margin = _align_down(p // LOG_N_FILES * LOG_NEXT_FILE_EARLIER_MARGIN_PCT // 100)
    hard = lsn_capacity - next_file_margin
    soft = hard * (100 - LOG_EXTRA_WRITER_MARGIN_PCT) // 100
    margin = (LOG_CHECKPOINT_FREE_PER_THREAD_PAGES * page_size_bytes
              * (LOG_BACKGROUND_THREADS_USING_RW_MTRS + thread_concurrency)
              + LOG_FILES_DUMMY_INTAKE_SIZE + soft * LOG_EXTRA_CONC_MARGIN_PCT // 100)
    warnings = []
    cap = soft * (50 + LOG_EXTRA_CONC_MARGIN_PCT) // 100
    if margin > cap:
        margin = cap
        warnings.append("Innodb: innodb_redo_log_capacity is too small for innodb_thread_concurrency: the "
                        "concurrency margin is capped (log_concurrency_margin reports it unsafe)")
    return _effective_80(soft, margin, int, capacity_bytes=lsn_capacity, configured_bytes=p,
                         version="mysql-8.0.30", names=NAMES_8030), warnings


# -- MariaDB 10.5+ (log/log0log.cc: log_t::set_capacity) ------------------------------------------

START_OFFSET_MARIADB = 12288           # first LSN offset in the file, FORMAT_10_8
MARIADB_FREE_PAGES = 48
NAMES_MARIADB = (("max_modified_age_async", "max_modified_age_async (flush-ahead)"),
                 ("max_modified_age_sync", "(none in MariaDB)"),
                 ("max_checkpoint_age_async", "(none in MariaDB)"),
                 ("max_checkpoint_age", "max_checkpoint_age (furious flush, users wait)"))


def log_set_capacity_mariadb(log_file_size_bytes: int, page_size_bytes: int) -> RedoLimits:
    """log_t::set_capacity (MariaDB 10.5+): one file; no separate sync point."""
    cap = log_file_size_bytes - START_OFFSET_MARIADB
    log_capacity = cap - cap // 10
    margin = log_capacity - MARIADB_FREE_PAGES * page_size_bytes
    if margin <= 0:
        raise InputError("server", "innodb_log_file_size",
                         f"{log_file_size_bytes} bytes leave no room past the {MARIADB_FREE_PAGES} pages "
                         "log_t::set_capacity keeps free", "a larger innodb_log_file_size")
    margin = margin - margin // 10
    return RedoLimits(
        capacity_bytes=cap, log_group_capacity=log_capacity,
        max_modified_age_async=margin - margin // LOG_POOL_PREFLUSH_RATIO_ASYNC, max_modified_age_sync=None,
        max_checkpoint_age_async=None, max_checkpoint_age=margin, configured_bytes=log_file_size_bytes,
        version="mariadb-10.11", names=NAMES_MARIADB)


def redo_limits(version_redo: str, *, log_file_size_bytes: int, log_files_in_group: int,
                redo_log_capacity_bytes: int, page_size_bytes: int,
                thread_concurrency: int = 0) -> tuple[RedoLimits, list[str]]:
    """The limits of a version's redo design ("56", "80", "8030", "mariadb"), with its warnings."""
    if version_redo == "56":
        return log_calc_max_ages_56(log_file_size_bytes, log_files_in_group, page_size_bytes,
                                    thread_concurrency), []
    if version_redo == "80":
        return log_calc_max_ages_80(log_file_size_bytes, log_files_in_group, page_size_bytes, thread_concurrency)
    if version_redo == "8030":
        return log_files_capacity_8030(redo_log_capacity_bytes, page_size_bytes, thread_concurrency)
    if version_redo == "mariadb":
        return log_set_capacity_mariadb(log_file_size_bytes, page_size_bytes), []
    raise ValueError(version_redo)
