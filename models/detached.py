"""A SimPy process that nobody waits for: each page write, each user thread in log_check_margins.

`start(env, gen)` runs `gen` as `env.process(gen)` would (an URGENT start event at the current
time, then the generator resumed by each event it yields, at once when that event was already
processed), but makes no Process event: nothing can wait for it, so its end schedules nothing.
Events keep their order (SimPy orders by time, priority, then schedule order; dropping the
never-awaited end events does not reorder the others), so a run gives the same result as with
`env.process`, with one event fewer per page write. An exception in the generator propagates
out of `env.run`, as an unhandled failed process does.

`start_waiting(env, gen)` is the same for a generator whose first statement is `yield event`
(a page write's completion handler): it is advanced to that yield at once and hooked on the event,
so even the start event is saved; the result is the same, since nothing happens before the yield.
"""

from __future__ import annotations

from simpy.core import URGENT
from simpy.events import Event


class _Detached:
    __slots__ = ("gen",)

    def __init__(self, gen) -> None:
        self.gen = gen

    def resume(self, event) -> None:
        gen = self.gen
        while True:
            try:
                if event._ok:
                    event = gen.send(event._value)
                else:
                    event._defused = True
                    event = gen.throw(event._value)
            except StopIteration:
                return
            if event.callbacks is not None:     # not yet processed: wait for it
                event.callbacks.append(self.resume)
                return


def start(env, gen) -> None:
    """Run generator `gen` as a process that no other process waits for."""
    ev = Event(env)
    ev.callbacks.append(_Detached(gen).resume)
    ev._ok = True
    ev._value = None
    env.schedule(ev, URGENT)


def start_waiting(env, gen) -> None:
    """`start(env, gen)` for a generator that does nothing before its first `yield event`."""
    ev = next(gen)
    if ev.callbacks is not None:               # pending: resumed when it is processed
        ev.callbacks.append(_Detached(gen).resume)
        return
    # Already processed: resume in a step of its own at this time, as start() would.
    step = Event(env)
    step.callbacks.append(lambda _step: _Detached(gen).resume(ev))
    step._ok = True
    step._value = None
    env.schedule(step, URGENT)
