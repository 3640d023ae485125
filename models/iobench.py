"""IObench-like raw I/O workload (Dimitri Kravtchuk's IObench_v5, as used in the seed's first post).

Each process is a closed loop: pick an operation (Rrnd: read, Wrnd: write, RWrnd: 50/50), pick a
random block-aligned offset in the data set, do the I/O (O_DIRECT, or write() + fsync()), repeat.
The data set is split over N files of equal size, and an offset belongs to the file that holds it,
as pages of a multi-file InnoDB tablespace do (see `DataFiles`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.device import READ, WRITE
from models.filesystem import Filesystem, Tally

PATTERNS = ("rrnd", "wrnd", "rwrnd")
READ_FRACTION = {"rrnd": 1.0, "wrnd": 0.0, "rwrnd": 0.5}


@dataclass(frozen=True)
class DataFiles:
    """Pages laid out over files in order, as InnoDB's system tablespace does with
    `innodb_data_file_path = ibdata1:S;ibdata2:S;...` (fil_space_t nodes in order, fil0fil.cc)."""

    n_files: int
    total_bytes: int

    @property
    def file_bytes(self) -> int:
        return self.total_bytes // self.n_files

    def file_of_offset(self, offset_bytes: int) -> int:
        return min(offset_bytes // self.file_bytes, self.n_files - 1)


@dataclass(frozen=True)
class IobenchSpec:
    pattern: str
    block_bytes: int
    processes: int
    io_mode: str
    data_bytes: int
    page_cache_bytes: int = 0


class IobenchRecorder:
    """Completed I/Os inside the measurement window: latency and lock-wait samples."""

    def __init__(self, start_s: float, end_s: float) -> None:
        self.start_s = start_s
        self.end_s = end_s
        self.latencies_s: list[float] = []
        self.lock_waits_s: list[float] = []
        self.done_times_s: list[float] = []
        self.ops = {READ: 0, WRITE: 0}
        self.submitted = 0
        self.completed = 0

    def record(self, op: str, issued_s: float, done_s: float, lock_wait_s: float) -> None:
        self.completed += 1
        if self.start_s <= done_s < self.end_s:
            self.latencies_s.append(done_s - issued_s)
            self.lock_waits_s.append(lock_wait_s)
            self.done_times_s.append(done_s)
            self.ops[op] += 1


def iobench_process(env, fs: Filesystem, spec: IobenchSpec, files: DataFiles,
                    rng: np.random.Generator, rec: IobenchRecorder, pid: int | None = None):
    """One IObench process: a closed loop of random I/Os until the simulation ends (`pid` names it
    to the host's block layer, where there is one)."""
    read_fraction = READ_FRACTION[spec.pattern]
    blocks = spec.data_bytes // spec.block_bytes
    hit_p = min(1.0, spec.page_cache_bytes / spec.data_bytes) if spec.io_mode == "fsync" else 0.0
    batch = 1024
    i = batch
    u_op = u_off = u_hit = None
    size = spec.block_bytes
    direct = spec.io_mode == "direct"
    inodes = fs.files
    while True:
        if i >= batch:
            u_op = rng.random(batch).tolist()
            u_off = rng.integers(0, blocks, batch).tolist()
            u_hit = rng.random(batch).tolist() if hit_p > 0.0 else None
            i = 0
        op = READ if u_op[i] < read_fraction else WRITE
        inode = inodes[files.file_of_offset(u_off[i] * size)]
        hit = u_hit is not None and u_hit[i] < hit_p
        i += 1
        tally = Tally(pid)
        t0 = env.now
        rec.submitted += 1
        if op == READ:
            if direct:
                yield from fs.direct_read(inode, size, tally)
            else:
                yield from fs.buffered_read(inode, size, tally, hit)
        elif direct:
            yield from fs.direct_write(inode, size, tally)
        else:
            yield from fs.write_fsync(inode, size, tally)
        rec.record(op, t0, env.now, tally.lock_wait_s)
