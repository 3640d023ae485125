"""Fit models.recovery's rates to the crashes validation/live/crash_recovery.py measured, and say how
well each crash is predicted by a fit to the others.

Every crash sets the apply rates (fitted to the whole restarts), those applied in one batch the scan
rate (from their scan phases), and those applied in several the batch sizes (read off their logs);
the start is the runs' median clean restart. A batched formula, tried and not adopted, is printed
beside the one formula (docs/ENGINE.md, "Crash recovery").

Usage: python validation/fit_recovery_rates.py [FILES...]
(default: validation/live/example/crash_recovery/*/crash_recovery.json)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from models.errors import InputError
from models.recovery import (MEASURED_RATES, MeasuredCrash, RecoveryRates, batch_count, fit_batches, fit_rates,
                             recovery_s)
from sim.units import parse_size_bytes

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = sorted((ROOT / "validation" / "live" / "example" / "crash_recovery").glob("*/crash_recovery.json"))
# The data device of those crashes: the live example's profile, fitted by fio on the same machine.
DEVICE = ROOT / "validation" / "live" / "example" / "device.json"

sys.path.insert(0, str(ROOT / "validation" / "live"))
from crash_recovery import batches_of  # noqa: E402  (the restart-log parsing beside the script that writes the logs)


CRASH_KEYS = ("redo_scanned_bytes", "to_recover_pages", "phases_s", "restart_s")


def read_run(path: Path) -> dict:
    """One crash_recovery.json, checked for what the fit reads; a damaged file raises InputError
    naming the file and the field."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(str(path), "", f"cannot be read as JSON: {err}",
                         "a crash_recovery.json of validation/live/crash_recovery.py") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("crashes"), list):
        raise InputError(str(path), "crashes", "missing or not a list")
    if not isinstance(doc.get("clean_restart_s"), (int, float)):
        raise InputError(str(path), "clean_restart_s", "missing or not a number")
    try:
        parse_size_bytes((doc.get("settings") or {}).get("buffer_pool"))
    except (InputError, TypeError, ValueError):
        raise InputError(str(path), "settings.buffer_pool", "missing or not a size", 'e.g. "2G"') from None
    for n, c in enumerate(doc["crashes"]):
        missing = [k for k in CRASH_KEYS if not isinstance(c, dict) or k not in c]
        if missing:
            raise InputError(str(path), f"crashes[{n}]", f"lacks {', '.join(missing)}")
    return doc


def crashes_of(path: Path, batches: str = "single") -> list[MeasuredCrash]:
    """The crashes of one crash_recovery.json: those applied in one batch ("single", what the rates
    are fitted to), in several ("multi", with their batches from the restart's log), or all."""
    doc = read_run(path)
    pool = parse_size_bytes(doc["settings"]["buffer_pool"])
    out = []
    for n, c in enumerate(doc["crashes"]):
        ph = c["phases_s"]
        if None in (c["redo_scanned_bytes"], c["to_recover_pages"], *ph.values()):
            continue                         # a restart whose log lacked a milestone
        log = path.parent / f"restart-{n}.log"
        b = batches_of(log.read_text()) if log.exists() else None
        if batches != "all" and (b is not None) != (batches == "multi"):
            continue
        extra = {"pool_bytes": pool}
        if b is not None:
            ends = [lsn for lsn, _ in b["batches"]] + [b["end"][1]]
            starts = [b["checkpoint"]] + ends[:-1]
            extra.update(batch_redo_bytes=tuple(e - s for s, e in zip(starts, ends)),
                         batch_pages=tuple(p for _, p in b["batches"]) + (b["last_pages"],),
                         first_pass_redo_bytes=b["oom"][1] - b["checkpoint"], skip_s=b["end"][0] - b["oom"][0])
        out.append(MeasuredCrash(redo_bytes=c["redo_scanned_bytes"], pages=c["to_recover_pages"],
                                 scan_s=ph["scan_end"] - ph["scan_start"], apply_s=ph["apply_end"] - ph["apply_start"],
                                 restart_s=c["restart_s"], **extra))
    return out


def clean_restart_s(files: list[Path]) -> float:
    """The start recovery adds to: the median clean restart of the runs (each run times one)."""
    return float(np.median([read_run(f)["clean_restart_s"] for f in files]))


def main() -> None:
    from models.device import load_profile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    args = ap.parse_args()
    crashes = [c for f in args.files for c in crashes_of(f, "all")]
    iops = load_profile(str(DEVICE)).capacity_iops(1.0, 16384)
    start = clean_restart_s(args.files)
    rates = fit_rates(crashes, MEASURED_RATES.source, start, iops)
    first, later = fit_batches(crashes)
    sized = replace(rates, first_batch_redo_per_pool_byte=first, batch_redo_per_pool_byte=later)
    print(f"{len(crashes)} crashes; fitted: start {rates.start_s:.3f} s (the median clean restart), scan "
          f"{rates.scan_bytes_per_s / 2**20:.1f} MiB/s, apply {rates.apply_s_per_page * 1e6:.1f} us a page + "
          f"{rates.apply_bytes_per_s / 2**20:.0f} MiB/s of redo; shipped (models.recovery.MEASURED_RATES): start "
          f"{MEASURED_RATES.start_s:.3f} s, scan {MEASURED_RATES.scan_bytes_per_s / 2**20:.1f} MiB/s, apply "
          f"{MEASURED_RATES.apply_s_per_page * 1e6:.1f} us a page + {MEASURED_RATES.apply_bytes_per_s / 2**20:.0f} "
          f"MiB/s; device reads {iops:,.0f} pages/s")
    print(f"batch sizes read off the logs: the first pass stored {first:.3f} bytes of redo per byte of buffer pool "
          f"before the pool was full, a rescan {later:.3f} (shipped: {MEASURED_RATES.first_batch_redo_per_pool_byte:.3f}"
          f" and {MEASURED_RATES.batch_redo_per_pool_byte:.3f})")
    print(f"{'pool MiB':>9} {'redo MiB':>9} {'batches':>7} {'pages':>8} {'restart s':>10} {'fit s':>7} {'error':>6} "
          f"{'held out s':>11} {'error':>6} {'batched, held out s':>20} {'error':>6}")
    fit_err, held_err, alt_err = [], [], []
    for k, c in enumerate(crashes):
        others = crashes[:k] + crashes[k + 1:]
        fit = recovery_s(c.redo_bytes, c.most_pages, iops, rates).total_s
        rates_k = fit_rates(others, "", start, iops)
        held = recovery_s(c.redo_bytes, c.most_pages, iops, rates_k).total_s
        fit_err.append(fit / c.restart_s - 1)
        held_err.append(held / c.restart_s - 1)
        alt = ""
        if c.batch_pages:
            multi_k = [o for o in others if o.batch_pages]
            b = Batched.fit(rates_k, multi_k, iops).total_s(c, iops)
            alt_err.append(b / c.restart_s - 1)
            alt = f"{b:20.2f} {alt_err[-1]:+6.0%}"
        n = batch_count(c.redo_bytes, c.pool_bytes, sized)
        print(f"{c.pool_bytes / 2**20:9,.0f} {c.redo_bytes / 2**20:9,.0f} {len(c.batch_pages) or 1:3d} ({n}) "
              f"{c.most_pages:8,d} {c.restart_s:10.2f} {fit:7.2f} {fit_err[-1]:+6.0%} {held:11.2f} {held_err[-1]:+6.0%} {alt}")
    multi = np.array([bool(c.batch_pages) for c in crashes])
    held_a, fit_a = np.array(held_err), np.array(fit_err)
    print(f"batches: as the log shows them (as models.recovery.batch_count gives them); pages: the most any batch read. "
          f"Held out (rates fitted to the other {len(crashes) - 1}): median |error| {np.median(np.abs(held_a)):.0%}, "
          f"from {held_a.min():+.0%} to {held_a.max():+.0%}; in one batch {np.median(np.abs(held_a[~multi])):.0%}, "
          f"in several {np.median(np.abs(held_a[multi])):.0%}. Fitted, the restarts in several batches: from "
          f"{fit_a[multi].min():+.0%} to {fit_a[multi].max():+.0%}")
    if alt_err:
        print(f"batched (not adopted; the first pass stores at the scan rate and parses on at a rate read off the logs, "
              f"each batch is applied as one batch is, with its pages read anew, and the rescans, with the write-back "
              f"before them, go at a rate fitted to the restarts), held out: median |error| "
              f"{np.median(np.abs(alt_err)):.0%}, from {min(alt_err):+.0%} to {max(alt_err):+.0%}")


@dataclass(frozen=True)
class Batched:
    """The batched restart formula tried and not adopted: the first pass stores the first batch at
    the one-batch scan rate and parses the rest without storing; after each batch but the last, its
    pages are written back and the log is scanned again; every batch is applied as one batch is
    (its pages read anew). The batch sizes are the logged ones."""

    rates: RecoveryRates
    skip_bytes_per_s: float
    rescan_bytes_per_s: float

    def total_s(self, c: MeasuredCrash, iops: float) -> float:
        r, first = self.rates, c.batch_redo_bytes[0]
        apply_s = sum(recovery_s(b, p, iops, r).apply_s for b, p in zip(c.batch_redo_bytes, c.batch_pages))
        return (r.start_s + first / r.scan_bytes_per_s + (c.redo_bytes - first) / self.skip_bytes_per_s
                + (c.redo_bytes - first) / self.rescan_bytes_per_s + float(apply_s))

    @classmethod
    def fit(cls, rates: RecoveryRates, multi: list[MeasuredCrash], iops: float) -> Batched:
        """The skip rate read off the logs (the median over crashes), the rescan rate by least squares
        on the log of predicted over measured restarts."""
        from scipy.optimize import minimize_scalar

        skip = float(np.median([(c.redo_bytes - c.first_pass_redo_bytes) / c.skip_s for c in multi]))

        def cost(log_rate: float) -> float:
            b = cls(rates, skip, math.exp(log_rate))
            return sum(math.log(b.total_s(c, iops) / c.restart_s) ** 2 for c in multi)

        res = minimize_scalar(cost, bounds=(math.log(1e6), math.log(1e11)), method="bounded")
        return cls(rates, skip, float(math.exp(res.x)))


if __name__ == "__main__":
    try:
        main()
    except InputError as err:
        print(f"fit_recovery_rates: {err}", file=sys.stderr)
        sys.exit(2)
