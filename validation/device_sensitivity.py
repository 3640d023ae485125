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
`--cache-mb` sets the controller's write cache (one variant per size and write capacity; 0 removes
it, so every write waits for its unit); the shipped profile has 256 MB since 2026-11-26.

`--write-scale F ...` instead of `--write-iops`: a slower or faster array as a whole. Since the
block layer merges adjacent page writes (2026-11-25) and the cache gathers the logs' appends
(2026-11-26), much of the array's write work goes to its 256K and 1 MiB classes, which
`--write-iops` leaves alone; F multiplies every write class's capacity and divides its QD1
latency (so each class keeps the units its profile gives it), reads and the cache unchanged.

Usage: python validation/device_sensitivity.py --write-iops 3000 4500 6000 [--latency-ms 1.4]
       [--merge | --no-merge] [--cache-mb 0 64 256] [--set workload.hot_data_pct=3 ...] [--jobs 2]
       python validation/device_sensitivity.py --write-scale 0.4 0.55 1 [--cache-mb ...] [...]
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

from models.device import load_profile  # noqa: E402
from models.errors import InputError  # noqa: E402
from validation.flushing import _run_one, evaluate, load_reference  # noqa: E402

PROFILE = ROOT / "models" / "profiles" / "seed-12core-disks-2012.json"
PAGE = "16384"


def cache_label(cache_mb: float | None) -> str:
    """How a variant's write cache is named in its description and in the printed results."""
    if cache_mb is None:
        return ""
    return f", write cache {cache_mb:g} MB" if cache_mb > 0 else ", no write cache"


def variant_profile(write_iops: float | None, latency_s: float | None, folder: Path, merge: bool | None = None,
                    cache_mb: float | None = None, write_scale: float | None = None) -> Path:
    """The assumed profile with random 16K writes at `write_iops` (and `latency_s`), or with every
    write class scaled by `write_scale` (capacity x F, QD1 latency / F); written to `folder`."""
    if (write_iops is None) == (write_scale is None):
        raise ValueError("give write_iops or write_scale")
    doc = json.loads(PROFILE.read_text())
    if cache_mb is not None:
        if cache_mb > 0:
            doc["write_cache"] = dict(doc.get("write_cache", {"latency_s": 1e-4}), bytes=int(cache_mb * 2**20))
        else:
            doc.pop("write_cache", None)
    if write_scale is not None:
        for cls in doc["classes"]["write"].values():
            cls["capacity_iops"] = cls["capacity_iops"] * write_scale
            cls["latency_qd1_s"] = cls["latency_qd1_s"] / write_scale
        tag, what = f"x{write_scale:g}", f"Every write class scaled by {write_scale:g} (capacity x, QD1 latency /)"
    else:
        cls = doc["classes"]["write"][PAGE]
        cls["capacity_iops"] = write_iops
        if latency_s is not None:
            cls["latency_qd1_s"] = latency_s
        tag, what = f"w{write_iops:g}", f"Random 16K writes set to {write_iops:g}/s"
    if merge is not None:
        doc["merge_adjacent_writes"] = merge
    tag += "" if cache_mb is None else f"-c{cache_mb:g}"
    doc["name"] = f"{doc['name']}-{tag}"
    doc["description"] = (f"{doc['description']} {what} by device_sensitivity.py"
                          f"{'' if merge is None else (', adjacent page writes merged' if merge else ', no write merging')}"
                          f"{cache_label(cache_mb)}.")
    path = folder / f"{tag}.json"
    path.write_text(json.dumps(doc))
    return path


def _run(args: tuple[str, str, tuple[str, ...]]) -> tuple[tuple[str, str], dict]:
    name, device, extra = args
    return (name, device), _run_one(name, (f"hardware.device={device}", *extra))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--write-iops", type=float, nargs="+",
                       help="random 16K write capacities to try (the profile has 3000)")
    which.add_argument("--write-scale", type=float, nargs="+",
                       help="factors for every write class: capacity times F, QD1 latency over F")
    ap.add_argument("--latency-ms", type=float, default=None, help="QD1 write latency (the profile has 1.4)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for every run, as innosim run --set")
    merging = ap.add_mutually_exclusive_group()
    merging.add_argument("--merge", dest="merge", action="store_true", default=None,
                         help="let the block layer merge adjacent page writes (profile key merge_adjacent_writes)")
    merging.add_argument("--no-merge", dest="merge", action="store_false",
                         help="charge every page write as its own request (the profile before 2026-11-25)")
    ap.add_argument("--cache-mb", type=float, nargs="+", default=None,
                    help="write cache sizes in MB to try with each write capacity (0: none; the profile has 256)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    rows = [r for r in load_reference() if r.scenario.startswith("seed-dbt2-") and "32core" not in r.scenario]
    names = sorted({r.scenario for r in rows} | {r.b for r in rows if r.b})
    with tempfile.TemporaryDirectory(prefix="innosim-devsens-") as tmp:
        latency = None if args.latency_ms is None else args.latency_ms / 1000.0
        caches = args.cache_mb if args.cache_mb is not None else [None]
        if any(c is not None and c < 0 for c in caches):
            ap.error("--cache-mb: sizes are 0 (no cache) or more")
        if args.write_scale is not None:
            if any(f <= 0 for f in args.write_scale):
                ap.error("--write-scale: factors are more than 0")
            if args.latency_ms is not None:
                ap.error("--latency-ms goes with --write-iops; --write-scale scales every latency itself")
            devices = {(f, c): str(variant_profile(None, None, Path(tmp), args.merge, c, write_scale=f))
                       for f in args.write_scale for c in caches}
        else:
            devices = {(w, c): str(variant_profile(w, latency, Path(tmp), args.merge, c))
                       for w in args.write_iops for c in caches}
        for (w, _c), path in devices.items():
            try:
                load_profile(path)
            except InputError as e:              # e.g. a capacity the QD1 latency cannot give
                print(f"device_sensitivity.py: variant {w:g}: {e}; a lower capacity needs a longer "
                      "--latency-ms", file=sys.stderr)
                return 2
        with ProcessPoolExecutor(max(1, args.jobs)) as ex:
            runs = dict(ex.map(_run, [(n, d, tuple(args.set)) for d in devices.values() for n in names]))
    for (w, c), device in devices.items():
        results = [evaluate(r, {n: runs[(n, device)] for n in names}) for r in rows]
        passed = sum(1 for x in results if x.ok is True)
        failed = sum(1 for x in results if x.ok is False)
        merged = "" if args.merge is None else (", adjacent writes merged" if args.merge else ", no write merging")
        label = f"every write class x{w:g}" if args.write_scale is not None else f"random 16K writes {w:g}/s"
        print(f"{label}{merged}{cache_label(c)}{''.join(f', {x}' for x in args.set)}: "
              f"{passed} passed, {failed} failed")
        for x in results:
            verdict = "n/a" if x.ok is None else ("ok" if x.ok else "FAIL")
            print(f"    {x.row.id:36s} published {x.published!s:>22}  simulated {x.simulated:10.4g}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
