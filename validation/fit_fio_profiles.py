"""Fit the built-in device profiles from the real fio data in shared/data/fio, and report how well
each fit predicts runs it did not see (held out, then refitted on everything).

Held out: numjobs=16 where a set varies numjobs; the rpi-hothanh7-nvme set runs one job
throughout, so there each queue depth of its sweep (iodepth 2 to 128) is held out in turn and the
rows of all seven fits are counted together.

Usage: python validation/fit_fio_profiles.py [--data ../shared/data/fio] [--write]
With --write the profiles go to models/profiles/<name>.json (fitted on all jobs of the set).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from models.block_layer import BlockLayerConfig
from sim.calibrate import TARGETS, fit_device, fit_with_holdout, holdout_rows, predict_job
from sim.fio import read_fio_json

ROOT = Path(__file__).resolve().parent.parent
# The two SATA sets ran under CFQ with the kernel's defaults: their waits show its slices to the
# millisecond (2 processes each 32 or 64 deep: p99.5 at 100 ms, one cfq_slice_sync; 4 processes
# each 16 or 32 deep: p99.9 at 225 ms = 3 x 75 ms; 8 processes 16 deep: 263 ms = 7 x 37.5 ms, the
# slice cfq_scaled_cfqq_slice gives for 4 and 8 busy queues within target_latency 300 ms), and
# jobs of several processes each 8 or more deep lose a fifth of the throughput to cfq_quantum.
# SATA NCQ holds 32 commands; nr_requests is the kernel's default. The NVMe sets ran on blk-mq
# kernels without an elevator and are modelled as the device alone.
CFQ_SATA = BlockLayerConfig(elevator="cfq", queue_depth=32, nr_requests=128)
SETS = {   # profile name: (folder, file patterns, held-out job options, one fit each; host block layer)
    "intel-d3-s4610": ("fioplot-intel-d3-s4610", ["*.json"], ["numjobs=16"], CFQ_SATA),
    "samsung-pm883": ("fioplot-samsung-pm883", ["*.json"], ["numjobs=16"], CFQ_SATA),
    "sabrent-rocket4plus": ("samyaple-sabrent-rocket4plus-nvme", ["4k/*.json", "randrw50/*.json"], ["numjobs=16"],
                            None),
    "rpi-hothanh7-nvme": ("rpi-hothanh7-nvme", ["*.json"], [f"iodepth={d}" for d in (2, 4, 8, 16, 32, 64, 128)],
                          None),
}


def source_line(folder: Path) -> str:
    """The data set's provenance from its SOURCE.md: title, repository, commit, licence."""
    lines = (folder / "SOURCE.md").read_text().splitlines()
    keep = [lines[0].lstrip("# ").strip()]
    for ln in lines[1:]:
        if ln.startswith(("- Repository", "- Commit", "- Licence", "- fio")):
            keep.append(ln[2:].strip())
    return "; ".join(keep)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "fio"))
    ap.add_argument("--write", action="store_true", help="write models/profiles/<name>.json")
    args = ap.parse_args()
    data = Path(args.data)
    for name, (folder, patterns, holdouts, host) in SETS.items():
        files = sorted(f for pat in patterns for f in (data / folder).glob(pat))
        jobs = [j for f in files for j in read_fio_json(f)]
        rows = []
        for spec in holdouts:
            fit, _, held, _ = fit_with_holdout(jobs, spec, name, "cross-check", host)
            rows += holdout_rows([predict_job(fit, j, host) for j in held])
        summary = []
        for metric in TARGETS:
            sel = [r for r in rows if r["metric"] == metric]
            inside = sum(1 for r in sel if r["within_target"])
            med = float(np.median([abs(r["rel_error"]) for r in sel]))
            summary.append(f"{metric} {inside}/{len(sel)} within {TARGETS[metric]:.0%} (median |err| {med:.1%})")
        held = holdouts[0] if len(holdouts) == 1 else f"{holdouts[0].split('=')[0]} {', '.join(h.split('=')[1] for h in holdouts)} each"
        via = f" (through {host.elevator}, queue depth {host.queue_depth})" if host else ""
        print(f"{name}: {len(jobs)} jobs from {folder}; {held} held out{via}: " + "; ".join(summary))
        if args.write:
            full = fit_device(jobs, name, "fio data set " + source_line(data / folder), host)
            full.profile["description"] = (
                f"fitted by innosim calibrate fio from all {len(jobs)} jobs of {folder}; cross-prediction "
                f"with {held} held out: " + "; ".join(summary) + "".join(f"; {n}" for n in full.notes))
            out = ROOT / "models" / "profiles" / f"{name}.json"
            out.write_text(json.dumps(full.profile, indent=2) + "\n")
            print(f"  wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
