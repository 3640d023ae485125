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
validation/live/example/crash_recovery/, the fit in the README, "Crash recovery"). Other versions
and machines parse and apply at rates not measured here, and a recovery applied in several batches
takes longer than this one-batch model says: the estimate names its source.
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
# the live example's `live-vda-ext4` profile, 44,583 random 16 KiB reads/s): the 12 crashes of
# validation/live/crash_recovery.py applied in one batch (validation/live/example/crash_recovery/), fitted by
# validation/fit_recovery_rates.py (fit_rates); a crash held out is predicted within 16 % at the
# median and 57 % at worst (README, "Crash recovery").
MEASURED_RATES = RecoveryRates(start_s=0.317, scan_bytes_per_s=136.8 * 2**20, apply_s_per_page=42.3e-6,
                               apply_bytes_per_s=431.1 * 2**20,
                               source="MariaDB 10.11's, measured on a 2-vCPU EPYC up to 754 MiB of redo "
                                      "and 122,449 pages (README, Crash recovery)")
# The largest crash measured: an estimate past either is an extrapolation, and the summary says so.
MEASURED_MAX_REDO_BYTES = 791_030_117
MEASURED_MAX_PAGES = 122_449


def pages_to_recover(newest_lsn: np.ndarray, checkpoint_lsn: int) -> int:
    """Pages with a redo record from the checkpoint on: those recovery reads (newest_modification
    >= checkpoint LSN, the scan starting at the checkpoint; a page never modified has 0). A page
    whose last mini-transaction ended exactly at the checkpoint is counted too: one more read at
    most per page of that mini-transaction."""
    return int(np.count_nonzero(newest_lsn >= max(1, checkpoint_lsn)))     # one pass: 8 ms over 16M pages


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
    recovered, and how long its start, scan and apply took (from its log lines)."""

    redo_bytes: int
    pages: int
    scan_s: float
    apply_s: float
    restart_s: float


def fit_rates(crashes: list[MeasuredCrash], source: str) -> RecoveryRates:
    """Rates from measured crashes: the scan's bytes per second over all of them; the apply's time
    per page and per byte of redo by non-negative least squares; the start as the median of what
    the restarts spent outside scan and apply. Needs two crashes at least."""
    from scipy.optimize import nnls

    if len(crashes) < 2:
        raise ValueError("fit_rates needs two crashes at least")
    redo = np.array([c.redo_bytes for c in crashes], dtype=np.float64)
    pages = np.array([c.pages for c in crashes], dtype=np.float64)
    scan = np.array([c.scan_s for c in crashes])
    apply_ = np.array([c.apply_s for c in crashes])
    coef, _ = nnls(np.column_stack([pages, redo]), apply_)
    rest = np.array([c.restart_s - c.scan_s - c.apply_s for c in crashes])
    return RecoveryRates(start_s=float(max(0.0, np.median(rest))), scan_bytes_per_s=float(redo.sum() / scan.sum()),
                         apply_s_per_page=float(coef[0]),
                         apply_bytes_per_s=float(1.0 / coef[1]) if coef[1] > 0 else float("inf"),
                         source=source)
