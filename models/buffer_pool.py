"""The InnoDB buffer pool of MySQL 5.6: instances, free list, LRU with its old sublist, flush list.

Mirrors, from MySQL 5.6 (shared/research/innodb-flushing.md 1, 4.5, 6.1):

* buf_pool_get (include/buf0buf.ic): instance = buf_page_address_fold(space, page_no >> 6) % n,
  fold = (space << 20) + space + (page_no >> 6), so a 64-page read-ahead area stays in one instance.
* buf_flush_insert_into_flush_list (buf/buf0flu.cc): a page dirtied for the first time gets
  oldest_modification = the mtr's start LSN and goes to the head of its instance's flush list;
  re-dirtying moves only newest_modification. Lists are therefore ordered by oldest_modification.
* buf_flush_write_complete: a page leaves the flush list when its write completes.
* buf_LRU_add_block / buf_LRU_old_adjust_len / buf_page_peek_if_too_old (buf/buf0lru.cc,
  include/buf0buf.ic): pages read in enter at the head of the old sublist (innodb_old_blocks_pct
  of the LRU); an old page is made young when touched innodb_old_blocks_time after its first
  access; a young page is moved to the head only once more than a quarter of the young part has
  been evicted since it was last moved (freed_page_clock).
* buf_get_modified_ratio_pct (buf/buf0buf.cc): dirty % = flush list / (1 + LRU + free).

State is held in NumPy arrays indexed by page (one entry per data page), so 16M pages (256 GB of
16 KiB pages) fit in well under 2 GB. Lists are ring buffers with lazy deletion: an entry is live
while the page's stamp still matches. No SimPy here: the engine's processes call these methods.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ABSENT, OLD, YOUNG = 0, 1, 2
BUF_LRU_MIN_LEN = 256                  # LRU batches stop when the LRU is this short (5.6)
BUF_LRU_OLD_MIN_LEN = 512              # below this there is no old sublist (5.6)
READ_AHEAD_AREA_PAGES = 64


def instance_of(space_id: np.ndarray | int, page_no: np.ndarray | int, n_instances: int):
    """buf_pool_get (5.6): the buffer pool instance of (space, page_no)."""
    fold = (np.asarray(space_id, dtype=np.int64) << 20) + space_id + (np.asarray(page_no, dtype=np.int64) >> 6)
    return fold % n_instances


_SCALAR_ENTRIES = 8          # lru_tail_scan: entries walked one by one before the vectorised chunks

class Ring:
    """A growable double-ended ring of (page, stamp) int64 pairs; dead entries are skipped lazily."""

    __slots__ = ("page", "stamp", "lo", "hi", "mask", "skip_k", "skip_live")

    def __init__(self, capacity: int = 1024) -> None:
        cap = 1
        while cap < max(16, capacity):
            cap <<= 1
        self.page = np.zeros(cap, dtype=np.int64)
        self.stamp = np.zeros(cap, dtype=np.int64)
        self.lo = 0      # index of the oldest entry (tail of the InnoDB list)
        self.hi = 0      # one past the newest entry (head of the InnoDB list)
        self.mask = cap - 1
        # LRU rings: every live entry in [lo, skip_k) is dirty or io-fixed, and skip_live of them
        # are live (BufferPool keeps this true; a scan for clean pages starts at skip_k).
        self.skip_k = 0
        self.skip_live = 0

    def __len__(self) -> int:
        return self.hi - self.lo

    def _grow(self) -> None:
        """Double the storage; entries keep their indices (lo and hi do not move)."""
        cap = len(self.page)
        k = np.arange(self.lo, self.hi)
        page = np.zeros(cap * 2, dtype=np.int64)
        stamp = np.zeros(cap * 2, dtype=np.int64)
        page[k & (cap * 2 - 1)] = self.page[k & self.mask]
        stamp[k & (cap * 2 - 1)] = self.stamp[k & self.mask]
        self.page, self.stamp, self.mask = page, stamp, cap * 2 - 1

    def push_head(self, page: int, stamp: int) -> None:
        if self.hi - self.lo > self.mask:
            self._grow()
        i = self.hi & self.mask
        self.page[i] = page
        self.stamp[i] = stamp
        self.hi += 1

    def push_tail(self, page: int, stamp: int) -> None:
        if self.hi - self.lo > self.mask:
            self._grow()
        self.lo -= 1
        i = self.lo & self.mask
        self.page[i] = page
        self.stamp[i] = stamp

    def extend_head(self, pages: np.ndarray, stamps: np.ndarray) -> None:
        n = len(pages)
        while self.hi - self.lo + n > self.mask + 1:
            self._grow()
        start = self.hi & self.mask
        room = self.mask + 1 - start                  # slots before the ring wraps
        if n <= room:
            self.page[start:start + n] = pages
            self.stamp[start:start + n] = stamps
        else:
            self.page[start:] = pages[:room]
            self.stamp[start:] = stamps[:room]
            self.page[:n - room] = pages[room:]
            self.stamp[:n - room] = stamps[room:]
        self.hi += n

    def at(self, k: int) -> tuple[int, int]:
        i = k & self.mask
        return self.page.item(i), self.stamp.item(i)


@dataclass
class InstanceCounters:
    """Per-instance list lengths (live entries), as buf_pool_t keeps them."""

    free: int
    lru_len: int = 0
    old_len: int = 0
    flush_list_len: int = 0
    freed_page_clock: int = 0


class BufferPool:
    """All instances over one page-indexed state. Pages are global ids 0..n_pages-1.

    Global id g lives in tablespace `1 + g // pages_per_space` at page_no `g % pages_per_space`
    (file-per-table spaces of equal size; space 0, the system tablespace, holds no user data here).
    """

    def __init__(self, n_pages: int, n_instances: int, frames_per_instance: int, pages_per_space: int,
                 old_blocks_pct: int = 37, old_blocks_time_s: float = 1.0, lru_scan_depth: int = 1024) -> None:
        if n_pages < 1 or n_instances < 1 or frames_per_instance < 1:
            raise ValueError("empty buffer pool or data set")
        self.n_pages = n_pages
        self.n_instances = n_instances
        self.frames_per_instance = frames_per_instance
        self.pages_per_space = pages_per_space
        self.old_blocks_pct = old_blocks_pct
        self.old_blocks_time_s = old_blocks_time_s
        g = np.arange(n_pages, dtype=np.int64)
        space = 1 + g // pages_per_space
        self.space_of = space.astype(np.int32)
        self.inst_of = instance_of(space, g % pages_per_space, n_instances).astype(np.int16)
        del g, space
        self.where = np.zeros(n_pages, dtype=np.int8)           # ABSENT / OLD / YOUNG
        self.lru_stamp = np.zeros(n_pages, dtype=np.int64)
        self.first_access_s = np.zeros(n_pages, dtype=np.float64)
        self.freed_clock_at = np.zeros(n_pages, dtype=np.int64)
        self.oldest_lsn = np.zeros(n_pages, dtype=np.int64)      # 0: clean
        self.newest_lsn = np.zeros(n_pages, dtype=np.int64)
        self.io_fix = np.zeros(n_pages, dtype=np.int8)            # 1: a write is in flight
        self.fix_newest = np.zeros(n_pages, dtype=np.int64)      # newest_lsn when the write was issued
        self.lru_pos = np.zeros(n_pages, dtype=np.int64)         # index of the page's live LRU ring entry
        self._stamp = 0
        self.double_completions = 0
        self.writes_completed = 0
        self.written_newest: np.ndarray | None = None      # set by track_writes() (tests)
        self.inst = [InstanceCounters(free=frames_per_instance) for _ in range(n_instances)]
        self.young = [Ring() for _ in range(n_instances)]
        self.old = [Ring() for _ in range(n_instances)]
        self.flush = [Ring() for _ in range(n_instances)]          # (page, oldest_lsn) pairs
        self._oldest_all = 0                                       # oldest_modification_all, -1: unknown
        # When no instance can ever evict (all its pages fit with room for the LRU scan depth's free
        # pages), the LRU order is never consulted and its upkeep on hits is skipped.
        per_inst = np.bincount(self.inst_of, minlength=n_instances)
        self.lru_order_matters = bool(int(per_inst.max()) + lru_scan_depth > frames_per_instance)
        self.try_lru_scan = True       # MariaDB buf_pool.try_LRU_scan: a free-block scan of the LRU may pay

    # -- sizes --------------------------------------------------------------------------------

    @property
    def total_frames(self) -> int:
        return self.frames_per_instance * self.n_instances

    def free_pages(self) -> int:
        return sum(c.free for c in self.inst)

    def lru_pages(self) -> int:
        return sum(c.lru_len for c in self.inst)

    def dirty_pages(self) -> int:
        return sum(c.flush_list_len for c in self.inst)

    def modified_ratio_pct(self) -> int:
        """buf_get_modified_ratio_pct (5.6), integer."""
        return 100 * self.dirty_pages() // (1 + self.lru_pages() + self.free_pages())

    # -- warm start ---------------------------------------------------------------------------

    def preload(self, pages: np.ndarray) -> None:
        """Make `pages` resident (clean) without I/O, filling instances until their frames are used.

        Pages that do not fit their instance are skipped. Loaded pages are split between the young
        and old sublists in the configured ratio, oldest-loaded towards the tail.
        """
        pages = np.asarray(pages, dtype=np.int64)
        pages = pages[self.where[pages] == ABSENT]
        inst = self.inst_of[pages]
        for i in range(self.n_instances):
            c = self.inst[i]
            mine = pages[inst == i][: c.free]
            if len(mine) == 0:
                continue
            n = len(mine)
            n_old = n * self.old_blocks_pct // 100 if n >= BUF_LRU_OLD_MIN_LEN else 0
            stamps = np.arange(self._stamp + 1, self._stamp + 1 + n, dtype=np.int64)
            self._stamp += n
            self.lru_stamp[mine] = stamps
            # Most popular first in `pages`: the least popular go to the old sublist (towards the tail).
            old_part, young_part = mine[n - n_old:][::-1], mine[: n - n_old][::-1]
            self.where[young_part] = YOUNG
            self.where[old_part] = OLD
            for ring, part in ((self.young[i], young_part), (self.old[i], old_part)):
                ring.extend_head(part, self.lru_stamp[part])
                self.lru_pos[part] = np.arange(ring.hi - len(part), ring.hi)
            c.free -= n
            c.lru_len += n
            c.old_len += n_old

    # -- LRU ----------------------------------------------------------------------------------

    def _next_stamp(self) -> int:
        self._stamp += 1
        return self._stamp

    def _old_target(self, c: InstanceCounters) -> int:
        if c.lru_len < BUF_LRU_OLD_MIN_LEN:
            return 0
        return c.lru_len * self.old_blocks_pct // 100

    def _adjust_old(self, i: int) -> None:
        """buf_LRU_old_adjust_len: move the old/young boundary to the configured ratio."""
        c = self.inst[i]
        target = self._old_target(c)
        slack = max(1, c.lru_len // 64)
        young, old, where, stamp = self.young[i], self.old[i], self.where, self.lru_stamp
        while c.old_len < target - slack:
            page = self._pop_live(young, YOUNG, tail=True)
            if page < 0:
                break
            s = self._next_stamp()
            stamp[page] = s
            where[page] = OLD
            self._push_head(old, page, s)
            c.old_len += 1
        while c.old_len > target + slack:
            page = self._pop_live(old, OLD, tail=False)
            if page < 0:
                break
            s = self._next_stamp()
            stamp[page] = s
            where[page] = YOUNG
            young.push_tail(page, s)
            self.lru_pos[page] = young.lo
            young.skip_k, young.skip_live = young.lo, 0    # a new tail entry: the memo starts over
            c.old_len -= 1

    def _pop_live(self, ring: Ring, kind: int, tail: bool) -> int:
        where, stamp = self.where, self.lru_stamp
        while len(ring):
            if tail:
                k = ring.lo
                ring.lo += 1
            else:
                ring.hi -= 1
                k = ring.hi
            page, s = ring.at(k)
            if where[page] == kind and stamp[page] == s:
                if k < ring.skip_k:
                    ring.skip_live -= 1
                self._clip_memo(ring)
                return page
        self._clip_memo(ring)
        return -1

    @staticmethod
    def _clip_memo(ring: Ring) -> None:
        if ring.skip_k < ring.lo:
            ring.skip_k, ring.skip_live = ring.lo, 0
        elif ring.skip_k > ring.hi:
            ring.skip_k = ring.hi

    def _push_head(self, ring: Ring, page: int, stamp: int) -> None:
        """A new LRU entry at the head of `ring`; the page remembers where it is."""
        ring.push_head(page, stamp)
        self.lru_pos[page] = ring.hi - 1

    def _memo_ring(self, page: int) -> Ring | None:
        """The LRU ring whose tail memo covers the page's live entry, if one does."""
        w = self.where[page]
        if w == ABSENT:
            return None
        ring = (self.old if w == OLD else self.young)[int(self.inst_of[page])]
        return ring if self.lru_pos[page] < ring.skip_k else None

    def _entry_dies(self, page: int) -> None:
        """The page's live LRU entry is about to go (evicted, or moved): keep the memo's count."""
        ring = self._memo_ring(page)
        if ring is not None:
            ring.skip_live -= 1

    def _may_be_evictable(self, page: int) -> None:
        """The page may have become clean and unfixed: a memo that covers it is dropped."""
        ring = self._memo_ring(page)
        if ring is not None:
            ring.skip_k, ring.skip_live = ring.lo, 0

    def unfix(self, pages) -> None:
        """Clear io_fix of pages chosen for a write that was not issued."""
        for p in pages:
            self.io_fix[p] = 0
            if self.oldest_lsn[p] == 0:
                self._may_be_evictable(p)

    def touch(self, pages: np.ndarray, now_s: float) -> np.ndarray:
        """Buffer-pool hits and misses for an access set; hits update the LRU. Returns the misses.

        buf_page_make_young_if_needed (5.6): old pages accessed innodb_old_blocks_time after their
        first access become young; young pages move to the head once they are "too old".
        """
        w = self.where[pages]
        misses = pages[w == ABSENT]
        if not self.lru_order_matters:
            return np.unique(misses) if len(misses) > 1 else misses
        old_hit = pages[w == OLD]
        if len(old_hit):
            ready = old_hit[now_s - self.first_access_s[old_hit] >= self.old_blocks_time_s]
            for page in sorted(set(ready.tolist())):      # np.unique's order, without its sort cost
                self._make_young(page)
        young_hit = pages[w == YOUNG]
        if len(young_hit):
            inst = self.inst_of[young_hit]
            clock = np.array([c.freed_page_clock for c in self.inst], dtype=np.int64)[inst]
            young_len = np.array([c.lru_len - c.old_len for c in self.inst], dtype=np.int64)[inst]
            too_old = young_hit[clock - self.freed_clock_at[young_hit] > young_len // 4]
            for page in sorted(set(too_old.tolist())):
                self._make_young(page)
        return np.unique(misses) if len(misses) > 1 else misses

    def _make_young(self, page: int) -> None:
        i = int(self.inst_of[page])
        c = self.inst[i]
        if self.where[page] == OLD:
            c.old_len -= 1
        self._entry_dies(page)
        s = self._next_stamp()
        self.lru_stamp[page] = s
        self.where[page] = YOUNG
        self.freed_clock_at[page] = c.freed_page_clock
        self._push_head(self.young[i], page, s)
        self._adjust_old(i)

    def add_read_page(self, page: int, now_s: float, adjust: bool = True) -> None:
        """buf_LRU_add_block(old=TRUE): a page just read enters at the head of the old sublist.

        The frame must have been taken first (take_free_frame or lru_tail_scan). With
        adjust=False the old/young boundary is left for `adjust_old` (one call after many reads).
        """
        i = int(self.inst_of[page])
        c = self.inst[i]
        s = self._next_stamp()
        self.lru_stamp[page] = s
        self.first_access_s[page] = now_s
        self.freed_clock_at[page] = c.freed_page_clock
        c.lru_len += 1
        if c.lru_len >= BUF_LRU_OLD_MIN_LEN:
            self.where[page] = OLD
            self._push_head(self.old[i], page, s)
            c.old_len += 1
        else:
            self.where[page] = YOUNG
            self._push_head(self.young[i], page, s)
        if adjust:
            self._adjust_old(i)

    def adjust_old(self, instances) -> None:
        """buf_LRU_old_adjust_len for the given instances."""
        for i in instances:
            self._adjust_old(i)

    def take_free_frame(self, i: int) -> bool:
        """buf_LRU_get_free_only: a frame from the free list, if any."""
        c = self.inst[i]
        if c.free > 0:
            c.free -= 1
            return True
        return False

    def _evict(self, page: int) -> None:
        i = int(self.inst_of[page])
        c = self.inst[i]
        self._entry_dies(page)
        if self.where[page] == OLD:
            c.old_len -= 1
        self.where[page] = ABSENT
        c.lru_len -= 1
        c.free += 1
        c.freed_page_clock += 1

    def lru_tail_scan(self, i: int, max_scan: int, evict_clean: bool, want_dirty: int,
                      free_target: int | None = None,
                      min_len: int = BUF_LRU_MIN_LEN,
                      free_seen: list[int] | None = None) -> tuple[int, list[int]]:
        """Walk instance i's LRU from the tail (old sublist, then young).

        Clean, unfixed pages are evicted to the free list (when `evict_clean`) until the free list
        reaches `free_target`; up to `want_dirty` dirty unfixed pages are returned for writing
        (and stay in the LRU). LRU batches stop at BUF_LRU_MIN_LEN pages; a user thread looking
        for a free block (buf_LRU_scan_and_free_block) passes min_len=0.
        Returns (pages evicted, dirty pages chosen); `free_seen`, when given, gets the free list's
        length at the moment each dirty page was chosen (MariaDB's neighbour rule, models.buf_flush).
        buf_flush_LRU_list_batch / buf_LRU_scan_and_free_block (5.6).

        The walk is vectorised: chunks of the ring are classified at once (live, io-fixed, clean)
        and only the entries that lead to an action (evict, choose) are visited one by one; the
        result is the entry-by-entry walk's (tests/test_buffer_pool.py compares the two).
        """
        c = self.inst[i]
        where, stamp, fix, oldest = self.where, self.lru_stamp, self.io_fix, self.oldest_lsn
        evicted = 0
        dirty: list[int] = []
        scanned = 0

        def done() -> bool:
            return (c.lru_len <= min_len or (free_target is not None and c.free >= free_target)
                    or (want_dirty and len(dirty) >= want_dirty) or (not want_dirty and not evict_clean))

        clean_only = evict_clean and not want_dirty     # buf_LRU_scan_and_free_block's first pass
        for ring, kind in ((self.old[i], OLD), (self.young[i], YOUNG)):
            k = ring.lo
            ring_scanned = ring_evicted = 0
            if clean_only and ring.skip_k > ring.lo:
                # The memo: no clean unfixed page before skip_k; its live entries count as scanned.
                if done():
                    return evicted, dirty
                if ring.skip_live >= max_scan - scanned:
                    break
                k = ring.skip_k
                ring_scanned = ring.skip_live
                scanned += ring.skip_live
            finished = False
            # The first entries one by one: a user thread's scan usually ends at the tail entry,
            # and a vectorised chunk costs more than a few scalar steps.
            k_scalar = min(ring.hi, k + _SCALAR_ENTRIES)
            while k < k_scalar and scanned < max_scan:
                if done():
                    finished = True
                    break
                e = k & ring.mask
                page = int(ring.page[e])
                gone = True
                if where[page] == kind and stamp[page] == ring.stamp[e]:
                    scanned += 1
                    ring_scanned += 1
                    gone = False
                    if not fix[page]:
                        if oldest[page] == 0:
                            if evict_clean:
                                self._evict(page)
                                evicted += 1
                                ring_evicted += 1
                                gone = True
                        elif want_dirty > 0:
                            dirty.append(page)
                            if free_seen is not None:
                                free_seen.append(c.free)
                            fix[page] = 1
                            self.fix_newest[page] = self.newest_lsn[page]
                if ring.lo == k and gone:
                    ring.lo = k + 1
                k += 1
            chunk = 64
            while not finished and k < ring.hi and scanned < max_scan:
                if done():
                    finished = True
                    break
                end = min(ring.hi, k + chunk)
                chunk = min(chunk * 2, 65536)
                a, b = k & ring.mask, end & ring.mask
                if a < b:                                # no wrap: views, no index arrays
                    pages, stamps = ring.page[a:b], ring.stamp[a:b]
                else:
                    idx = np.arange(k, end) & ring.mask
                    pages, stamps = ring.page[idx], ring.stamp[idx]
                live = (where[pages] == kind) & (stamp[pages] == stamps)
                cum = np.cumsum(live)
                left = max_scan - scanned
                # Entries up to the live one that uses the last of the scan budget are examined.
                n = len(pages) if cum[-1] < left else int(np.searchsorted(cum, left)) + 1
                clean = oldest[pages[:n]] == 0
                act = live[:n] & (fix[pages[:n]] == 0) & ((clean & evict_clean) | (~clean & (want_dirty > 0)))
                gone = ~live[:n]                     # dead entries, and below: the ones evicted now
                stop = n
                for p in np.flatnonzero(act).tolist():
                    page = int(pages[p])
                    if clean[p]:
                        self._evict(page)
                        evicted += 1
                        ring_evicted += 1
                        gone[p] = True
                    else:
                        dirty.append(page)
                        if free_seen is not None:
                            free_seen.append(c.free)
                        fix[page] = 1
                        self.fix_newest[page] = self.newest_lsn[page]
                    if done():
                        stop = p + 1
                        finished = True
                        break
                scanned += int(cum[stop - 1])
                ring_scanned += int(cum[stop - 1])
                if ring.lo == k:                     # drop dead entries at the tail as we go
                    alive = np.flatnonzero(~gone[:stop])
                    ring.lo += int(alive[0]) if len(alive) else stop
                k += stop
                if finished:
                    break
            if clean_only and k > ring.skip_k:
                # Every clean unfixed live entry before k was evicted: the memo now reaches k.
                ring.skip_k, ring.skip_live = k, ring_scanned - ring_evicted
            self._clip_memo(ring)
            if finished:
                return evicted, dirty
            if scanned >= max_scan:
                break
        if evicted:
            self._adjust_old(i)
        return evicted, dirty

    def evict_if_clean(self, page: int) -> bool:
        """After an LRU write completes: free the page if it is still clean and resident."""
        if self.where[page] != ABSENT and self.oldest_lsn[page] == 0 and not self.io_fix[page]:
            self._evict(page)
            self._adjust_old(int(self.inst_of[page]))
            return True
        return False

    # -- modification and flush list -----------------------------------------------------------

    def modify(self, pages: np.ndarray, start_lsn: int, end_lsn: int) -> int:
        """mtr commit: pages dirtied; first-time-dirty ones go to their flush list in LSN order.

        The redo of the transaction spans [start_lsn, end_lsn); each page's first modification is
        placed at an evenly spaced LSN inside it (the order of the pages in `pages`).
        Returns the number of pages dirtied for the first time.
        """
        n = len(pages)
        if n == 0:
            return 0
        span = max(0, end_lsn - start_lsn)
        lsns = start_lsn + (np.arange(n, dtype=np.int64) * span) // n
        clean = self.oldest_lsn[pages] == 0
        self.newest_lsn[pages] = end_lsn
        if not clean.any():
            return 0
        first = pages[clean]
        first_lsn = lsns[clean]
        if len(first) > 1:
            first, idx = np.unique(first, return_index=True)
            first_lsn = first_lsn[idx]
            order = np.argsort(first_lsn, kind="stable")
            first, first_lsn = first[order], first_lsn[order]
        self.oldest_lsn[first] = first_lsn
        self._oldest_all = -1
        inst = self.inst_of[first]
        for i in np.unique(inst).tolist():
            sel = inst == i
            self.flush[i].extend_head(first[sel], first_lsn[sel])
            self.inst[i].flush_list_len += int(sel.sum())
        return len(first)

    def modify_lsns(self, pages: np.ndarray, lsns: np.ndarray, end_lsns: np.ndarray) -> int:
        """`modify` for many transactions at once: page k modified at lsns[k] by a mini-transaction
        ending at end_lsns[k]; lsns must be non-decreasing. Returns pages dirtied for the first time."""
        if len(pages) == 0:
            return 0
        clean = self.oldest_lsn[pages] == 0
        self.newest_lsn[pages] = end_lsns          # later duplicates win: the newest modification
        if not clean.any():
            return 0
        first = pages[clean]
        first_lsn = lsns[clean]
        self._oldest_all = -1
        if self.n_instances > 1 and len(first) < 32:
            # Few pages: the same dedup and (LSN, page) order in Python, one push each.
            oldest_at = {}
            for page, lsn in zip(first.tolist(), first_lsn.tolist()):
                if page not in oldest_at:
                    oldest_at[page] = lsn          # first occurrence: the smallest LSN
            order = sorted((lsn, page) for page, lsn in oldest_at.items())
            flush, counters, oldest, inst_of = self.flush, self.inst, self.oldest_lsn, self.inst_of
            for lsn, page in order:
                oldest[page] = lsn
                i = inst_of.item(page)
                flush[i].push_head(page, lsn)
                counters[i].flush_list_len += 1
            return len(order)
        if len(first) > 1:
            first, idx = np.unique(first, return_index=True)
            first_lsn = first_lsn[idx]             # first occurrence: the smallest LSN
            order = np.argsort(first_lsn, kind="stable")
            first, first_lsn = first[order], first_lsn[order]
        self.oldest_lsn[first] = first_lsn
        inst = self.inst_of[first]
        if self.n_instances == 1:
            self.flush[0].extend_head(first, first_lsn)
            self.inst[0].flush_list_len += len(first)
            return len(first)
        by_inst = np.argsort(inst, kind="stable")     # per instance, still in LSN order
        first, first_lsn = first[by_inst], first_lsn[by_inst]
        end = 0
        for i, count in enumerate(np.bincount(inst, minlength=self.n_instances).tolist()):
            if count:
                start, end = end, end + count
                self.flush[i].extend_head(first[start:end], first_lsn[start:end])
                self.inst[i].flush_list_len += count
        return len(first)

    def _flush_tail(self, i: int) -> int:
        """Drop dead entries at the tail of instance i's flush list; return the tail index."""
        ring = self.flush[i]
        oldest = self.oldest_lsn
        while ring.lo < ring.hi:
            page, lsn = ring.at(ring.lo)
            if oldest.item(page) == lsn:
                break
            ring.lo += 1
        return ring.lo

    def oldest_modification(self, i: int) -> int:
        """buf_pool_get_oldest_modification for one instance: 0 when it has no dirty page."""
        k = self._flush_tail(i)
        ring = self.flush[i]
        return ring.at(k)[1] if k < ring.hi else 0

    def oldest_modification_all(self) -> int:
        """The smallest oldest_modification over all instances, 0 when nothing is dirty.

        Kept until a page is dirtied for the first time or a write completes (the only changes
        to any oldest_modification); log_close asks for it at every log_free_check."""
        best = self._oldest_all
        if best >= 0:
            return best
        best = 0
        for i in range(self.n_instances):
            o = self.oldest_modification(i)
            if o and (best == 0 or o < best):
                best = o
        self._oldest_all = best
        return best

    def count_below(self, i: int, lsn_limit: int, cap: int) -> int:
        """Dirty pages of instance i with oldest_modification <= lsn_limit, counted from the tail
        and stopping at cap (the scan of page_cleaner_flush_pages_recommendation, 5.7+)."""
        ring = self.flush[i]
        k = self._flush_tail(i)
        count = 0
        while k < ring.hi and count < cap:
            end = min(ring.hi, k + max(256, 2 * (cap - count)))
            idx = np.arange(k, end) & ring.mask
            pages, stamps = ring.page[idx], ring.stamp[idx]
            live = self.oldest_lsn[pages] == stamps
            over = np.flatnonzero(stamps > lsn_limit)
            if len(over):
                count += int(live[: over[0]].sum())
                break
            count += int(live.sum())
            k = end
        return min(count, cap)

    def flush_list_batch(self, i: int, max_pages: int, lsn_limit: int) -> list[int]:
        """buf_do_flush_list_batch (5.6): from the tail, unfixed dirty pages below lsn_limit.

        Chosen pages are io-fixed (they stay on the flush list until their write completes).
        """
        ring = self.flush[i]
        oldest, fix = self.oldest_lsn, self.io_fix
        out: list[int] = []
        k = self._flush_tail(i)
        while k < ring.hi and len(out) < max_pages:
            page, lsn = ring.at(k)
            k += 1
            if lsn >= lsn_limit:
                break
            if oldest[page] != lsn or fix[page]:
                continue
            fix[page] = 1
            self.fix_newest[page] = self.newest_lsn[page]
            out.append(page)
        return out

    def neighbours(self, page: int, mode: int, old_only: bool) -> list[int]:
        """buf_flush_try_neighbors: dirty, unfixed, resident pages of the same 64-page area.

        mode 1: the contiguous run around `page`; mode 2: every such page of the area. `old_only`:
        only pages of the old sublist qualify (MySQL's LRU flushes, 5.6 to 8.4; MariaDB 10.5+ takes
        any, buf_flush_check_neighbor). The victim itself is not returned.
        """
        if mode == 0:
            return []
        i = int(self.inst_of[page])
        if self.inst[i].lru_len < BUF_LRU_OLD_MIN_LEN:
            return []
        pps = self.pages_per_space
        base = page - (page % pps)
        lo = base + ((page - base) // READ_AHEAD_AREA_PAGES) * READ_AHEAD_AREA_PAGES
        hi = min(base + pps, lo + READ_AHEAD_AREA_PAGES, self.n_pages)
        if mode == 1:
            # The contiguous run around the victim, page by page (most runs are short).
            oldest, fix, where = self.oldest_lsn, self.io_fix, self.where

            def ok(p: int) -> bool:
                w = where.item(p)
                return oldest.item(p) != 0 and fix.item(p) == 0 and (w == OLD if old_only else w != ABSENT)

            a = page
            while a - 1 >= lo and ok(a - 1):
                a -= 1
            b = page
            while b + 1 < hi and ok(b + 1):
                b += 1
            cand = [p for p in range(a, b + 1) if p != page]
        else:
            ok = (self.oldest_lsn[lo:hi] != 0) & (self.io_fix[lo:hi] == 0) & (self.where[lo:hi] != ABSENT)
            if old_only:
                ok &= self.where[lo:hi] == OLD
            cand = [lo + int(x) for x in np.flatnonzero(ok) if lo + int(x) != page]
        for p in cand:
            self.io_fix[p] = 1
            self.fix_newest[p] = self.newest_lsn[p]
        return cand

    def write_complete(self, page: int, lsn_now: int) -> bool:
        """buf_flush_write_complete: the page is clean and leaves its flush list.

        In the server a page being written is S-latched until the write completes, so a thread
        that wants to modify it waits and its change comes after the write. The user-thread model
        applies changes without that wait; a page changed while its write was in flight is
        therefore re-dirtied here, at the current LSN, as the waiting change would have done.
        Returns True when the page is clean afterwards.
        """
        if not self.io_fix[page]:
            self.double_completions += 1          # a write completed twice: a bug (tests check 0)
        self.io_fix[page] = 0
        self.writes_completed += 1
        self._oldest_all = -1
        if self.oldest_lsn[page] == 0:
            self._may_be_evictable(page)
            return False
        i = int(self.inst_of[page])
        if self.newest_lsn[page] <= self.fix_newest[page]:
            self.oldest_lsn[page] = 0
            self.inst[i].flush_list_len -= 1
            if self.written_newest is not None:
                self.written_newest[page] = self.newest_lsn[page]
            self._may_be_evictable(page)
            return True
        self.oldest_lsn[page] = lsn_now
        if self.newest_lsn[page] < lsn_now:
            self.newest_lsn[page] = lsn_now
        self.flush[i].push_head(page, lsn_now)
        return False

    # -- checks (tests) ------------------------------------------------------------------------

    def track_writes(self) -> None:
        """Remember, per page, the newest_modification its last completed write carried."""
        self.written_newest = np.zeros(self.n_pages, dtype=np.int64)

    def unwritten_changes(self) -> int:
        """Pages modified at some point that are neither dirty nor written since (must be 0)."""
        if self.written_newest is None:
            raise RuntimeError("track_writes() was not called")
        lost = (self.newest_lsn > 0) & (self.oldest_lsn == 0) & (self.written_newest < self.newest_lsn)
        return int(np.count_nonzero(lost))

    def check_invariants(self) -> None:
        """Raise AssertionError when the counters disagree with the page state."""
        for i, c in enumerate(self.inst):
            mine = self.inst_of == i
            resident = int(np.count_nonzero(self.where[mine] != ABSENT))
            assert c.lru_len == resident, (i, c.lru_len, resident)
            assert c.free + c.lru_len == self.frames_per_instance, (i, c.free, c.lru_len)
            assert c.old_len == int(np.count_nonzero(self.where[mine] == OLD)), i
            dirty = int(np.count_nonzero(self.oldest_lsn[mine] != 0))
            assert c.flush_list_len == dirty, (i, c.flush_list_len, dirty)
        assert not np.any((self.oldest_lsn != 0) & (self.where == ABSENT)), "dirty page not resident"
        for i in range(self.n_instances):
            for ring, kind in ((self.old[i], OLD), (self.young[i], YOUNG)):
                if ring.skip_k <= ring.lo:
                    continue
                k = np.arange(ring.lo, ring.skip_k)
                pages = ring.page[k & ring.mask]
                live = (self.where[pages] == kind) & (self.lru_stamp[pages] == ring.stamp[k & ring.mask])
                assert ring.skip_live == int(live.sum()), ("memo count", i, kind)
                evictable = live & (self.oldest_lsn[pages] == 0) & (self.io_fix[pages] == 0)
                assert not evictable.any(), ("memo covers a clean page", i, kind)
                assert np.all(self.lru_pos[pages[live]] == k[live]), ("lru_pos", i, kind)
