"""Fit models.recovery's rates to the crashes validation/live/crash_recovery.py measured, and say how
well each crash is predicted by a fit to the others.

Usage: python validation/fit_recovery_rates.py [FILES...]
(default: validation/live/example/crash_recovery/*/crash_recovery.json)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from models.recovery import MEASURED_RATES, MeasuredCrash, fit_rates, recovery_s

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = sorted((ROOT / "validation" / "live" / "example" / "crash_recovery").glob("*/crash_recovery.json"))
# The data device of those crashes: the live example's profile, fitted by fio on the same machine.
DEVICE = ROOT / "validation" / "live" / "example" / "device.json"


def multi_batch(path: Path, n: int) -> bool:
    """Whether crash n of the run in `path` recovered in several batches (its parsed records outgrew
    their share of the buffer pool), as its restart's log says."""
    log = path.parent / f"restart-{n}.log"
    return log.exists() and "Multi-batch recovery needed" in log.read_text()


def crashes_of(path: Path, batches: str = "single") -> list[MeasuredCrash]:
    """The crashes of one crash_recovery.json: those applied in one batch ("single", what the rates
    are fitted to), in several ("multi"), or all."""
    doc = json.loads(path.read_text())
    out = []
    for n, c in enumerate(doc["crashes"]):
        ph = c["phases_s"]
        if None in (c["redo_scanned_bytes"], c["to_recover_pages"], *ph.values()):
            continue                         # a restart whose log lacked a milestone
        if batches != "all" and multi_batch(path, n) != (batches == "multi"):
            continue
        out.append(MeasuredCrash(redo_bytes=c["redo_scanned_bytes"], pages=c["to_recover_pages"],
                                 scan_s=ph["scan_end"] - ph["scan_start"], apply_s=ph["apply_end"] - ph["apply_start"],
                                 restart_s=c["restart_s"]))
    return out


def main() -> None:
    from models.device import load_profile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    args = ap.parse_args()
    crashes = [c for f in args.files for c in crashes_of(f)]
    iops = load_profile(str(DEVICE)).capacity_iops(1.0, 16384)
    rates = fit_rates(crashes, MEASURED_RATES.source)
    print(f"{len(crashes)} crashes; fitted: start {rates.start_s:.3f} s, scan {rates.scan_bytes_per_s / 2**20:.1f} MiB/s, "
          f"apply {rates.apply_s_per_page * 1e6:.1f} us a page + {rates.apply_bytes_per_s / 2**20:.0f} MiB/s of redo; "
          f"shipped (models.recovery.MEASURED_RATES): start {MEASURED_RATES.start_s:.3f} s, scan "
          f"{MEASURED_RATES.scan_bytes_per_s / 2**20:.1f} MiB/s, apply {MEASURED_RATES.apply_s_per_page * 1e6:.1f} us "
          f"a page + {MEASURED_RATES.apply_bytes_per_s / 2**20:.0f} MiB/s; device reads {iops:,.0f} pages/s")
    print(f"{'redo MiB':>9} {'pages':>8} {'restart s':>10} {'fit s':>7} {'held out s':>11} {'error':>7}")
    errors = []
    for k, c in enumerate(crashes):
        fit = recovery_s(c.redo_bytes, c.pages, iops, rates).total_s
        others = fit_rates(crashes[:k] + crashes[k + 1:], "")
        held = recovery_s(c.redo_bytes, c.pages, iops, others).total_s
        errors.append(held / c.restart_s - 1.0)
        print(f"{c.redo_bytes / 2**20:9.0f} {c.pages:8,d} {c.restart_s:10.2f} {fit:7.2f} {held:11.2f} {errors[-1]:+7.0%}")
    print(f"held out: median |error| {np.median(np.abs(errors)):.0%}, largest {max(errors, key=abs):+.0%}")
    multi = [c for f in args.files for c in crashes_of(f, "multi")]
    if multi:
        print("applied in several batches (not fitted: models.recovery has one batch):")
        print(f"{'redo MiB':>9} {'pages':>8} {'restart s':>10} {'model s':>8} {'error':>7}")
        for c in multi:
            est = recovery_s(c.redo_bytes, c.pages, iops, rates).total_s
            print(f"{c.redo_bytes / 2**20:9.0f} {c.pages:8,d} {c.restart_s:10.2f} {est:8.2f} {est / c.restart_s - 1:+7.0%}")


if __name__ == "__main__":
    main()
