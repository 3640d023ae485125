"""Redo log capacity and the checkpoint-age thresholds of MySQL 5.6 (and 5.7, same formulas).

Mirrors log_calc_max_ages / log_group_get_capacity (MySQL 5.6.29 log/log0log.cc), what log_close
decides about `log_sys->check_flush_or_checkpoint`, and the arithmetic of log_checkpoint_margin,
as specified in shared/research/innodb-flushing.md sections 2.1 and 3.1. Integer (lsn_t)
arithmetic throughout, as in the server. Plain functions: the engine's SimPy processes call them.
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


@dataclass(frozen=True)
class RedoLimits:
    """The log_sys limits computed once at startup (bytes of LSN)."""

    capacity_bytes: int                # sum over files of (file size - header)
    log_group_capacity: int            # capacity - capacity/10
    max_modified_age_async: int        # reference of LSN-based adaptive flushing
    max_modified_age_sync: int         # user threads flush (sync preflush) beyond this
    max_checkpoint_age_async: int      # user threads write an asynchronous checkpoint beyond this
    max_checkpoint_age: int            # user threads write a checkpoint and wait beyond this


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
