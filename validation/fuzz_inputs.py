"""Mutation fuzz of innosim's input readers: every bad input must end in one InputError.

Takes real inputs (fio JSON and logs from shared/data/fio, validation/live/example and
validation/live/fio-2026-11-29 (with an fdatasync job), the live
example's traces, the shipped scenarios and device profiles, my.cnf option files and SHOW VARIABLES output),
damages them (truncation, flipped
bytes, cut or repeated spans, random bytes; in parsed documents, values replaced by other types,
keys deleted) and feeds them to the readers, the scenario and profile validation and the device
fit. Any exception other than models.errors.InputError is a failure: the CLI would print a
traceback instead of one line with exit code 2.

Usage: python validation/fuzz_inputs.py [--seed 1] [--iterations 1000]
Prints one line per distinct failure (exception, where it was raised, the input) and exits 1 if
there is any. tests/test_input_fuzz.py runs a short fixed-seed round.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import random
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from models.device import profile_from_dict  # noqa: E402
from models.errors import InputError  # noqa: E402
from sim.calibrate import calibrate_fio  # noqa: E402
from models.versions import VERSION_NAMES  # noqa: E402
from sim.config import scenario_doc_from_text, scenario_from_dict  # noqa: E402
from sim.fio import read_fio_json_bytes, read_fio_log  # noqa: E402
from sim.trace import read_trace_bytes  # noqa: E402

EXAMPLE = ROOT / "validation" / "live" / "example"
SHARED_FIO = ROOT.parent / "shared" / "data" / "fio"
FIO_SYNC = ROOT / "validation" / "live" / "fio-2026-11-29"      # its grid ends with an fdatasync job
ODD_VALUES = [None, True, -1, 0, 1e308, float("nan"), "x", "", [], {}, [1, 2], {"a": 1}, 10**30, "1e9"]
KINDS = ("fio_bytes", "fio_doc", "fio_fit", "fio_log", "trace", "scenario_text", "scenario_doc", "profile", "my_cnf",
         "server_vars")
# A my.cnf with every construct the reader takes, beside the live example's (validation/live/example/my.cnf).
MY_CNF_SAMPLE = """# sample
[client]
port = 3306
[mysqld]
innodb-buffer-pool-size = 2G   # comment
innodb_flush_method = "O_DIRECT"
skip-innodb_doublewrite
loose-innodb_page_cleaners = 4
maximum-innodb_io_capacity = 9000
innodb_io_capacity = 2K
innodb_log_file_size = '512M'
[mysqld-8.0]
innodb_max_dirty_pages_pct = 90.000000
[mariadb]
innodb_lru_scan_depth = 1536
!include missing.cnf
"""


@dataclass(frozen=True)
class Failure:
    kind: str
    error: str
    where: str
    sample: str


def _inputs():
    fio = (sorted(SHARED_FIO.glob("*/*.json")) + sorted(SHARED_FIO.glob("*/*/*.json"))
           + sorted((EXAMPLE / "fio").glob("*.json")) + sorted((FIO_SYNC / "fio").glob("*.json")))
    logs = sorted(SHARED_FIO.glob("*/*/*.log"))[:40] + sorted(SHARED_FIO.glob("*/*.log"))[:20]
    traces = []
    for name in ("sysbench.txt", "mysqladmin.txt.gz", "samples.csv.gz"):
        raw = (EXAMPLE / name).read_bytes()
        traces.append((name.removesuffix(".gz"), (gzip.decompress(raw) if name.endswith(".gz") else raw)[:20000]))
    scenarios = [(p.name, p.read_text()) for p in sorted((ROOT / "scenarios").glob("*.toml"))]
    profiles = [(p.name, json.loads(p.read_text())) for p in sorted((ROOT / "models" / "profiles").glob("*.json"))]
    return fio, logs, traces, scenarios, profiles


def _damage_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    op = rng.randrange(5)
    if op == 0 and b:
        del b[rng.randrange(len(b)):]
    elif op == 1 and b:
        for _ in range(rng.randint(1, 20)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif op == 2 and b:
        i = rng.randrange(len(b))
        del b[i:i + rng.randint(1, 200)]
    elif op == 3 and b:
        i = rng.randrange(len(b))
        b[i:i] = b[rng.randrange(len(b)):][:rng.randint(1, 200)]
    else:
        b = bytearray(rng.randbytes(rng.randint(0, 300)))
    return bytes(b)


def _damage_doc(rng: random.Random, doc):
    doc = copy.deepcopy(doc)
    paths = []

    def walk(node, path):
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + [k])
        elif isinstance(node, list):
            for i, v in enumerate(node[:5]):
                walk(v, path + [i])

    walk(doc, [])
    for _ in range(rng.randint(1, 4)):
        if len(paths) < 2:
            break
        path = rng.choice(paths[1:])
        parent = doc
        try:
            for k in path[:-1]:
                parent = parent[k]
            if rng.random() < 0.3 and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
        except (KeyError, IndexError, TypeError):
            pass
    return doc


def fuzz(seed: int = 1, iterations: int = 1000) -> list[Failure]:
    """Run `iterations` damaged inputs; the distinct failures (by exception type and place)."""
    rng = random.Random(seed)
    fio, logs, traces, scenarios, profiles = _inputs()
    kinds = [k for k in KINDS if (fio or not k.startswith("fio")) and (logs or k != "fio_log")]
    found: dict[tuple, Failure] = {}
    with tempfile.TemporaryDirectory(prefix="innosim-fuzz-") as tmp:
        for _ in range(iterations):
            kind = rng.choice(kinds)
            sample = ""
            try:
                if kind == "fio_bytes":
                    f = rng.choice(fio)
                    data = _damage_bytes(rng, f.read_bytes())
                    sample = f"{f.name}: {data[:80]!r}"
                    read_fio_json_bytes(data, f.name)
                elif kind == "fio_doc":
                    f = rng.choice(fio)
                    doc = _damage_doc(rng, json.loads(f.read_text()))
                    sample = f"{f.name}: {json.dumps(doc)[:200]}"
                    read_fio_json_bytes(json.dumps(doc).encode(), f.name)
                elif kind == "fio_fit":
                    jobs = []
                    chosen = rng.sample(fio, min(len(fio), rng.randint(2, 12)))
                    sample = ", ".join(f.name for f in chosen)
                    for f in chosen:
                        doc = json.loads(f.read_text())
                        if rng.random() < 0.3:
                            doc = _damage_doc(rng, doc)
                        try:
                            jobs += read_fio_json_bytes(json.dumps(doc).encode(), f.name)
                        except InputError:
                            pass
                    if jobs:
                        calibrate_fio(jobs, rng.choice([None, None, "numjobs=16", "iodepth=4"]), "fuzz", "fuzz")
                elif kind == "fio_log":
                    f = rng.choice(logs)
                    data = _damage_bytes(rng, f.read_bytes()[:5000])
                    sample = f"{f.name}: {data[:80]!r}"
                    path = Path(tmp) / f.name
                    path.write_bytes(data)
                    read_fio_log(path)
                elif kind == "trace":
                    name, raw = rng.choice(traces)
                    data = _damage_bytes(rng, raw)
                    sample = f"{name}: {data[:80]!r}"
                    read_trace_bytes(data, name)
                elif kind == "scenario_text":
                    name, text = rng.choice(scenarios)
                    data = _damage_bytes(rng, text.encode())
                    sample = f"{name}: {data[:120]!r}"
                    try:
                        text = data.decode()
                    except UnicodeDecodeError:
                        continue
                    scenario_from_dict(scenario_doc_from_text(text, name), name)
                elif kind == "scenario_doc":
                    name, text = rng.choice(scenarios)
                    doc = _damage_doc(rng, scenario_doc_from_text(text, name))
                    sample = f"{name}: {doc!r}"[:300]
                    scenario_from_dict(doc, name)
                elif kind == "my_cnf":
                    text = rng.choice([MY_CNF_SAMPLE, (EXAMPLE / "my.cnf").read_text()])
                    data = _damage_bytes(rng, text.encode())
                    sample = f"my.cnf: {data[:120]!r}"
                    path = Path(tmp) / "my.cnf"
                    path.write_bytes(data)
                    name, scn_text = rng.choice(scenarios)
                    doc = scenario_doc_from_text(scn_text, name)
                    doc.setdefault("server", {})["version"] = rng.choice(VERSION_NAMES)
                    scenario_from_dict(doc, name, option_files=[str(path)])
                elif kind == "server_vars":
                    text = (EXAMPLE / "variables.tsv").read_text()
                    if rng.random() < 0.3:
                        text = "".join(f"| {line.replace(chr(9), ' | ')} |\n" for line in text.splitlines())
                    data = _damage_bytes(rng, text.encode())
                    sample = f"variables: {data[:120]!r}"
                    path = Path(tmp) / "variables.tsv"
                    path.write_bytes(data)
                    name, scn_text = rng.choice(scenarios)
                    scenario_from_dict(scenario_doc_from_text(scn_text, name), name, server_vars=str(path))
                else:
                    name, doc = rng.choice(profiles)
                    doc = _damage_doc(rng, doc)
                    sample = f"{name}: {json.dumps(doc)[:200]}"
                    profile_from_dict(doc, name)
            except InputError:
                pass
            except Exception as exc:  # noqa: BLE001 - any other exception is what we look for
                last = traceback.extract_tb(exc.__traceback__)[-1]
                key = (kind, type(exc).__name__, last.filename, last.lineno)
                found.setdefault(key, Failure(kind, f"{type(exc).__name__}: {exc}"[:200],
                                              f"{Path(last.filename).name}:{last.lineno}", sample[:300]))
    return list(found.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=1000)
    args = ap.parse_args()
    failures = fuzz(args.seed, args.iterations)
    for f in failures:
        print(f"{f.kind}: {f.error} at {f.where}\n    input: {f.sample}")
    print(f"seed {args.seed}: {args.iterations} damaged inputs, {len(failures)} distinct failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
