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

    def files_of_offsets(self, offsets_bytes: np.ndarray) -> np.ndarray:
        """The file holding each offset: offset // file_bytes, the remainder of an uneven split in
        the last file."""
        return np.minimum(offsets_bytes // self.file_bytes, self.n_files - 1)


@dataclass(frozen=True)
class IobenchSpec:
    pattern: str
    block_bytes: int
    processes: int
    io_mode: str
    data_bytes: int
    page_cache_bytes: int = 0


class IobenchRecorder:
    """Completed I/Os inside the measurement window: latency and lock-wait samples (filled in by
    `iobench_process`)."""

    def __init__(self, start_s: float, end_s: float) -> None:
        self.start_s = start_s
        self.end_s = end_s
        self.latencies_s: list[float] = []
        self.lock_waits_s: list[float] = []
        self.done_times_s: list[float] = []
        self.ops = {READ: 0, WRITE: 0}
        self.submitted = 0
        self.completed = 0


def iobench_process(env, fs: Filesystem, spec: IobenchSpec, files: DataFiles,
                    rng: np.random.Generator, rec: IobenchRecorder, pid: int | None = None):
    """One IObench process: a closed loop of random I/Os until the simulation ends (`pid` names it
    to the host's block layer, where there is one)."""
    read_fraction = READ_FRACTION[spec.pattern]
    blocks = spec.data_bytes // spec.block_bytes
    hit_p = min(1.0, spec.page_cache_bytes / spec.data_bytes) if spec.io_mode == "fsync" else 0.0
    batch = 1024
    i = batch
    u_op = u_file = u_hit = None
    size = spec.block_bytes
    direct = spec.io_mode == "direct"
    inodes = fs.files
    one_file = files.n_files == 1
    # One tally for the process: its I/Os run one at a time, and nothing keeps a tally past its I/O.
    tally = Tally(pid)
    w_start, w_end, ops = rec.start_s, rec.end_s, rec.ops
    latencies, lock_waits, done_times = rec.latencies_s, rec.lock_waits_s, rec.done_times_s
    while True:
        if i >= batch:
            u_op = rng.random(batch).tolist()
            offsets = rng.integers(0, blocks, batch)
            u_file = None if one_file else files.files_of_offsets(offsets * size).tolist()
            u_hit = rng.random(batch).tolist() if hit_p > 0.0 else None
            i = 0
        op = READ if u_op[i] < read_fraction else WRITE
        inode = inodes[0 if one_file else u_file[i]]
        hit = u_hit is not None and u_hit[i] < hit_p
        i += 1
        tally.lock_wait_s = 0.0
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
        # The completion into the recorder: counted, and sampled inside the window.
        done = env.now
        rec.completed += 1
        if w_start <= done < w_end:
            latencies.append(done - t0)
            lock_waits.append(tally.lock_wait_s)
            done_times.append(done)
            ops[op] += 1
