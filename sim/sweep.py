"""Parameter sweeps of an oltp scenario: a grid and/or random points, replicates, cached runs.

Each run is one scenario (the base file plus `section.key=value` overrides) with one seed; its
row holds the swept parameters, the seed and the run's summary metrics (sim.metrics.summary).
Runs are cached on disk under a hash of the resolved scenario, the device profile, the seed and
the simulator's own source, so an interrupted sweep resumes and a repeated one costs nothing.
Runs go to local worker processes, or to a Dask distributed scheduler; the engine is
deterministic for a seed, so both give the same rows.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from models.errors import InputError
from sim.config import (SCHEMA, Scenario, parse_key, parse_override, scenario_from_dict, setting_text,
                        setting_value, whole_numbers_only)

RANGE_KINDS = ("size", "duration", "int", "float")

# Row columns taken from sim.metrics.summary, in output order.
METRICS = (
    "tps_mean", "tps_p99_per_s", "tps_p1_per_s",
    "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms",
    "stalls_100ms_count", "stalls_100ms_s", "stalls_1s_count", "stalls_1s_s",
    "time_under_sync_flush_s", "buffer_flush_sync_waits", "buffer_flush_sync_waits_max_per_s",
    "checkpoint_age_max_pct",
    "pages_flushed_per_s_adaptive", "pages_flushed_per_s_background", "pages_flushed_per_s_sync",
    "pages_flushed_per_s_lru", "pages_flushed_per_s_single_page", "pages_flushed_per_s_total",
    "innodb_queue_threads_mean", "trx_queue_mean", "trx_queue_max",
    "buffer_pool_reads_per_s", "page_read_wait_threads_mean",
    "device_busy_pct_mean", "device_busy_pct_max_1s", "steady_state",
    "steady_from_s", "steady_tps_mean", "steady_pages_flushed_per_s", "steady_buffer_flush_sync_waits",
    "crash_recovery_s", "crash_recovery_pages", "crash_recovery_batches",
)
# Metrics added after tables were first written (2026-11-30): a table without them still reads, with
# the columns empty.
ADDED_METRICS = ("buffer_pool_reads_per_s", "page_read_wait_threads_mean")
METRIC_LABELS = {
    "tps_mean": "commits/s (mean)", "tps_p99_per_s": "p99 of per-second commits",
    "tps_p1_per_s": "p1 of per-second commits",
    "latency_p50_ms": "latency p50 (ms)", "latency_p95_ms": "latency p95 (ms)", "latency_p99_ms": "latency p99 (ms)",
    "latency_max_ms": "latency max (ms)",
    "stalls_100ms_count": "stalls at 100 ms (count)", "stalls_100ms_s": "seconds in 100 ms stalls",
    "stalls_1s_count": "stalls at 1 s (count)", "stalls_1s_s": "seconds in 1 s stalls",
    "time_under_sync_flush_s": "time under sync flushing (s)",
    "buffer_flush_sync_waits": "buffer_flush_sync_waits", "buffer_flush_sync_waits_max_per_s":
    "buffer_flush_sync_waits, max per second",
    "checkpoint_age_max_pct": "max checkpoint age (% of redo)",
    "pages_flushed_per_s_adaptive": "pages flushed/s, adaptive", "pages_flushed_per_s_background":
    "pages flushed/s, background", "pages_flushed_per_s_sync": "pages flushed/s, sync",
    "pages_flushed_per_s_lru": "pages flushed/s, LRU", "pages_flushed_per_s_single_page":
    "pages flushed/s, single page", "pages_flushed_per_s_total": "pages flushed/s, total",
    "innodb_queue_threads_mean": "threads waiting to enter InnoDB (mean; innodb_thread_concurrency)",
    "trx_queue_mean": "transactions queued for a user (mean; workload.rate)",
    "trx_queue_max": "transactions queued for a user (max; workload.rate)",
    "buffer_pool_reads_per_s": "pages read from storage/s (Innodb_buffer_pool_reads)",
    "page_read_wait_threads_mean": "user threads waiting for page reads (mean)",
    "device_busy_pct_mean": "device busy (% of its units' time, mean)",
    "device_busy_pct_max_1s": "device busy (% of its units' time, highest second)",
    "steady_state": "steady state reached (1 or 0, sim.settling's ±5% band; its mean: the share of replicates)",
    "steady_from_s": "steady state from (s; empty: not settled)",
    "steady_tps_mean": "commits/s over the steady state (empty: not settled)",
    "steady_pages_flushed_per_s": "pages flushed/s over the steady state (empty: not settled)",
    "steady_buffer_flush_sync_waits": "buffer_flush_sync_waits in the steady state (empty: not settled)",
    "crash_recovery_s": "crash recovery at the worst second (s, models.recovery)",
    "crash_recovery_pages": "pages that crash would recover",
    "crash_recovery_batches": "batches that crash's recovery would apply its redo in",
}


@dataclass(frozen=True)
class SweepSpec:
    grid: tuple[tuple[str, tuple[str, ...]], ...] = ()       # (section.key, values as typed)
    ranges: tuple[tuple[str, float, float, bool], ...] = ()   # (section.key, lo, hi, integer)
    random_n: int = 0
    replicates: int = 1

    @property
    def keys(self) -> list[str]:
        return [k for k, _ in self.grid] + [k for k, *_ in self.ranges]


@dataclass(frozen=True)
class Point:
    """One run: overrides on the base scenario, and the seed."""
    overrides: tuple[str, ...]
    replicate: int
    seed: int
    scenario: Scenario = field(compare=False, repr=False)


# -- parsing the command line ------------------------------------------------------------------

def _key_spec(flag: str, key: str):
    if key.count(".") != 1:
        raise InputError(flag, key, "expected section.key", "e.g. server.innodb_log_file_size")
    section, name = key.split(".")
    if section not in SCHEMA:
        raise InputError(flag, key, "unknown section", ", ".join(SCHEMA))
    if name not in SCHEMA[section]:
        raise InputError(flag, key, "unknown key", ", ".join(SCHEMA[section]))
    return SCHEMA[section][name]


def parse_grid(text: str) -> tuple[str, tuple[str, ...]]:
    """`section.key=v1,v2,...` -> (key, values)."""
    if "=" not in text:
        raise InputError("--grid", text, "expected section.key=v1,v2,...", "e.g. server.innodb_log_file_size=1G,2G")
    key, rhs = (s.strip() for s in text.split("=", 1))
    _key_spec("--grid", key)
    values = tuple(v.strip() for v in rhs.split(","))
    if not rhs.strip() or any(not v for v in values):
        raise InputError("--grid", key, f"{rhs!r} is not a comma-separated list of values", "e.g. 1G,2G,4G")
    if len(set(values)) != len(values):
        raise InputError("--grid", key, f"{rhs!r} repeats a value", "distinct values")
    seen: dict = {}
    for v in values:
        same = seen.setdefault(_grid_value(key, v), v)
        if same != v:
            raise InputError("--grid", key, f"{same!r} and {v!r} are the same value", "distinct values")
    return key, values


def _grid_value(key: str, text: str):
    """A grid value as the scenario will hold it (1G and 1024M are both 1073741824, ON and
    DETECT_AND_RECOVER both true, o_direct is O_DIRECT); server.version as typed, since a release
    and the version it runs as keep rows of their own; a value the scenario refuses as typed, for
    `expand` to report."""
    if key == "server.version":
        return text
    section, name = key.split(".")
    try:
        value = parse_key(section, name, parse_override(f"{key}={text}")[2], "--grid")
    except InputError:
        return text
    if isinstance(value, tuple) and len(value) == 1:
        value = value[0]
    return (type(value), value)


def parse_range(text: str, base: dict, src: str) -> tuple[str, float, float, bool]:
    """`section.key=lo:hi` -> (key, lo, hi, integer) in the key's own unit (bytes, seconds, ...)."""
    if "=" not in text or ":" not in text.split("=", 1)[1]:
        raise InputError("--range", text, "expected section.key=lo:hi", "e.g. server.innodb_io_capacity=200:2000")
    key, rhs = (s.strip() for s in text.split("=", 1))
    spec = _key_spec("--range", key)
    if spec.kind not in RANGE_KINDS:
        raise InputError("--range", key, f"is a {spec.kind} setting, not a number",
                         "a size, duration, whole-number or number setting")
    lo_text, hi_text = (s.strip() for s in rhs.split(":", 1))
    section, name = key.split(".")
    lo, hi = (_typed(base, src, f"{key}={t}", section, name) for t in (lo_text, hi_text))
    if not lo < hi:
        raise InputError("--range", key, f"{rhs!r}: the low end must be below the high end", "lo:hi with lo < hi")
    return key, float(lo), float(hi), whole_numbers_only(scenario_from_dict(base, src), section, name)


def _typed(base: dict, src: str, override: str, section: str, name: str):
    """The value an override gives the key, as the scenario holds it (bytes, seconds, ...)."""
    scn = scenario_from_dict(base, src, overrides=[override])
    return _value_of(scn, section, name)


def _value_of(scn: Scenario, section: str, name: str):
    v = setting_value(scn, section, name)
    return ",".join(map(str, v)) if isinstance(v, tuple) else v


def _literal(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))


def expand(base: dict, src: str, name: str, spec: SweepSpec, extra_overrides: list[str]) -> list[Point]:
    """Every run of the sweep, each scenario validated (and refused settings reported) up front."""
    from sim.engine import preflight

    if len(set(spec.keys)) != len(spec.keys):
        raise InputError("--grid/--range", "", "a key is swept twice", "each key once")
    base_scn = scenario_from_dict(base, src, name, extra_overrides)
    if base_scn.workload.kind != "oltp":
        raise InputError(src, "workload.kind", f"{base_scn.workload.kind!r} cannot be swept here",
                         "an oltp scenario (iobench grids: innosim iobench)")
    grid_sets = [[f"{k}={v}" for v in values] for k, values in spec.grid]
    combos = [list(c) for c in itertools.product(*grid_sets)]        # one empty combo without a grid
    if spec.ranges:
        rng = np.random.default_rng(base_scn.run.seed)
        samples = []
        for _ in range(spec.random_n):
            row = []
            for key, lo, hi, integer in spec.ranges:
                x = rng.uniform(lo, hi)
                row.append(f"{key}={_literal(int(round(x)) if integer else float(x))}")
            samples.append(row)
        combos = [c + s for c in combos for s in samples]
    points = []
    grid_keys = {k for k, _ in spec.grid}
    for combo in combos:
        ov = tuple(extra_overrides) + tuple(combo)
        for r in range(spec.replicates):
            seed = base_scn.run.seed + r
            try:
                scn = scenario_from_dict(base, src, name, list(ov) + [f"run.seed={seed}"])
                preflight(scn)
            except InputError as err:
                if err.source != "--set":
                    raise
                # Name the flag the value came from, and the point, rather than the override.
                flag = "--grid" if err.field in grid_keys else "--range" if err.field in spec.keys else "--set"
                point = ", ".join(combo) or "every point"
                raise InputError(flag, err.field, f"{err.problem} (at {point})", err.allowed) from None
            points.append(Point(tuple(combo), r, seed, scn))
    return points


# -- running --------------------------------------------------------------------------------

def code_fingerprint() -> str:
    """Hash of the simulator's source and built-in profiles: a cached run is only reused by the
    same simulator."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for sub in ("models", "sim"):
        for p in sorted((root / sub).rglob("*")):
            if p.suffix in (".py", ".json") and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]


def run_key(scn: Scenario, fingerprint: str) -> str:
    """Cache key: resolved scenario (with its seed; releases that run as one version alike), the
    device profile's content, the code."""
    from models.device import load_profile
    from sim.run_output import resolved_toml

    text = resolved_toml(scn, release=False).split("\n", 1)[1]   # drop the "resolved from <path>" line
    prof = repr(load_profile(scn.hardware.device))
    return hashlib.sha256(f"{fingerprint}\n{prof}\n{text}".encode()).hexdigest()[:24]


def metrics_row(s: dict) -> dict:
    """The sweep columns of one run's summary."""
    lat = s["latency_ms"]
    pf = s["pages_flushed_per_s"]
    return {
        "tps_mean": s["tps_mean"], "tps_p99_per_s": s["tps_p99_per_s"], "tps_p1_per_s": s["tps_p1_per_s"],
        "latency_p50_ms": lat["p50"], "latency_p95_ms": lat["p95"], "latency_p99_ms": lat["p99"],
        "latency_max_ms": lat["max"],
        "stalls_100ms_count": s["stalls_100ms"]["count"], "stalls_100ms_s": s["stalls_100ms"]["seconds"],
        "stalls_1s_count": s["stalls_1s"]["count"], "stalls_1s_s": s["stalls_1s"]["seconds"],
        "time_under_sync_flush_s": s["time_under_sync_flush_s"],
        "buffer_flush_sync_waits": s["buffer_flush_sync_waits"],
        "buffer_flush_sync_waits_max_per_s": s["buffer_flush_sync_waits_max_per_s"],
        "checkpoint_age_max_pct": s["checkpoint_age_max_pct"],
        **{f"pages_flushed_per_s_{k}": v for k, v in pf.items()},
        "pages_flushed_per_s_total": s["pages_flushed_per_s_total"],
        "innodb_queue_threads_mean": s.get("innodb_queue_threads_mean", 0.0),
        "trx_queue_mean": s.get("trx_queue_mean", 0.0), "trx_queue_max": s.get("trx_queue_max", 0),
        "buffer_pool_reads_per_s": s.get("buffer_pool_reads_per_s", 0.0),
        "page_read_wait_threads_mean": s.get("page_read_wait_threads_mean", 0.0),
        "device_busy_pct_mean": s.get("device_busy_pct_mean", 0.0),
        "device_busy_pct_max_1s": s.get("device_busy_pct_max_1s", 0.0),
        # 1 when the measured part left its start-up transient (sim.settling), None when too short to say.
        "steady_state": (None if not s.get("settling") or s["settling"]["settled"] is None
                         else float(s["settling"]["settled"])),
        # The same figures over the steady state alone (sim.metrics.steady_figures), None when not settled.
        **{col: (None if not s.get("steady") else s["steady"][key]) for col, key in (
            ("steady_from_s", "from_s"), ("steady_tps_mean", "tps_mean"),
            ("steady_pages_flushed_per_s", "pages_flushed_per_s_total"),
            ("steady_buffer_flush_sync_waits", "buffer_flush_sync_waits"))},
        # The restart's duration had the server crashed at its worst second (models.recovery).
        "crash_recovery_s": (s.get("crash_recovery") or {}).get("total_s"),
        "crash_recovery_pages": (s.get("crash_recovery") or {}).get("pages"),
        "crash_recovery_batches": (s.get("crash_recovery") or {}).get("batches"),
    }


def simulate(scn: Scenario) -> dict:
    """One run (top level, so worker processes and Dask workers can import it)."""
    from sim.engine import run
    from sim.metrics import summary

    return metrics_row(summary(run(scn)))


class Cache:
    """One JSON file per run, written atomically; None disables caching."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        if root is not None:
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise InputError(str(root), "--cache-dir", f"cannot be created: {err.strerror}",
                                 "a writable directory") from None

    def get(self, key: str) -> dict | None:
        if self.root is None:
            return None
        p = self.root / f"{key}.json"
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, row: dict) -> None:
        if self.root is None:
            return
        tmp = self.root / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(row))
        os.replace(tmp, self.root / f"{key}.json")


def default_cache_dir() -> Path:
    env = os.environ.get("INNOSIM_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "innosim" / "runs"


class Progress:
    """One line per finished run (rewritten in place on a terminal) with an ETA."""

    def __init__(self, total: int, cached: int, stream=None) -> None:
        self.total, self.done, self.cached = total, cached, cached
        self.t0 = time.perf_counter()
        self.stream = stream = stream or sys.stderr
        self.tty = stream.isatty()
        self.show()

    def show(self) -> None:
        n = self.total
        width = 30
        fill = int(width * self.done / n) if n else width
        el = time.perf_counter() - self.t0
        ran = self.done - self.cached
        left = n - self.done
        eta = f"{_hms(el / ran * left)}" if ran and left else ("0:00" if not left else "?")
        line = (f"sweep [{'#' * fill}{'.' * (width - fill)}] {self.done}/{n} runs "
                f"({self.cached} cached), elapsed {_hms(el)}, ETA {eta}")
        if self.tty:
            print("\r" + line, end="" if self.done < n else "\n", file=self.stream, flush=True)
        else:
            print(line, file=self.stream, flush=True)

    def step(self) -> None:
        self.done += 1
        self.show()


def _hms(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def run_points(points: list[Point], cache: Cache, workers: int = 0, dask_scheduler: str | None = None,
               progress: bool = True) -> list[dict]:
    """Metrics of every point (cached ones read back, the others simulated)."""
    fp = code_fingerprint()
    keys = [run_key(p.scenario, fp) for p in points]
    rows: list[dict | None] = [cache.get(k) for k in keys]
    todo = [i for i, r in enumerate(rows) if r is None]
    # Points that differ only in how they were written (e.g. 1G and 1024M) are run once.
    same_run: dict[str, list[int]] = {}
    for i in todo:
        same_run.setdefault(keys[i], []).append(i)
    unique = [group[0] for group in same_run.values()]
    client = _dask_client(dask_scheduler) if unique and dask_scheduler else None
    bar = Progress(len(points), len(points) - len(todo)) if progress else None

    def finished(i: int, row: dict) -> None:
        cache.put(keys[i], row)
        for j in same_run[keys[i]]:
            rows[j] = row
            if bar:
                bar.step()

    if unique:
        if client is not None:
            _run_dask(points, unique, client, finished)
        else:
            _run_local(points, unique, workers or os.cpu_count() or 1, finished)
    return [dict(r, run_key=k) for r, k in zip(rows, keys)]  # type: ignore[arg-type]


def _run_local(points, unique, workers, finished) -> None:
    if workers == 1 or len(unique) == 1:
        for i in unique:
            finished(i, simulate(points[i].scenario))
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(workers, len(unique))) as ex:
        futs = {ex.submit(simulate, points[i].scenario): i for i in unique}
        try:
            for f in as_completed(futs):
                finished(futs[f], f.result())
        except BaseException:
            for f in futs:
                f.cancel()
            raise


def _dask_client(address: str):
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--dask-scheduler", address, "the dask distributed package is not installed",
                         'pip install "innosim[dask]"') from None
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as err:
        raise InputError("--dask-scheduler", address, f"cannot connect: {err}",
                         "the address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786") from None


def _run_dask(points, unique, client, finished) -> None:
    from distributed import as_completed

    with client:
        futs = [client.submit(simulate, points[i].scenario, pure=False) for i in unique]
        index = {f.key: i for f, i in zip(futs, unique)}
        for f in as_completed(futs):
            finished(index[f.key], f.result())


# -- tables ---------------------------------------------------------------------------------

def _swept_value(p: Point, key: str):
    """A swept setting's value in a point's row: numbers in the scenario's units (1G is
    1073741824), words as the grid gave them, since some map many to one (server.version
    mysql-8.0.36 runs as mysql-8.0.30; each keeps its own row)."""
    section, name = key.split(".")
    value = _value_of(p.scenario, section, name)
    if isinstance(value, str):
        for text in p.overrides:
            sec, k, given = parse_override(text)
            if (sec, k) == (section, name) and isinstance(given, str):
                return given
    return value


def point_notes(points: list[Point]) -> list[str]:
    """The notes of the points' scenarios (a release mapped to a version, settings a version
    ignores), each once, in the order the points first give them."""
    return list(dict.fromkeys(n for p in points for n in p.scenario.notes))


def runs_table(points: list[Point], rows: list[dict], keys: list[str]) -> pd.DataFrame:
    """One row per run: swept parameters (numbers in the scenario's units, words as given),
    replicate, seed, metrics."""
    out = []
    for p, r in zip(points, rows):
        rec = {}
        for k in keys:
            rec[k] = _swept_value(p, k)
        rec["replicate"] = p.replicate
        rec["seed"] = p.seed
        rec.update({m: r.get(m) for m in METRICS})
        rec["run_key"] = r["run_key"]
        out.append(rec)
    for k in keys:
        if len({type(rec[k]) for rec in out}) > 1:
            # A setting whose values are of two kinds (innodb_doublewrite: true and fast; a Parquet
            # column holds one): every row's value as the grid wrote it.
            for p, rec in zip(points, out):
                rec[k] = _given_text(p, k)
    return pd.DataFrame(out)


def _given_text(p: Point, key: str) -> str:
    """A swept setting's value as the point's override wrote it, else as a scenario file holds it."""
    for text in reversed(p.overrides):
        lhs, _, rhs = text.partition("=")
        if lhs.strip() == key:
            return rhs.strip()
    section, name = key.split(".")
    return setting_text(p.scenario, section, name)


def _add_empty(df: pd.DataFrame, columns) -> None:
    """Add each of `columns` the table lacks, empty (NaN)."""
    for c in columns:
        if c not in df.columns:
            df[c] = np.nan


def read_table(data: bytes, filename: str) -> tuple[pd.DataFrame | None, pd.DataFrame, list[str]]:
    """A sweep table written by `innosim sweep` (the runs table or its .ci table, Parquet or CSV):
    (runs or None, the confidence-interval table, the swept keys)."""
    import io

    suffix = Path(filename).suffix.lower()
    try:
        if suffix == ".parquet":
            df = pd.read_parquet(io.BytesIO(data))
        elif suffix == ".csv":
            df = pd.read_csv(io.BytesIO(data))
        else:
            raise InputError(filename, "", f"{suffix or 'no extension'} is not a sweep table format",
                             ".parquet or .csv as written by innosim sweep")
    except (ValueError, OSError, UnicodeDecodeError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(filename, "", f"cannot be read: {first}", "a table written by innosim sweep") from None
    keys = [c for c in df.columns if c.count(".") == 1 and c.split(".")[0] in SCHEMA
            and c.split(".")[1] in SCHEMA[c.split(".")[0]]]
    if {"run_key", "replicate", "seed"} <= set(df.columns):
        _add_empty(df, ADDED_METRICS)
        missing = [m for m in METRICS if m not in df.columns]
        if missing:
            raise InputError(filename, missing[0], "column missing from the runs table",
                             "the columns innosim sweep writes: " + ", ".join(METRICS))
        return df, ci_table(df, keys), keys
    if "runs" in df.columns:
        _add_empty(df, [f"{m}_{x}" for m in ADDED_METRICS for x in ("mean", "ci95")])
        missing = [f"{m}_{x}" for m in METRICS for x in ("mean", "ci95") if f"{m}_{x}" not in df.columns]
        if missing:
            raise InputError(filename, missing[0], "column missing from the confidence-interval table",
                             "the columns innosim sweep writes (<metric>_mean, <metric>_ci95)")
        return None, df, keys
    raise InputError(filename, "", "is not an innosim sweep table (no run_key/replicate/seed or runs column)",
                     "the .parquet or .csv of innosim sweep, or its .ci table")


def display_frame(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """A copy with size settings written as sizes (8388608 -> "8M") for printing and figures;
    the row order is kept (sorted by the numeric value first where that matters)."""
    from sim.units import format_size

    out = df.copy()
    for k in keys:
        section, name = k.split(".")
        if SCHEMA[section][name].kind == "size":
            out[k] = [format_size(int(v)) for v in out[k]]
    return out


def ci_table(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per parameter combination: runs, and for each metric the mean and the half-width of its
    95% confidence interval (Student's t over the replicates; empty with one replicate)."""
    from scipy import stats

    groups = runs.groupby(keys, sort=True, dropna=False) if keys else [((), runs)]
    out = []
    for gkey, g in groups:
        gkey = gkey if isinstance(gkey, tuple) else (gkey,)
        rec = dict(zip(keys, gkey))
        n = len(g)
        rec["runs"] = n
        for m in METRICS:
            x = pd.to_numeric(g[m], errors="coerce").dropna().to_numpy(dtype=float)
            rec[f"{m}_mean"] = float(x.mean()) if len(x) else math.nan
            if len(x) > 1:
                half = float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
            else:
                half = math.nan
            rec[f"{m}_ci95"] = half
        out.append(rec)
    return pd.DataFrame(out)


def write_tables(runs: pd.DataFrame, ci: pd.DataFrame | None, out: Path) -> list[Path]:
    """`out` (Parquet) and its CSV twin; with replicates, `<stem>.ci.parquet` / `.ci.csv` too.
    Each file is written to a temporary name and renamed, so a failed write leaves the old file."""
    paths = []
    pairs = [(runs, out)]
    if ci is not None:
        pairs.append((ci, out.with_name(out.stem + ".ci" + out.suffix)))
    for df, p in pairs:
        for target, writer in ((p, lambda d, t: d.to_parquet(t, index=False)),
                               (p.with_suffix(".csv"), lambda d, t: d.to_csv(t, index=False))):
            tmp = target.with_name(f".{target.name}.tmp")
            writer(df, tmp)
            os.replace(tmp, target)
            paths.append(target)
    return paths
