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
