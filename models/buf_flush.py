"""Flush batches of MySQL 5.6 (buf/buf0flu.cc): per-instance batch state, flush-list and LRU batches.

* buf_flush_start / buf_flush_end / buf_flush_wait_batch_end: one batch of each type (LIST, LRU)
  per instance at a time; an instance stays busy until the batch's last write completes
  (init_flush[type] or n_flush[type] > 0), and waiters are woken by its no_flush event.
* buf_flush_list(min_n, lsn_limit): instances in index order, ceil(min_n / instances) pages each,
  an instance with a batch running is skipped and the call reports failure; after each instance
  buf_flush_common pushes the partial doublewrite batch (spec 3.1, 4.1).
* buf_flush_LRU_tail (page cleaner): per instance, LRU batches of at most 100 written pages
  (PAGE_CLEANER_LRU_BATCH_CHUNK_SIZE) while the free list is below innodb_lru_scan_depth, waiting
  for each batch to end, until a batch writes nothing (spec 4.5.4).
* Neighbour flushing (innodb_flush_neighbors, spec 4.5.5): written along with their victim; the
  victim is always written, neighbours stop at the batch quota. MySQL's LRU flushes take only
  neighbours in the old sublist, and the pages an LRU flush wrote go to the free list when their
  write completes.
* MariaDB 10.5+ (`mariadb=True`; 10.11.18 buf/buf0flu.cc): buf_flush_check_neighbor takes any
  resident dirty page; buf_flush_LRU_list_batch flushes a victim's neighbours only while the free
  list holds at least half of innodb_lru_scan_depth; buf_page_write_complete frees no page (the
  next LRU batch finds the written pages clean at the tail).
"""

from __future__ import annotations

from models.server import FLUSH_KIND_COUNTER

LIST, LRU = 0, 1
ULINT_MAX = 1 << 62
PAGE_CLEANER_LRU_BATCH_CHUNK_SIZE = 100
_SELECT_CHUNK_PAGES = 256               # pages taken off a flush list per selection step


class FlushBatches:
    """buf_pool->init_flush / n_flush / no_flush for every instance and both batch types.

    MySQL (buf_flush_start, 5.6 to 8.0) refuses a batch while the previous one of that type is
    being issued or still has page writes in flight. MariaDB 10.5+ guards only the issuing
    (buf_pool.flush_list_active in buf_flush_list_holding_mutex; buf_flush_LRU has no guard, the
    page cleaner being its one caller): `writes_hold_batch=False`.
    """

    def __init__(self, env, n_instances: int, writes_hold_batch: bool = True) -> None:
        self.env = env
        self.writes_hold_batch = writes_hold_batch
        self.init_flush = [[False, False] for _ in range(n_instances)]
        self.n_flush = [[0, 0] for _ in range(n_instances)]
        self.no_flush = [[env.event().succeed(), env.event().succeed()] for _ in range(n_instances)]

    def busy(self, i: int, t: int) -> bool:
        return self.init_flush[i][t] or (self.writes_hold_batch and self.n_flush[i][t] > 0)

    def start(self, i: int, t: int) -> bool:
        """buf_flush_start: False when a batch of this type runs on the instance."""
        if self.busy(i, t):
            return False
        self.init_flush[i][t] = True
        self.no_flush[i][t] = self.env.event()
        return True

    def end(self, i: int, t: int) -> None:
        """buf_flush_end."""
        self.init_flush[i][t] = False
        if self.n_flush[i][t] == 0 and not self.no_flush[i][t].triggered:
            self.no_flush[i][t].succeed()

    def write_done(self, i: int, t: int) -> None:
        self.n_flush[i][t] -= 1
        if self.n_flush[i][t] == 0 and not self.init_flush[i][t] and not self.no_flush[i][t].triggered:
            self.no_flush[i][t].succeed()

    def wait_end(self, i: int, t: int):
        """buf_flush_wait_batch_end for one instance (SimPy generator): os_event_wait on no_flush
        returns once the event has been set after the wait began (os_event_wait_low's
        signal_count), even when another batch started on the instance before the thread ran."""
        if self.busy(i, t):
            yield self.no_flush[i][t]

    def wait_all_end(self, t: int):
        """buf_flush_wait_batch_end(NULL, type): every instance in turn."""
        for i in range(len(self.n_flush)):
            yield from self.wait_end(i, t)


class Flusher:
    """The flushing routines, shared by the page cleaner and the user threads."""

    def __init__(self, env, pool, dblwr, batches: FlushBatches, counters, settings, log,
                 mariadb: bool = False) -> None:
        self.env = env
        self.mariadb = mariadb
        self.pool = pool
        self.dblwr = dblwr
        self.batches = batches
        self.counters = counters
        self.s = settings
        self.log = log
        self.checksum_s = settings.page_checksum_s
        self.os_cache = None                       # models.os_page_cache, for buffered data files

    def _write(self, i: int, t: int, page: int, kind: str):
        """buf_flush_page + buf_flush_write_block_low: WAL first, then the page checksum in the
        flushing thread (buf_flush_init_for_writing, models.checksum), then into the doublewrite batch."""
        newest = int(self.pool.newest_lsn[page])
        if newest > self.log.flushed_lsn:
            yield self.log.writer.wait_flushed(newest)
        self.batches.n_flush[i][t] += 1
        if self.checksum_s:
            yield self.env.timeout(self.checksum_s)
        if self.os_cache is not None:
            self.os_cache.write(page)               # a buffered pwrite leaves the page cached
        yield from self.dblwr.add(page, t, kind)

    def write_group(self, i: int, t: int, victims: list[int], kind: str, quota: int, lru: bool,
                    with_neighbours: list[bool] | None = None):
        """Write victims with their neighbours; returns pages written (SimPy generator).

        Victims past the quota that were not reached are released (their io_fix cleared).
        `with_neighbours[k]` False: victim k is written alone.
        """
        pool, count, mode = self.pool, 0, self.s.flush_neighbors
        old_only = lru and not self.mariadb
        for k, page in enumerate(victims):
            if count >= quota:
                pool.unfix(victims[k:])
                break
            yield from self._write(i, t, page, kind)
            count += 1
            if mode and (with_neighbours is None or with_neighbours[k]):
                nbrs = pool.neighbours(page, mode, old_only)
                take = nbrs[: max(0, quota - count)]
                pool.unfix(nbrs[len(take):])
                for p in take:
                    yield from self._write(i, t, p, kind)
                count += len(take)
                if take:
                    self.counters.add("buffer_flush_neighbor_total_pages", len(take))
        if count:
            self.counters.add(FLUSH_KIND_COUNTER[kind], count)
        return count

    def flush_list_instance(self, i: int, quota: int, lsn_limit: int, kind: str):
        """buf_do_flush_list_batch on one instance (caller holds the LIST batch)."""
        count = 0
        while count < quota:
            victims = self.pool.flush_list_batch(i, min(_SELECT_CHUNK_PAGES, quota - count), lsn_limit)
            if not victims:
                break
            count += yield from self.write_group(i, LIST, victims, kind, quota - count, lru=False)
        return count

    def buf_flush_list(self, min_n: int, lsn_limit: int, kind: str):
        """buf_flush_list (5.6). Returns (success, pages written) (SimPy generator)."""
        n = self.pool.n_instances
        quota = min_n if min_n >= ULINT_MAX else (min_n + n - 1) // n
        success, total = True, 0
        for i in range(n):
            if not self.batches.start(i, LIST):
                success = False
                continue
            count = yield from self.flush_list_instance(i, quota, lsn_limit, kind)
            self.batches.end(i, LIST)
            yield from self.dblwr.flush_buffered(i, LIST)   # buf_flush_common
            total += count
        return success, total

    def lru_batch(self, i: int, max_pages: int, max_scan: int | None = None):
        """buf_flush_LRU (5.6) on one instance: evict clean tail pages, write dirty ones.
        5.7+ buf_flush_LRU_list passes max_scan = min(lru_scan_depth, LRU length)."""
        if not self.batches.start(i, LRU):
            return 0
        self.counters.add("buffer_LRU_batch_num_scan")
        pool = self.pool
        scan = pool.inst[i].lru_len if max_scan is None else max_scan
        free_seen: list[int] | None = [] if self.mariadb else None
        evicted, dirty = pool.lru_tail_scan(i, max_scan=scan, evict_clean=True, want_dirty=max_pages,
                                            free_target=self.s.lru_scan_depth, free_seen=free_seen)
        if evicted:
            pool.try_lru_scan = True        # MariaDB buf_flush_LRU: blocks were freed, scans may pay again
        count = 0
        if dirty:
            nbr = None
            if free_seen is not None:
                # MariaDB: neighbours only once the free list holds half of the free target.
                nbr = [2 * f >= self.s.lru_scan_depth for f in free_seen]
            count = yield from self.write_group(i, LRU, dirty, "lru", max_pages, lru=True, with_neighbours=nbr)
            if self.mariadb and count >= max_pages:
                # MariaDB buf_flush_LRU: the write quota ran out before the free list was full;
                # buf_do_LRU_batch(0) scans from the tail once more, evicting clean pages, passing
                # over the ones being written, and stopping at the first dirty page it could write
                # (buf_flush_LRU_list_batch's `n->flushed >= max` break).
                more, stop = pool.lru_tail_scan(i, max_scan=scan, evict_clean=True, want_dirty=1,
                                                free_target=self.s.lru_scan_depth)
                pool.unfix(stop)
                if more:
                    pool.try_lru_scan = True
        self.batches.end(i, LRU)
        yield from self.dblwr.flush_buffered(i, LRU)
        return count

    def buf_flush_LRU_list(self, i: int):
        """buf_flush_LRU_list (5.7+): one LRU batch per slot, scanning at most
        min(innodb_lru_scan_depth, LRU length) pages, until the free list holds lru_scan_depth."""
        if self.pool.inst[i].free >= self.s.lru_scan_depth:
            return 0
        depth = min(self.s.lru_scan_depth, self.pool.inst[i].lru_len)
        n = yield from self.lru_batch(i, depth, max_scan=depth)
        return n

    def flush_list_slot(self, i: int, quota: int, lsn_limit: int, kind: str):
        """buf_flush_do_batch(instance, LIST, quota, lsn_limit) of one page-cleaner slot (5.7+):
        returns (succeeded, pages); an instance already running a list batch is not flushed."""
        if quota <= 0:
            return True, 0
        if not self.batches.start(i, LIST):
            return False, 0
        count = yield from self.flush_list_instance(i, quota, lsn_limit, kind)
        self.batches.end(i, LIST)
        yield from self.dblwr.flush_buffered(i, LIST)
        return True, count

    def buf_flush_LRU_tail(self):
        """buf_flush_LRU_tail (5.6): every instance, in chunks of 100, waiting for each batch."""
        total = 0
        for i in range(self.pool.n_instances):
            depth = min(self.s.lru_scan_depth, self.pool.inst[i].lru_len)
            for _ in range(0, depth, PAGE_CLEANER_LRU_BATCH_CHUNK_SIZE):
                if self.pool.inst[i].free >= self.s.lru_scan_depth:
                    break
                n = yield from self.lru_batch(i, PAGE_CLEANER_LRU_BATCH_CHUNK_SIZE)
                yield from self.batches.wait_end(i, LRU)
                total += n
                if n == 0:
                    break
        return total

    def on_write_complete(self, page: int, t: int, kind: str) -> None:
        """buf_flush_write_complete: clean the page; LRU-written pages go to the free list (MySQL)."""
        pool = self.pool
        pool.write_complete(page, self.log.lsn)
        if t == LRU and not self.mariadb:
            pool.evict_if_clean(page)
        self.batches.write_done(int(pool.inst_of[page]), t)
