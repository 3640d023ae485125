"""Crash recovery: the redo a restarted server must scan and the pages it must read had it crashed
at a given moment, and how long that takes.

What the server does (recv_recovery_from_checkpoint_start, log/log0recv.cc, MySQL 5.6 to 8.x and
MariaDB 10.5+ alike; shared/research/innodb-flushing.md section 8):

* The scan starts at the checkpoint LSN in the log header and runs to the end of the log, so the
  redo to scan is lsn - last_checkpoint_lsn: the checkpoint age SHOW ENGINE INNODB STATUS prints,
  not the oldest dirty page's age.
* Each page with a record in that range is read (recv_read_in_area in 5.6, recv_sys_t::apply in
  MariaDB), whether it was dirty or already written when the server stopped: only the page's
  FIL_PAGE_LSN tells which records it holds. Those are the pages whose newest modification lies
  at or past the checkpoint (`pages_to_recover`).

How long: `recovery_s` adds a start with no recovery, the scan at a rate per byte of redo, and the
apply phase. The apply phase reads the pages at the data device's random-read rate of one page
(reads are asynchronous, many in flight) and applies the records on the CPU, which takes a time per
page (the read's completion, the page's records looked up and applied) and a time per byte of
redo; the longer of the two counts. The rates are `MEASURED_RATES`, from crashes of MariaDB 10.11
on this project's machine (validation/live/crash_recovery.py; the runs are in
validation/live/example/crash_recovery/, the fit in docs/ENGINE.md, "Crash recovery"). Other versions
and machines parse and apply at rates not measured here: the estimate names its source.

Batches (`batch_count`; MariaDB 10.11 recv_sys_t::add_block, recv_scan_log and recv_sys_t::apply,
log/log0recv.cc): the parsed records live in blocks taken from the buffer pool. When the pool has
none left ("Multi-batch recovery needed at LSN"), the first pass parses on to the end of the log
without storing, the records stored so far are applied as a batch, whose pages are written back
and evicted (apply(last_batch=false): buf_flush_sync_batch, buf_pool_invalidate), and the scan
resumes, batch after batch. How much redo the first pass and a rescan store per byte of pool was
read off the restarts' logs (`fit_batches`); the duration stays the one-batch formula (with the
most pages a batch reads), which predicted those restarts better than a batched one (docs/ENGINE.md,
"Crash recovery").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RecoveryRates:
    """CPU rates of recovery: a start with nothing to recover, the scan (read, parse and hash the
    records), and the apply (per page and per byte of redo, when the page reads are not the longer
    part)."""

    start_s: float
    scan_bytes_per_s: float
    apply_s_per_page: float
    apply_bytes_per_s: float
    source: str
    # The redo the first pass stores before the buffer pool is full, and a rescan after a batch,
    # per byte of innodb_buffer_pool_size (inf: always one batch).
    first_batch_redo_per_pool_byte: float = float("inf")
    batch_redo_per_pool_byte: float = float("inf")


@dataclass(frozen=True)
class RecoveryEstimate:
    """One moment's restart, or, with arrays, one per moment (the per-second series)."""

    redo_bytes: float | np.ndarray
    pages: float | np.ndarray
    start_s: float
    scan_s: float | np.ndarray
    read_s: float | np.ndarray
    apply_cpu_s: float | np.ndarray

    @property
    def apply_s(self) -> float | np.ndarray:
        return np.maximum(self.read_s, self.apply_cpu_s)

    @property
    def total_s(self) -> float:
        return self.start_s + self.scan_s + self.apply_s


# MariaDB 10.11.19 on this project's machine (2 vCPUs, AMD EPYC; ext4 on virtio, whose fio grid is
# the live example's `live-vda-ext4` profile, 44,583 random 16 KiB reads/s): the 24 crashes of
# validation/live/crash_recovery.py (validation/live/example/crash_recovery/), fitted by
# validation/fit_recovery_rates.py (fit_rates; the start is the runs' median clean restart); a crash
# held out is predicted within 11 % at the median, from -35 % to +36 %. The batch sizes are read
# off the 11 crashes applied in 2 or 3 batches (fit_batches) (docs/ENGINE.md, "Crash recovery").
MEASURED_RATES = RecoveryRates(start_s=0.173, scan_bytes_per_s=137.5 * 2**20, apply_s_per_page=40.9e-6,
                               apply_bytes_per_s=770.4 * 2**20,
                               source="MariaDB 10.11's, measured on a 2-vCPU EPYC up to 3,003 MiB of redo "
                                      "and 123,361 pages (docs/ENGINE.md, Crash recovery)",
                               first_batch_redo_per_pool_byte=0.4639, batch_redo_per_pool_byte=1.939)
# How far the formula was from the restarts measured in several batches (predicted over measured,
# less one: the lowest and the highest of the 11; validation/fit_recovery_rates.py).
MULTI_BATCH_ERROR_RANGE = (-0.10, 0.30)
# The largest crash measured: an estimate past either is an extrapolation, and the summary says so.
MEASURED_MAX_REDO_BYTES = 3_149_241_484
MEASURED_MAX_PAGES = 123_361


def pages_to_recover(newest_lsn: np.ndarray, checkpoint_lsn: int) -> int:
    """Pages with a redo record from the checkpoint on: those recovery reads (newest_modification
    >= checkpoint LSN, the scan starting at the checkpoint; a page never modified has 0). A page
    whose last mini-transaction ended exactly at the checkpoint is counted too: one more read at
    most per page of that mini-transaction."""
    return int(np.count_nonzero(newest_lsn >= max(1, checkpoint_lsn)))     # one pass: 8 ms over 16M pages


def batch_count(redo_bytes, pool_bytes: float, rates: RecoveryRates):
    """How many batches recovery applies this much redo in (numbers or arrays): one while the first
    pass stores it all, then one more for each rescan's worth of the rest."""
    redo = np.maximum(np.asarray(redo_bytes, dtype=np.float64), 0.0)
    rest = redo - pool_bytes * rates.first_batch_redo_per_pool_byte
    later = pool_bytes * rates.batch_redo_per_pool_byte
    more = np.where(rest > 0, np.maximum(np.ceil(np.maximum(rest, 0.0) / later), 1.0), 0.0)
    out = 1 + more.astype(np.int64)
    return int(out) if out.ndim == 0 else out


def recovery_s(redo_bytes, pages, page_read_iops: float, rates: RecoveryRates) -> RecoveryEstimate:
    """The restart's duration had the server crashed with this much redo past its checkpoint and
    this many pages to recover (numbers, or arrays of moments); `page_read_iops` is the data
    device's random-read capacity for one page."""
    if page_read_iops <= 0:
        raise ValueError("page_read_iops must be positive")
    redo = np.maximum(np.asarray(redo_bytes, dtype=np.float64), 0.0)
    pages = np.asarray(pages, dtype=np.float64)
    return RecoveryEstimate(redo_bytes=redo, pages=pages, start_s=rates.start_s,
                            scan_s=redo / rates.scan_bytes_per_s, read_s=pages / page_read_iops,
                            apply_cpu_s=pages * rates.apply_s_per_page + redo / rates.apply_bytes_per_s)


@dataclass(frozen=True)
class MeasuredCrash:
    """One crash of validation/live/crash_recovery.py: the redo the restart scanned, the pages it
    recovered, and how long its start, scan and apply took (from its log lines). A restart that
    needed several batches also gives the redo and pages of each batch (in order), the redo the
    first pass stored before the pool was full, the pool's size, and the seconds from there to the
    end of the log."""

    redo_bytes: int
    pages: int
    scan_s: float
    apply_s: float
    restart_s: float
    batch_redo_bytes: tuple[int, ...] = ()
    batch_pages: tuple[int, ...] = ()
    first_pass_redo_bytes: int | None = None
    pool_bytes: int | None = None
    skip_s: float | None = None

    @property
    def most_pages(self) -> int:
        """The pages the one formula counts for this restart: the most any of its batches read."""
        return max(self.batch_pages) if self.batch_pages else self.pages


def fit_rates(crashes: list[MeasuredCrash], source: str, start_s: float, page_read_iops: float) -> RecoveryRates:
    """Rates from measured crashes. The start is given (a clean restart's seconds, measured apart);
    the scan's bytes per second come from the scan phases of the crashes applied in one batch (their
    bytes over their seconds); the apply's time per page and per byte of redo are the non-negative
    pair that best predicts every crash's whole restart (least squares on the log of predicted over
    measured, a crash in several batches counted with the most pages any batch read). Needs two
    crashes, one of them applied in one batch."""
    from scipy.optimize import least_squares

    single = [c for c in crashes if not c.batch_pages]
    if len(crashes) < 2 or not single:
        raise ValueError("fit_rates needs two crashes, one of them applied in one batch")
    scan = sum(c.redo_bytes for c in single) / sum(c.scan_s for c in single)
    redo = np.array([c.redo_bytes for c in crashes], dtype=np.float64)
    pages = np.array([c.most_pages for c in crashes], dtype=np.float64)
    restart = np.array([c.restart_s for c in crashes])
    fixed = start_s + redo / scan

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.log((fixed + np.maximum(pages / page_read_iops, pages * x[0] + redo * x[1])) / restart)

    x0 = np.array([40e-6, 1.0 / (400 * 2**20)])
    x = least_squares(residuals, x0, x_scale=x0, bounds=([0.0, 0.0], [1e-2, 1e-6])).x
    return RecoveryRates(start_s=float(start_s), scan_bytes_per_s=float(scan), apply_s_per_page=float(x[0]),
                         apply_bytes_per_s=float(1.0 / x[1]) if x[1] > 0 else float("inf"), source=source)


def fit_batches(crashes: list[MeasuredCrash]) -> tuple[float, float]:
    """The batch sizes read off restarts that needed several batches: the redo the first pass stored
    before the pool was full, per byte of pool (the median), and the redo a rescan stored, per byte
    of pool (the median over batches that were neither the first nor the last; inf when no restart
    had one). Needs one such crash."""
    multi = [c for c in crashes if c.first_pass_redo_bytes is not None]
    if not multi:
        raise ValueError("fit_batches needs a crash recovered in several batches")
    middle = [b / c.pool_bytes for c in multi for b in c.batch_redo_bytes[1:-1]]
    return (float(np.median([c.first_pass_redo_bytes / c.pool_bytes for c in multi])),
            float(np.median(middle)) if middle else float("inf"))
