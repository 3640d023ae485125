"""SimPy driver of the host's block layer (models.block_layer) in front of a Device.

A submitter's I/O takes a request (or waits, FIFO, for one to be freed), enters the elevator, and
starts on the device when the elevator hands it a free tag; the device's completion frees the tag
and the request and lets the elevator dispatch again. Only scheduling lives here; every rule is in
models.block_layer.
"""

from __future__ import annotations

from collections import defaultdict, deque

import simpy

from models.block_layer import BlockLayer, BlockLayerConfig, Request
from models.device import Device


class HostQueue:
    """`io(pid, op, size, after_s)` returns the event of that I/O's completion on the device, plus
    `after_s` (the host path back to the submitter)."""

    def __init__(self, env: simpy.Environment, device: Device, cfg: BlockLayerConfig) -> None:
        self.env = env
        self.device = device
        self.layer = BlockLayer(cfg)
        self._blocked: dict[int, deque] = defaultdict(deque)    # pid -> its I/Os waiting for a request

    def io(self, pid: int, op: str, size: int, after_s: float = 0.0) -> simpy.Event:
        env = self.env
        done = env.event()
        rq = Request(pid, op, size, env.now, payload=(done, after_s))
        blocked = self._blocked[pid]
        if not blocked and self.layer.try_allocate(pid, env.now):
            self._insert(rq)
        else:
            if not blocked:
                self.layer.wait_allocation(pid)
            blocked.append(rq)
        return done

    def _insert(self, rq: Request) -> None:
        now = self.env.now
        self.layer.insert(rq, now)
        self._start(self.layer.dispatch(now))

    def _start(self, rqs: list[Request]) -> None:
        env, dev = self.env, self.device
        for rq in rqs:
            ev = env.timeout(dev.schedule_sized(env.now, rq.op, rq.size) - env.now, rq)
            ev.callbacks.append(self._finish)

    def _finish(self, ev: simpy.Event) -> None:
        rq = ev.value
        now = self.env.now
        woken = self.layer.complete(rq, now)
        if woken is not None:
            # the woken sleeper becomes a batcher and takes requests for what it was submitting
            self.layer.set_batching(woken, now)
            blocked = self._blocked[woken]
            while blocked and self.layer.try_allocate(woken, now):
                self.layer.insert(blocked.popleft(), now)
            if blocked:
                self.layer.wait_allocation(woken)
        self._start(self.layer.dispatch(now))
        done, after_s = rq.payload
        if after_s > 0.0:
            self.env.timeout(after_s).callbacks.append(lambda _ev: done.succeed())
        else:
            done.succeed()
