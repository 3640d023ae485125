"""Buffer pool (5.6): instance mapping, lists, dirty accounting - without SimPy."""

import numpy as np
from hypothesis import given, settings, strategies as st

from models.buffer_pool import ABSENT, BufferPool, Ring, instance_of


def test_instance_of_mirrors_buf_pool_get():
    # fold = (space << 20) + space + (page_no >> 6); index = fold % n
    assert instance_of(1, 0, 8) == ((1 << 20) + 1) % 8
    assert instance_of(5, 64 * 3 + 7, 8) == ((5 << 20) + 5 + 3) % 8
    # A 64-page read-ahead area stays in one instance.
    assert len({int(instance_of(2, p, 8)) for p in range(128, 192)}) == 1


def _pool(n_pages=4096, inst=4, frames=800, pps=1024):
    return BufferPool(n_pages, inst, frames, pps, lru_scan_depth=64)


def test_preload_and_counts():
    pool = _pool()
    pool.preload(np.arange(4096))
    pool.check_invariants()
    assert pool.free_pages() + pool.lru_pages() == pool.total_frames


def test_flush_list_order_and_oldest():
    pool = _pool()
    pool.preload(np.arange(4096))
    resident = np.flatnonzero(pool.where != ABSENT)[:50]
    pool.modify_lsns(resident, np.arange(100, 150, dtype=np.int64), np.full(50, 200, dtype=np.int64))
    assert pool.dirty_pages() == 50
    assert pool.oldest_modification_all() == 100
    for i in range(pool.n_instances):
        batch = pool.flush_list_batch(i, 1000, 1 << 60)
        lsns = [int(pool.oldest_lsn[p]) for p in batch]
        assert lsns == sorted(lsns)
        for p in batch:
            assert pool.write_complete(p, 300)
    assert pool.dirty_pages() == 0 and pool.oldest_modification_all() == 0
    pool.check_invariants()


def test_page_changed_during_its_write_is_redirtied_at_current_lsn():
    pool = _pool()
    pool.preload(np.arange(4096))
    p = int(np.flatnonzero(pool.where != ABSENT)[0])
    pool.modify_lsns(np.array([p]), np.array([100]), np.array([110]))
    i = int(pool.inst_of[p])
    assert pool.flush_list_batch(i, 10, 1 << 60) == [p]
    pool.modify_lsns(np.array([p]), np.array([500]), np.array([510]))   # while the write is in flight
    assert not pool.write_complete(p, 600)
    assert pool.oldest_lsn[p] == 600 and pool.oldest_modification(i) == 600
    pool.check_invariants()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4095), st.integers(1, 5), st.booleans()), min_size=1, max_size=120),
       st.integers(1, 8))
def test_random_operations_keep_invariants(ops, inst):
    """free + LRU = instance size; flush list holds exactly the dirty pages; nothing modified is lost."""
    pool = BufferPool(4096, inst, 300, 1024, lru_scan_depth=32)
    pool.track_writes()
    lsn = 1000
    now = 0.0
    for page, n, flush in ops:
        now += 0.3
        pages = np.array([(page + 97 * k) % 4096 for k in range(n)], dtype=np.int64)
        misses = pool.touch(pages, now)
        for m in misses.tolist():
            i = int(pool.inst_of[m])
            if not pool.take_free_frame(i):
                ev, _ = pool.lru_tail_scan(i, 10_000, True, 0, free_target=1, min_len=0)
                if not ev:
                    _, dirty = pool.lru_tail_scan(i, 10_000, False, 1, min_len=0)
                    for d in dirty:
                        pool.write_complete(d, lsn)
                        pool.evict_if_clean(d)
                    assert pool.take_free_frame(i)
                else:
                    assert pool.take_free_frame(i)
            pool.add_read_page(m, now)
        resident = pages[pool.where[pages] != ABSENT]
        pool.modify_lsns(resident, np.full(len(resident), lsn, dtype=np.int64),
                         np.full(len(resident), lsn + 10, dtype=np.int64))
        lsn += 20
        if flush:
            for i in range(inst):
                for p in pool.flush_list_batch(i, 5, lsn):
                    pool.write_complete(p, lsn)
        pool.check_invariants()
        oldest = pool.oldest_modification_all()
        assert oldest == 0 or oldest <= lsn
        # The kept value is the smallest oldest_modification of any dirty page.
        dirty = pool.oldest_lsn[pool.oldest_lsn != 0]
        assert oldest == (int(dirty.min()) if len(dirty) else 0)
    assert pool.unwritten_changes() == 0
    assert pool.double_completions == 0


def _reference_tail_scan(pool, i, max_scan, evict_clean, want_dirty, free_target=None, min_len=256):
    """The entry-by-entry walk of buf_flush_LRU_list_batch / buf_LRU_scan_and_free_block, as
    BufferPool.lru_tail_scan did it before it was vectorised: the oracle for the fast version."""
    from models.buffer_pool import OLD, YOUNG

    c = pool.inst[i]
    where, stamp, fix, oldest = pool.where, pool.lru_stamp, pool.io_fix, pool.oldest_lsn
    evicted, dirty, scanned = 0, [], 0
    for ring, kind in ((pool.old[i], OLD), (pool.young[i], YOUNG)):
        k = ring.lo
        while k < ring.hi and scanned < max_scan:
            if c.lru_len <= min_len or (free_target is not None and c.free >= free_target) \
                    or (want_dirty and len(dirty) >= want_dirty) or (not want_dirty and not evict_clean):
                return evicted, dirty
            page, s = ring.at(k)
            if where[page] != kind or stamp[page] != s:
                if k == ring.lo:
                    ring.lo += 1
                k += 1
                continue
            scanned += 1
            if fix[page]:
                k += 1
                continue
            if oldest[page] == 0:
                if evict_clean:
                    pool._evict(page)
                    evicted += 1
                    if k == ring.lo:
                        ring.lo += 1
            elif len(dirty) < want_dirty:
                dirty.append(page)
                fix[page] = 1
                pool.fix_newest[page] = pool.newest_lsn[page]
            k += 1
        if scanned >= max_scan:
            break
    if evicted:
        pool._adjust_old(i)
    return evicted, dirty


def _state(pool):
    return (pool.where.tobytes(), pool.io_fix.tobytes(), pool.fix_newest.tobytes(),
            [(r.lo, r.hi) for r in pool.old + pool.young],
            [(c.free, c.lru_len, c.old_len, c.freed_page_clock) for c in pool.inst])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), dirty_frac=st.floats(0, 1), fixed_frac=st.floats(0, 0.3),
       max_scan=st.integers(1, 3000), evict_clean=st.booleans(), want_dirty=st.integers(0, 40),
       free_target=st.one_of(st.none(), st.integers(1, 400)), min_len=st.sampled_from([0, 256]))
def test_vectorised_tail_scan_matches_the_entry_by_entry_walk(seed, dirty_frac, fixed_frac, max_scan, evict_clean,
                                                             want_dirty, free_target, min_len):
    import copy

    rng = np.random.default_rng(seed)
    pool = BufferPool(8192, 1, 1200, 2048, lru_scan_depth=64)
    pool.preload(np.arange(8192))
    for step in range(6):                       # churn: touches make young, dead entries pile up
        pool.touch(rng.integers(0, 8192, 300), 2.0 * step)
    res = np.flatnonzero(pool.where != ABSENT)
    d = res[rng.random(len(res)) < dirty_frac]
    pool.modify_lsns(d, np.full(len(d), 100, dtype=np.int64), np.full(len(d), 110, dtype=np.int64))
    pool.io_fix[res[rng.random(len(res)) < fixed_frac]] = 1
    twin = copy.deepcopy(pool)
    got = pool.lru_tail_scan(0, max_scan, evict_clean, want_dirty, free_target=free_target, min_len=min_len)
    want = _reference_tail_scan(twin, 0, max_scan, evict_clean, want_dirty, free_target=free_target, min_len=min_len)
    assert got == want
    assert _state(pool) == _state(twin)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), ops=st.lists(st.sampled_from(["scan", "scan", "scan", "dirty", "complete",
                                                                   "touch", "read", "modify", "batch"]),
                                                 min_size=5, max_size=60),
       dirty_frac=st.floats(0.5, 0.99))
def test_tail_scan_memo_gives_the_walks_results_through_any_sequence(seed, ops, dirty_frac):
    """The memo of clean-page scans (Ring.skip_k) never changes a result: the same operations on two
    pools, one scanning with the fast walk and one with the entry-by-entry walk, agree at every step."""
    import copy

    rng = np.random.default_rng(seed)
    fast = BufferPool(6000, 1, 900, 2048, lru_scan_depth=64)
    fast.preload(np.arange(6000))
    res = np.flatnonzero(fast.where != ABSENT)
    d = res[rng.random(len(res)) < dirty_frac]
    fast.modify_lsns(d, np.full(len(d), 100, dtype=np.int64), np.full(len(d), 110, dtype=np.int64))
    ref = copy.deepcopy(fast)
    lsn, now = 200, 0.0
    for op in ops:
        now += 0.5
        if op in ("scan", "dirty", "batch"):
            args = {"scan": (int(rng.integers(1, 700)), True, 0, 1, 0),
                    "dirty": (10 ** 6, False, int(rng.integers(1, 5)), None, 0),
                    "batch": (int(rng.integers(1, 700)), True, int(rng.integers(1, 30)), None, 256)}[op]
            got = fast.lru_tail_scan(0, args[0], args[1], args[2], free_target=args[3], min_len=args[4])
            want = _reference_tail_scan(ref, 0, args[0], args[1], args[2], free_target=args[3], min_len=args[4])
            assert got == want, op
            if op == "scan" and got[0]:           # the freed frame is used by a page read in
                page = int(rng.choice(np.flatnonzero(fast.where == ABSENT)))
                for pool in (fast, ref):
                    assert pool.take_free_frame(0)
                    pool.add_read_page(page, now)
        elif op == "complete":                    # writes in flight finish (clean now, or re-dirtied)
            for p in np.flatnonzero(fast.io_fix).tolist()[: int(rng.integers(1, 20))]:
                assert fast.write_complete(p, lsn) == ref.write_complete(p, lsn)
                if rng.random() < 0.5:            # an LRU write frees its page; a flush-list one does not
                    assert fast.evict_if_clean(p) == ref.evict_if_clean(p)
        elif op == "touch":
            pages = rng.integers(0, 6000, 200)
            assert np.array_equal(fast.touch(pages, now), ref.touch(pages, now))
        elif op == "read":
            for page in rng.integers(0, 6000, 20).tolist():
                if fast.where[page] == ABSENT and fast.take_free_frame(0):
                    assert ref.take_free_frame(0)
                    fast.add_read_page(page, now)
                    ref.add_read_page(page, now)
        elif op == "modify":
            res = np.flatnonzero(fast.where != ABSENT)
            pages = rng.choice(res, size=min(50, len(res)), replace=False)
            for pool in (fast, ref):
                pool.modify_lsns(pages, np.full(len(pages), lsn, dtype=np.int64),
                                 np.full(len(pages), lsn + 5, dtype=np.int64))
            lsn += 10
        assert _state(fast)[:3] == _state(ref)[:3] and _state(fast)[4] == _state(ref)[4]
        fast.check_invariants()


def _modify_lsns_reference(pool, pages, lsns, end_lsns):
    """modify_lsns as np.unique + stable argsort, one push per page (the order the fast paths keep)."""
    clean = pool.oldest_lsn[pages] == 0
    pool.newest_lsn[pages] = end_lsns
    first, first_lsn = pages[clean], lsns[clean]
    if len(first) == 0:
        return 0
    first, idx = np.unique(first, return_index=True)
    first_lsn = first_lsn[idx]
    order = np.argsort(first_lsn, kind="stable")
    pool._oldest_all = -1                       # as BufferPool's own paths do
    for page, lsn in zip(first[order].tolist(), first_lsn[order].tolist()):
        pool.oldest_lsn[page] = lsn
        i = int(pool.inst_of[page])
        pool.flush[i].push_head(page, lsn)
        pool.inst[i].flush_list_len += 1
    return len(first)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.lists(st.tuples(st.lists(st.integers(0, 300), min_size=0, max_size=70),
                                             st.integers(0, 3)), min_size=1, max_size=6))
def test_modify_lsns_dedups_and_orders_like_unique_then_stable_argsort(n_inst, calls):
    """Repeated pages keep their first (smallest) LSN; equal LSNs go to the flush list by page id;
    small batches (the per-page path) and large ones (the vectorised path) alike."""
    fast, ref = (BufferPool(512, n_inst, 400, 64, lru_scan_depth=64) for _ in range(2))
    for pool in (fast, ref):
        pool.preload(np.arange(400))
    lsn = 1000
    for pages, step in calls:
        resident = np.array([p for p in pages if fast.where[p] != ABSENT], dtype=np.int64)
        # Non-decreasing LSNs with ties (step 0 gives every page the same LSN).
        lsns = lsn + step * np.arange(len(resident), dtype=np.int64) // 2
        ends = lsns + 7
        assert fast.modify_lsns(resident, lsns, ends) == _modify_lsns_reference(ref, resident, lsns, ends)
        lsn += 1000
        assert np.array_equal(fast.oldest_lsn, ref.oldest_lsn)
        assert np.array_equal(fast.newest_lsn, ref.newest_lsn)
        for i in range(n_inst):
            a, b = fast.flush[i], ref.flush[i]
            assert [a.at(k) for k in range(a.lo, a.hi)] == [b.at(k) for k in range(b.lo, b.hi)]
            assert fast.inst[i].flush_list_len == ref.inst[i].flush_list_len
        fast.check_invariants()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["extend", "tail", "drop"]), st.integers(0, 40)), max_size=40))
def test_ring_extend_head_equals_pushes_across_the_wrap(ops):
    """extend_head (slice writes, split where the ring wraps) holds what push_head one by one holds."""
    fast, ref = Ring(16), Ring(16)
    stamp = 0
    for op, n in ops:
        if op == "extend":
            pages = np.arange(stamp, stamp + n, dtype=np.int64)
            fast.extend_head(pages, pages * 10)
            for p in pages.tolist():
                ref.push_head(p, p * 10)
            stamp += n
        elif op == "tail":                      # push_tail moves lo below 0 and the ring's start around
            for ring in (fast, ref):
                ring.push_tail(-1 - n, n)
        else:
            for ring in (fast, ref):
                ring.lo = min(ring.hi, ring.lo + n)
        assert (fast.lo, fast.hi) == (ref.lo, ref.hi)
        assert [fast.at(k) for k in range(fast.lo, fast.hi)] == [ref.at(k) for k in range(ref.lo, ref.hi)]
