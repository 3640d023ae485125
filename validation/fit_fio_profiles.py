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

from sim.calibrate import TARGETS, fit_device, fit_with_holdout, holdout_rows, simulate_job
from sim.fio import read_fio_json

ROOT = Path(__file__).resolve().parent.parent
SETS = {   # profile name: (folder, file patterns, held-out job options, one fit each)
    "intel-d3-s4610": ("fioplot-intel-d3-s4610", ["*.json"], ["numjobs=16"]),
    "samsung-pm883": ("fioplot-samsung-pm883", ["*.json"], ["numjobs=16"]),
    "sabrent-rocket4plus": ("samyaple-sabrent-rocket4plus-nvme", ["4k/*.json", "randrw50/*.json"], ["numjobs=16"]),
    "rpi-hothanh7-nvme": ("rpi-hothanh7-nvme", ["*.json"], [f"iodepth={d}" for d in (2, 4, 8, 16, 32, 64, 128)]),
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
    for name, (folder, patterns, holdouts) in SETS.items():
        files = sorted(f for pat in patterns for f in (data / folder).glob(pat))
        jobs = [j for f in files for j in read_fio_json(f)]
        rows = []
        for spec in holdouts:
            fit, _, held, _ = fit_with_holdout(jobs, spec, name, "cross-check")
            rows += holdout_rows([simulate_job(fit.profile, j, fit.think_s) for j in held])
        summary = []
        for metric in TARGETS:
            sel = [r for r in rows if r["metric"] == metric]
            inside = sum(1 for r in sel if r["within_target"])
            med = float(np.median([abs(r["rel_error"]) for r in sel]))
            summary.append(f"{metric} {inside}/{len(sel)} within {TARGETS[metric]:.0%} (median |err| {med:.1%})")
        held = holdouts[0] if len(holdouts) == 1 else f"{holdouts[0].split('=')[0]} {', '.join(h.split('=')[1] for h in holdouts)} each"
        print(f"{name}: {len(jobs)} jobs from {folder}; {held} held out: " + "; ".join(summary))
        if args.write:
            full = fit_device(jobs, name, "fio data set " + source_line(data / folder))
            full.profile["description"] = (
                f"fitted by innosim calibrate fio from all {len(jobs)} jobs of {folder}; cross-prediction "
                f"with {held} held out: " + "; ".join(summary) + "".join(f"; {n}" for n in full.notes))
            out = ROOT / "models" / "profiles" / f"{name}.json"
            out.write_text(json.dumps(full.profile, indent=2) + "\n")
            print(f"  wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
