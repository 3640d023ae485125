"""Per-inode reader/writer locks: ext4's i_mutex / i_rwsem, XFS's IOLOCK and ILOCK.

FIFO hand-off as a Linux rw_semaphore does it: a shared request queued behind a waiting exclusive
one waits too. `acquire` returns None when the lock is granted at once (no SimPy event spent),
otherwise an event that fires on grant.
"""

from __future__ import annotations

from collections import deque

SHARED = "shared"
EXCL = "excl"


class RWLock:
    """One lock of one inode."""

    __slots__ = ("env", "name", "_excl", "_shared", "_queue", "acquisitions", "contended")

    def __init__(self, env, name: str) -> None:
        self.env = env
        self.name = name
        self._excl = False
        self._shared = 0
        self._queue: deque = deque()
        self.acquisitions = 0
        self.contended = 0

    def _free_for(self, mode: str) -> bool:
        if mode == EXCL:
            return not self._excl and self._shared == 0
        return not self._excl

    def _take(self, mode: str) -> None:
        if mode == EXCL:
            self._excl = True
        else:
            self._shared += 1
        self.acquisitions += 1

    def acquire(self, mode: str):
        """None if granted now, else an event that fires when granted (FIFO)."""
        if not self._queue:                             # _free_for and _take, written out
            if mode == EXCL:
                if not self._excl and self._shared == 0:
                    self._excl = True
                    self.acquisitions += 1
                    return None
            elif not self._excl:
                self._shared += 1
                self.acquisitions += 1
                return None
        ev = self.env.event()
        self._queue.append((mode, ev))
        self.contended += 1
        return ev

    def release(self, mode: str) -> None:
        if mode == EXCL:
            if not self._excl:
                raise RuntimeError(f"{self.name}: exclusive release without a holder")
            self._excl = False
        else:
            if self._shared <= 0:
                raise RuntimeError(f"{self.name}: shared release without a holder")
            self._shared -= 1
        queue = self._queue
        while queue and self._free_for(queue[0][0]):
            mode_next, ev = queue.popleft()
            self._take(mode_next)
            ev.succeed()

    @property
    def waiters(self) -> int:
        """Requests queued (not yet granted)."""
        return len(self._queue)

    @property
    def held(self) -> bool:
        return self._excl or self._shared > 0
