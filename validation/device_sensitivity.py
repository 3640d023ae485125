"""How the 12-core DBT2 rows of `validate flushing` depend on the assumed storage.

The seed's 12-core box is described only in words ("my disks are not very fast", and after the
summer the same box "did not show any QPS drops anymore" because its "storage started to work
better"), so `seed-12core-disks-2012` is an assumption. This reruns every flushing row whose
scenarios run on it (the seed-dbt2-* scenarios but the 32-core ones) with that profile's random
16K write capacity, and optionally its QD1 latency, replaced, and prints each row per variant.
Nothing is fitted: the rows and scenarios are the suite's own, the device is the only change.

`--set section.key=value` (repeatable) changes a setting of every run as well, to see how the rows
move with the device and, say, the workload together.

`--merge` / `--no-merge` turn the block layer's merging of adjacent page writes
(`merge_adjacent_writes`) on or off; the shipped profile has it on since 2026-11-25.

Usage: python validation/device_sensitivity.py --write-iops 3000 4500 6000 [--latency-ms 1.4]
       [--merge | --no-merge] [--set workload.hot_data_pct=3 ...] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from validation.flushing import _run_one, evaluate, load_reference  # noqa: E402

PROFILE = ROOT / "models" / "profiles" / "seed-12core-disks-2012.json"
PAGE = "16384"


def variant_profile(write_iops: float, latency_s: float | None, folder: Path, merge: bool | None = None) -> Path:
    doc = json.loads(PROFILE.read_text())
    cls = doc["classes"]["write"][PAGE]
    cls["capacity_iops"] = write_iops
    if latency_s is not None:
        cls["latency_qd1_s"] = latency_s
    if merge is not None:
        doc["merge_adjacent_writes"] = merge
    doc["name"] = f"{doc['name']}-w{write_iops:g}"
    doc["description"] = (f"{doc['description']} Random 16K writes set to {write_iops:g}/s by device_sensitivity.py"
                          f"{'' if merge is None else (', adjacent page writes merged' if merge else ', no write merging')}.")
    path = folder / f"w{write_iops:g}.json"
    path.write_text(json.dumps(doc))
    return path


def _run(args: tuple[str, str, tuple[str, ...]]) -> tuple[tuple[str, str], dict]:
    name, device, extra = args
    return (name, device), _run_one(name, (f"hardware.device={device}", *extra))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-iops", type=float, nargs="+", required=True,
                    help="random 16K write capacities to try (the profile has 3000)")
    ap.add_argument("--latency-ms", type=float, default=None, help="QD1 write latency (the profile has 1.4)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for every run, as innosim run --set")
    merging = ap.add_mutually_exclusive_group()
    merging.add_argument("--merge", dest="merge", action="store_true", default=None,
                         help="let the block layer merge adjacent page writes (profile key merge_adjacent_writes)")
    merging.add_argument("--no-merge", dest="merge", action="store_false",
                         help="charge every page write as its own request (the profile before 2026-11-25)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    rows = [r for r in load_reference() if r.scenario.startswith("seed-dbt2-") and "32core" not in r.scenario]
    names = sorted({r.scenario for r in rows} | {r.b for r in rows if r.b})
    with tempfile.TemporaryDirectory(prefix="innosim-devsens-") as tmp:
        latency = None if args.latency_ms is None else args.latency_ms / 1000.0
        devices = {w: str(variant_profile(w, latency, Path(tmp), args.merge)) for w in args.write_iops}
        with ProcessPoolExecutor(max(1, args.jobs)) as ex:
            runs = dict(ex.map(_run, [(n, d, tuple(args.set)) for d in devices.values() for n in names]))
    for w, device in devices.items():
        results = [evaluate(r, {n: runs[(n, device)] for n in names}) for r in rows]
        passed = sum(1 for x in results if x.ok is True)
        failed = sum(1 for x in results if x.ok is False)
        merged = "" if args.merge is None else (", adjacent writes merged" if args.merge else ", no write merging")
        print(f"random 16K writes {w:g}/s{merged}{''.join(f', {x}' for x in args.set)}: {passed} passed, {failed} failed")
        for x in results:
            verdict = "n/a" if x.ok is None else ("ok" if x.ok else "FAIL")
            print(f"    {x.row.id:36s} published {x.published!s:>22}  simulated {x.simulated:10.4g}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
