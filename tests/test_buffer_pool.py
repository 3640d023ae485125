"""Buffer pool (5.6): instance mapping, lists, dirty accounting - without SimPy."""

import numpy as np
from hypothesis import given, settings, strategies as st

from models.buffer_pool import ABSENT, BufferPool, instance_of


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
    assert pool.unwritten_changes() == 0
    assert pool.double_completions == 0
