"""SimPy driver of the host's block layer (models.block_layer) in front of a Device.

A submitter's I/O takes a request (or waits, FIFO, for one to be freed), enters the elevator, and
starts on the device when the elevator hands it a free tag; the device's completion frees the tag
and the request and lets the elevator dispatch again. Only scheduling lives here; every rule is in
models.block_layer.

Two kinds of submitter use it. One that hands its I/O over and waits for it (iobench: one I/O per
process) calls `io`, and its I/Os wait here for their request. One that sleeps in allocation
itself (fio's io_submit, sim.calibrate) allocates through `layer`, calls `insert`, and is told
through `on_wake` when a freed request wakes it.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Callable

import simpy

from models.block_layer import BlockLayer, BlockLayerConfig, Request
from models.device import Device


class HostQueue:
    """`io(pid, op, size, after_s)` returns the event of that I/O's completion on the device, plus
    `after_s` (the host path back to the submitter). When the device has finished a request and the
    elevator has dispatched again, `on_done(rq)` is called (by default: the request's payload)."""

    def __init__(self, env: simpy.Environment, device: Device, cfg: BlockLayerConfig,
                 on_wake: Callable[[int, float], None] | None = None,
                 on_done: Callable[[Request], None] | None = None) -> None:
        self.env = env
        self.device = device
        self.layer = BlockLayer(cfg)
        self._blocked: dict[int, deque] = defaultdict(deque)    # pid -> its I/Os waiting for a request
        self.on_wake = on_wake or self._serve_blocked
        self.on_done = on_done or self._call_payload

    def io(self, pid: int, op: str, size: int, after_s: float = 0.0) -> simpy.Event:
        env = self.env
        done = env.event()
        rq = Request(pid, op, size, env.now, payload=lambda: self._succeed(done, after_s))
        blocked = self._blocked[pid]
        if not blocked and self.layer.try_allocate(pid, env.now):
            self.insert(rq)
        else:
            if not blocked:
                self.layer.wait_allocation(pid)
            blocked.append(rq)
        return done

    @staticmethod
    def _call_payload(rq: Request) -> None:
        rq.payload()

    def _succeed(self, done: simpy.Event, after_s: float) -> None:
        if after_s > 0.0:
            self.env.timeout(after_s).callbacks.append(lambda _ev: done.succeed())
        else:
            done.succeed()

    def insert(self, rq: Request) -> None:
        """An allocated request into the elevator, and whatever may start now onto the device."""
        now = self.env.now
        self.layer.insert(rq, now)
        self._start(self.layer.dispatch(now))

    def _start(self, rqs: list[Request]) -> None:
        if not rqs:
            return
        env, schedule, now = self.env, self.device.schedule_sized, self.env.now
        for rq in rqs:
            env.timeout(schedule(now, rq.op, rq.size) - now, rq).callbacks.append(self._finish)

    def _serve_blocked(self, pid: int, now: float) -> None:
        """The woken sleeper becomes a batcher and takes requests for the I/Os it handed over."""
        self.layer.set_batching(pid, now)
        blocked = self._blocked[pid]
        while blocked and self.layer.try_allocate(pid, now):
            self.layer.insert(blocked.popleft(), now)
        if blocked:
            self.layer.wait_allocation(pid)

    def _finish(self, ev: simpy.Event) -> None:
        rq = ev.value
        now = self.env.now
        woken = self.layer.complete(rq, now)
        if woken is not None:
            self.on_wake(woken, now)
        self._start(self.layer.dispatch(now))
        self.on_done(rq)
