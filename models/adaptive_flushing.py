"""Adaptive flushing arithmetic of MySQL 5.6: how many pages the page cleaner asks for.

Mirrors, from MySQL 5.6.29 buf/buf0flu.cc: af_get_pct_for_dirty, af_get_pct_for_lsn, the request
part of page_cleaner_flush_pages_if_needed, and the per-instance quota of buf_flush_list; and
buf_get_modified_ratio_pct (buf/buf0buf.cc). Spec: shared/research/innodb-flushing.md 4.1, 4.5.1,
4.5.2, worked numbers in 10bis. Unsigned integer arithmetic where the server uses it.
The page cleaner keeps this state in function statics; here it is an explicit dataclass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from models.server import ServerSettings


def pct_io(io_capacity: int, pct: int) -> int:
    """PCT_IO(p) = innodb_io_capacity x p / 100 (srv0srv.h)."""
    return io_capacity * pct // 100


def modified_ratio_pct_56(flush_list_len: int, lru_len: int, free_len: int) -> int:
    """buf_get_modified_ratio_pct (5.6): integer dirty share of the pool, summed over instances."""
    return 100 * flush_list_len // (1 + lru_len + free_len)


def pct_for_dirty_56(dirty_pct: int, max_dirty_pages_pct: int, max_dirty_pages_pct_lwm: int) -> int:
    """af_get_pct_for_dirty (5.6)."""
    if dirty_pct > 0 and max_dirty_pages_pct == 0:
        return 100
    if max_dirty_pages_pct_lwm == 0:
        return 100 if dirty_pct > max_dirty_pages_pct else 0
    if dirty_pct > max_dirty_pages_pct_lwm:
        return dirty_pct * 100 // (max_dirty_pages_pct + 1)
    return 0


def pct_for_lsn(age_lsn: int, log_capacity: int, max_modified_age_async: int, io_capacity: int,
                io_capacity_max: int, adaptive_flushing_lwm_pct: int = 10,
                adaptive_flushing: bool = True) -> int:
    """af_get_pct_for_lsn (5.6): 0 below the low-water mark, then (max/cap) x f^1.5 / 7.5.

    f = age x 100 / max_modified_age_async; io_capacity_max / io_capacity is an integer division.
    """
    lwm = adaptive_flushing_lwm_pct * log_capacity // 100
    if age_lsn < lwm:
        return 0
    if age_lsn < max_modified_age_async and not adaptive_flushing:
        return 0
    f = age_lsn * 100 // max_modified_age_async
    return int((io_capacity_max // io_capacity) * (f * math.sqrt(f)) / 7.5)


def per_instance_quota(n_pages: int, n_instances: int) -> int:
    """buf_flush_list: the request is spread evenly, ceil(n / instances) pages each."""
    return (n_pages + n_instances - 1) // n_instances


@dataclass(frozen=True)
class AdaptiveState56:
    """The statics of page_cleaner_flush_pages_if_needed (5.6)."""

    lsn_avg_rate: int = 0
    prev_lsn: int = 0
    last_lsn: int = 0
    sum_pages: int = 0
    last_pages: int = 0
    prev_pages: int = 0
    avg_page_rate: int = 0
    n_iterations: int = 0


@dataclass(frozen=True)
class FlushRequest:
    """One page-cleaner request: flush up to n_pages (spread over instances) below lsn_limit."""

    n_pages: int
    lsn_limit: int
    pct_for_dirty: int
    pct_for_lsn: int
    age_lsn: int


def adaptive_request_56(state: AdaptiveState56, cur_lsn: int, oldest_lsn: int, dirty_pct: int,
                        log_capacity: int, max_modified_age_async: int,
                        s: ServerSettings) -> tuple[AdaptiveState56, FlushRequest | None]:
    """The request half of page_cleaner_flush_pages_if_needed (5.6), one call per cleaner loop.

    `oldest_lsn` is buf_pool_get_oldest_modification: 0 when no page is dirty (the server then
    sees an age of cur_lsn). Returns the new state and the request, or None when the server
    returns early (first call, or no redo since the last averaging point).
    """
    if state.prev_lsn == 0:
        return replace(state, prev_lsn=cur_lsn), None
    if state.prev_lsn == cur_lsn:
        return state, None
    st = replace(state, n_iterations=state.n_iterations + 1)
    if st.n_iterations >= s.flushing_avg_loops:
        avg_page_rate = (st.sum_pages // s.flushing_avg_loops + st.avg_page_rate) // 2
        lsn_rate = (cur_lsn - st.prev_lsn) // s.flushing_avg_loops
        st = replace(st, avg_page_rate=avg_page_rate, lsn_avg_rate=(st.lsn_avg_rate + lsn_rate) // 2,
                     prev_lsn=cur_lsn, n_iterations=0, sum_pages=0)
    age = cur_lsn - oldest_lsn if cur_lsn > oldest_lsn else 0
    p_dirty = pct_for_dirty_56(dirty_pct, s.max_dirty_pages_pct, s.max_dirty_pages_pct_lwm)
    p_lsn = pct_for_lsn(age, log_capacity, max_modified_age_async, s.io_capacity, s.io_capacity_max,
                        s.adaptive_flushing_lwm_pct, s.adaptive_flushing)
    n_pages = (pct_io(s.io_capacity, max(p_dirty, p_lsn)) + st.avg_page_rate) // 2
    n_pages = min(n_pages, s.io_capacity_max)
    age_factor = 0
    if st.last_pages and cur_lsn - st.last_lsn > st.lsn_avg_rate // 2:
        age_factor = st.prev_pages // st.last_pages
    lsn_limit = oldest_lsn + st.lsn_avg_rate * (age_factor + 1)
    st = replace(st, prev_pages=n_pages)
    return st, FlushRequest(n_pages, lsn_limit, p_dirty, p_lsn, age)


def after_batch_56(state: AdaptiveState56, cur_lsn: int, flushed_pages: int) -> AdaptiveState56:
    """The bookkeeping half, once page_cleaner_do_flush_batch returned `flushed_pages`."""
    return replace(state, last_lsn=cur_lsn, last_pages=flushed_pages + 1,
                   sum_pages=state.sum_pages + flushed_pages)


# -- MySQL 5.7 / 8.0: page_cleaner_flush_pages_recommendation (S57 buf/buf0flu.cc; S80
#    Adaptive_flush::page_recommendation, set_flush_target_by_lsn) -------------------------------

BUF_FLUSH_LSN_SCAN_FACTOR = 3


def pct_for_dirty_57(dirty_pct: float, max_dirty_pages_pct: float, max_dirty_pages_pct_lwm: float) -> int:
    """af_get_pct_for_dirty (5.7) / Adaptive_flush::get_pct_for_dirty (8.0): a double dirty %,
    `>=` where 5.6 has `>`."""
    if dirty_pct == 0:
        return 0
    if max_dirty_pages_pct == 0:
        return 100
    if max_dirty_pages_pct_lwm == 0:
        return 100 if dirty_pct >= max_dirty_pages_pct else 0
    if dirty_pct >= max_dirty_pages_pct_lwm:
        return int(dirty_pct * 100 / (max_dirty_pages_pct + 1))
    return 0


def modified_ratio_pct_57(flush_list_len: int, lru_len: int, free_len: int) -> float:
    """buf_get_modified_ratio_pct (5.7+): the same share as 5.6, as a double."""
    return 100.0 * flush_list_len / (1 + lru_len + free_len)


@dataclass(frozen=True)
class AdaptiveState57:
    """The statics of page_cleaner_flush_pages_recommendation (5.7 / 8.0)."""

    prev_lsn: int = 0
    prev_time_s: float = 0.0
    n_iterations: int = 0
    sum_pages: int = 0
    avg_page_rate: int = 0
    lsn_avg_rate: int = 0


def averages_57(state: AdaptiveState57, cur_lsn: int, now_s: float, last_pages_in: int,
                avg_loops: int) -> tuple[AdaptiveState57, bool]:
    """The averaging half: refreshed after avg_loops iterations *or* seconds (5.7+).
    Returns (state, go): go is False on the first call and when no redo was written since."""
    if state.prev_lsn == 0:
        return replace(state, prev_lsn=cur_lsn, prev_time_s=now_s), False
    if cur_lsn == state.prev_lsn:
        return state, False
    st = replace(state, sum_pages=state.sum_pages + last_pages_in, n_iterations=state.n_iterations + 1)
    elapsed = now_s - st.prev_time_s
    if st.n_iterations >= avg_loops or elapsed >= avg_loops:
        elapsed = max(elapsed, 1.0)
        avg_page_rate = int((st.sum_pages / elapsed + st.avg_page_rate) / 2)
        lsn_rate = int((cur_lsn - st.prev_lsn) / elapsed)
        st = replace(st, avg_page_rate=avg_page_rate, lsn_avg_rate=(st.lsn_avg_rate + lsn_rate) // 2,
                     prev_lsn=cur_lsn, prev_time_s=now_s, n_iterations=0, sum_pages=0)
    return st, True


def pages_for_lsn_cap_80(io_capacity_max: int, n_instances: int, sync: bool) -> int:
    """The per-instance scan cap of 8.0's set_flush_target_by_lsn: (2 x io_capacity_max / n) x
    scan factor x 2 (scan factor 1 in sync-flush mode). 5.7.44 scans without a cap."""
    factor = 1 if sync else BUF_FLUSH_LSN_SCAN_FACTOR
    return max(1, (2 * io_capacity_max // n_instances) * factor * 2)


@dataclass(frozen=True)
class SlotRequest:
    """What the coordinator asks of each slot (one per buffer pool instance)."""

    n_pages: int                       # total request (buffer_flush_n_to_flush_requested)
    per_slot: tuple[int, ...]          # n_pages_requested of each slot
    pct_for_dirty: int
    pct_for_lsn: int
    by_age: int                        # buffer_flush_n_to_flush_by_age (sum_pages_for_lsn / factor)


def recommendation_57(pages_below: list[int], pct_for_dirty: int, pct_for_lsn_: int, avg_page_rate: int,
                      s: ServerSettings, sync: bool = False, per_slot_plus_one: bool = False) -> SlotRequest:
    """page_cleaner_flush_pages_recommendation from the per-instance counts of pages with
    oldest_modification <= target (oldest + 3 x lsn_avg_rate; in 8.0 sync mode the sync limit).

    n = (PCT_IO(max(pct_for_dirty, pct_for_lsn)) + avg_page_rate + pages_for_lsn) / 3, at most
    io_capacity_max; split over slots in proportion to their counts when pct_for_lsn > 30, else
    evenly (8.0 adds 1 per slot: per_slot_plus_one). 8.0 sync mode: n = the pages below the limit,
    at most 2 x io_capacity_max and at least innodb_io_capacity.
    """
    n_inst = len(pages_below)
    factor = 1 if sync else BUF_FLUSH_LSN_SCAN_FACTOR
    provisional = [p // factor + 1 for p in pages_below]
    sum_for_lsn = max(1, sum(pages_below) // factor)
    if sync:
        n_pages = max(min(sum_for_lsn, 2 * s.io_capacity_max), s.io_capacity)
    else:
        pages_for_lsn = min(sum_for_lsn, 2 * s.io_capacity_max)
        n_pages = (pct_io(s.io_capacity, max(pct_for_dirty, pct_for_lsn_)) + avg_page_rate + pages_for_lsn) // 3
        n_pages = min(n_pages, s.io_capacity_max)
    if pct_for_lsn_ > 30 or sync:
        per_slot = tuple(p * n_pages // sum_for_lsn + 1 for p in provisional)
    else:
        per_slot = tuple(n_pages // n_inst + (1 if per_slot_plus_one else 0) for _ in range(n_inst))
    return SlotRequest(n_pages, per_slot, pct_for_dirty, pct_for_lsn_, sum_for_lsn)


def log_sync_flush_lsn_80(lsn: int, oldest_for_checkpoint: int, limits, requested_checkpoint_lsn: int = 0,
                          flush_order_lag: int = 0) -> int:
    """log_sync_flush_lsn (8.0): the LSN the page cleaner must flush up to in sync-flush mode, or 0.

    Past the (effective) sync age the target is lsn - sync age, raised to a pending checkpoint
    request, capped at lsn; returned with the flush-order lag added when it is above the oldest.
    """
    flush_up_to = 0
    if limits.max_modified_age_sync is not None and lsn - oldest_for_checkpoint > limits.max_modified_age_sync:
        flush_up_to = lsn - limits.max_modified_age_sync
    flush_up_to = min(max(flush_up_to, requested_checkpoint_lsn), lsn)
    if flush_up_to > oldest_for_checkpoint:
        return flush_up_to + flush_order_lag
    return 0


# -- MariaDB 10.5+: page_cleaner_flush_pages_recommendation (SMDB buf/buf0flu.cc) -----------------

def af_needed_for_redo_mariadb(age_lsn: int, log_capacity: int, adaptive_flushing_lwm_pct: float) -> bool:
    """af_needed_for_redo: the modified age is past innodb_adaptive_flushing_lwm % of log_capacity."""
    return age_lsn > adaptive_flushing_lwm_pct * log_capacity / 100


def recommendation_mariadb(state: AdaptiveState57, pct_for_lsn_: int, pages_below_target: int, dirty_pct: float,
                           dirty_blocks: int, s: ServerSettings, first: bool) -> int:
    """The page count of MariaDB's page_cleaner_flush_pages_recommendation.

    Without LSN pressure (first call or pct_for_lsn = 0): the dirty pages if they fit in
    io_capacity, else io_capacity when dirty % / max_dirty_pages_pct x io_capacity is below the
    dirty pages, else min(io_capacity_max, dirty pages). Otherwise
    (io_capacity x total_ratio + avg_page_rate + pages_for_lsn) / 3
    at most io_capacity_max, with pages_for_lsn = pages below oldest + 3 x lsn_avg_rate (at most
    io_capacity_max) / 3, at least 1.
    """
    if first or pct_for_lsn_ == 0:
        if dirty_blocks <= s.io_capacity:
            return dirty_blocks
        share = dirty_pct / s.max_dirty_pages_pct if s.max_dirty_pages_pct > 1 else dirty_pct
        if int(share * s.io_capacity) < dirty_blocks:
            return s.io_capacity
        return min(s.io_capacity_max, dirty_blocks)
    if s.max_dirty_pages_pct_lwm == 0 or dirty_pct < s.max_dirty_pages_pct_lwm or s.max_dirty_pages_pct == 0:
        total_ratio = 1.0
    else:
        total_ratio = max(pct_for_lsn_ / 100, dirty_pct / s.max_dirty_pages_pct)
    pages_for_lsn = max(1, min(pages_below_target, s.io_capacity_max) // BUF_FLUSH_LSN_SCAN_FACTOR)
    n = int((s.io_capacity * total_ratio + state.avg_page_rate + pages_for_lsn) / 3)
    return min(n, s.io_capacity_max)
