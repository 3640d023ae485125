"""models.detached: a process nobody waits for keeps env.process's event order."""

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from models import detached


def _trace(spawn, delays_per_proc):
    """Run one generator per delay list; each records (time, proc, step) after every timeout, and
    also yields an already-processed event and a shared event another process triggers."""
    env = simpy.Environment()
    log = []
    gate = env.event()

    def proc(k, delays):
        for j, d in enumerate(delays):
            yield env.timeout(d)
            log.append((env.now, k, j))
            if j == 0 and k == 0 and not gate.triggered:
                gate.succeed()
        done = env.event().succeed()
        yield done                      # triggered, not yet processed
        yield gate                      # processed long ago (or waited for)
        log.append((env.now, k, "end"))

    def starter():
        for k, delays in enumerate(delays_per_proc):
            spawn(env, proc(k, delays))
            yield env.timeout(0)

    env.process(starter())
    env.run()
    return log


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=1, max_size=4), min_size=1, max_size=6))
def test_same_order_as_env_process(delays):
    assert _trace(detached.start, delays) == _trace(lambda env, g: env.process(g), delays)


def test_exception_propagates_out_of_run():
    env = simpy.Environment()

    def bad():
        yield env.timeout(1)
        raise ValueError("boom")

    detached.start(env, bad())
    with pytest.raises(ValueError, match="boom"):
        env.run()


def test_failed_event_is_thrown_into_the_generator():
    env = simpy.Environment()
    caught = []

    def waiter(ev):
        try:
            yield ev
        except RuntimeError as err:
            caught.append((env.now, str(err)))

    ev = env.event()
    detached.start(env, waiter(ev))
    env.run(until=1)
    ev.fail(RuntimeError("no"))
    env.run()
    assert caught == [(1, "no")]


def _trace_waiting(spawn, firsts):
    """One completion handler per entry of `firsts`, each starting with `yield first_event`: a
    pending timeout (a delay), an event triggered but not processed ("triggered"), or one processed
    long ago ("processed"); each then logs, waits 0.5 and logs again."""
    env = simpy.Environment()
    log = []
    old = env.event().succeed()

    def handler(k, first):
        yield first
        log.append((env.now, k, "first"))
        yield env.timeout(0.5)
        log.append((env.now, k, "after"))

    def starter():
        yield env.timeout(1)                   # `old` is processed by now
        for k, f in enumerate(firsts):
            ev = old if f == "processed" else env.event().succeed() if f == "triggered" else env.timeout(f)
            spawn(env, handler(k, ev))
            log.append((env.now, k, "spawned"))
            yield env.timeout(0)

    env.process(starter())
    env.run()
    return log


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, "triggered", "processed"]), min_size=1, max_size=8))
def test_start_waiting_same_order_as_env_process(firsts):
    assert _trace_waiting(detached.start_waiting, firsts) == _trace_waiting(lambda env, g: env.process(g), firsts)
