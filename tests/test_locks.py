import pytest
import simpy

from models.locks import EXCL, SHARED, RWLock


def test_shared_holders_coexist_and_exclusive_waits():
    env = simpy.Environment()
    lock = RWLock(env, "t")
    assert lock.acquire(SHARED) is None
    assert lock.acquire(SHARED) is None
    ev = lock.acquire(EXCL)
    assert ev is not None and lock.waiters == 1
    lock.release(SHARED)
    assert not ev.triggered
    lock.release(SHARED)
    assert ev.triggered and lock.held


def test_fifo_shared_behind_waiting_exclusive():
    env = simpy.Environment()
    lock = RWLock(env, "t")
    lock.acquire(SHARED)
    w = lock.acquire(EXCL)
    r = lock.acquire(SHARED)   # would be compatible with the holder, but queues behind the writer
    assert r is not None and lock.waiters == 2
    lock.release(SHARED)
    assert w.triggered and not r.triggered
    lock.release(EXCL)
    assert r.triggered


def test_release_without_holder_is_an_error():
    lock = RWLock(simpy.Environment(), "t")
    with pytest.raises(RuntimeError):
        lock.release(EXCL)
    with pytest.raises(RuntimeError):
        lock.release(SHARED)


def test_exclusive_serializes_holders_in_simulation():
    env = simpy.Environment()
    lock = RWLock(env, "t")
    inside = []
    peak = [0]

    def worker():
        for _ in range(5):
            ev = lock.acquire(EXCL)
            if ev is not None:
                yield ev
            inside.append(1)
            peak[0] = max(peak[0], len(inside))
            yield env.timeout(1.0)
            inside.pop()
            lock.release(EXCL)

    for _ in range(4):
        env.process(worker())
    env.run()
    assert env.now == pytest.approx(20.0)
    assert peak[0] == 1
