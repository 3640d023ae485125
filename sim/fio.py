"""Readers for fio output: JSON / json+ (fio 2.x and 3.x) and the --write_*_log files.

Formats as documented in shared/research/fs-device.md section 3 (axboe/fio HOWTO.rst, stat.c,
iolog.c): fio >= 3.0 reports latencies in ns under clat_ns/lat_ns/slat_ns, fio 2.x in us under
clat/lat/slat; json+ adds `bins` (bucket value -> count); without group_reporting each clone of a
job is its own entry with the same jobname (summed here); logs are `time_ms, value, ddir, bs`
plus optional offset, priority and issue-time columns. Files may be gzipped. A job run with
`fsync=N` or `fdatasync=N` also has the latency of its sync calls (fio >= 3.5: `sync` with
`lat_ns` and `total_ios`, the count also as `lat_ns.N`), kept as `FioJob.sync`.
Every problem is an InputError naming the file and the key or line.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from models.errors import InputError
from sim.units import parse_size_bytes

FIO_DEFAULTS = {"iodepth": "1", "numjobs": "1", "bs": "4k", "direct": "0", "rw": "read",
                "ioengine": "psync", "rwmixread": "50"}
RW_READ_SHARE = {"read": 1.0, "randread": 1.0, "write": 0.0, "randwrite": 0.0}
MIXED_RW = ("rw", "readwrite", "randrw")
PERCENTILES = (50.0, 90.0, 99.0, 99.9)
MAX_OUTSTANDING = 65536          # I/Os in flight per job (iodepth x numjobs) that a fit and its replay take
LITTLE_SLACK = 2.0               # rate x mean latency may exceed iodepth x numjobs by this much at most


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(str(path), "", f"cannot be read: {err.strerror}") from None
    return decode_text(raw, str(path))


def decode_text(raw: bytes, src: str) -> str:
    """File contents as text, gunzipped when they start with the gzip magic."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise InputError(src, "", f"not a valid gzip file: {err}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(src, "", "not UTF-8 text", "fio JSON output or a fio log") from None


@dataclass(frozen=True)
class LatencyStats:
    """One latency kind (lat, clat or slat) of one direction; seconds."""

    mean_s: float
    percentiles_s: dict[float, float] = field(default_factory=dict)
    bins_s: dict[float, int] = field(default_factory=dict)     # json+ bucket value -> count
    stddev_s: float = math.nan                                  # fio's stddev, where it printed one

    def percentile_s(self, q: float) -> float:
        """From the json+ histogram when there is one, else from the reported percentiles."""
        if self.bins_s:
            values = sorted(self.bins_s)
            counts = np.array([self.bins_s[v] for v in values], dtype=float)
            cum = np.cumsum(counts)
            idx = int(np.searchsorted(cum, q / 100.0 * cum[-1]))
            return values[min(idx, len(values) - 1)]
        if q in self.percentiles_s:
            return self.percentiles_s[q]
        return math.nan


@dataclass(frozen=True)
class DirectionStats:
    """One direction (read or write) of one job, clones summed."""

    ios: int
    iops: float
    bw_bytes_s: float
    lat: LatencyStats
    clat: LatencyStats
    slat: LatencyStats | None = None


@dataclass(frozen=True)
class FioJob:
    """One fio job (all its clones) with the options that shape the load."""

    source: str
    name: str
    fio_version: str
    rw: str
    block_bytes: int
    iodepth: int
    numjobs: int
    direct: bool
    ioengine: str
    read_share: float
    options: dict[str, str]
    read: DirectionStats | None
    write: DirectionStats | None
    clones: int
    sync: LatencyStats | None = None    # the fsync / fdatasync calls' latency, clones pooled
    sync_calls: int = 0                 # how many were timed

    @property
    def sync_call(self) -> str | None:
        """"fdatasync" or "fsync" when the job syncs after every `sync_every` writes, else None."""
        for call in ("fdatasync", "fsync"):
            if int(self.options.get(call, "0").strip() or 0) > 0:
                return call
        return None

    @property
    def sync_every(self) -> int:
        """Writes between two sync calls (fio's fsync=N / fdatasync=N); 0 when the job does not sync."""
        call = self.sync_call
        return int(self.options[call]) if call else 0

    @property
    def outstanding(self) -> int:
        """I/Os in flight in the closed loop fio runs: iodepth x numjobs."""
        return self.iodepth * self.numjobs

    @property
    def iops(self) -> float:
        return sum(d.iops for d in (self.read, self.write) if d is not None)

    def label(self) -> str:
        return f"{Path(self.source).name}:{self.name} {self.rw} bs={self.block_bytes} qd={self.iodepth}x{self.numjobs}"


def _json_documents(text: str, src: str) -> list[dict]:
    """Every JSON object in the text (fio may print several, or text before the first)."""
    dec = json.JSONDecoder()
    docs, i = [], text.find("{")
    if i < 0:
        raise InputError(src, "", "no JSON object found", "fio --output-format=json or json+ output")
    while i >= 0:
        try:
            obj, end = dec.raw_decode(text, i)
        except json.JSONDecodeError as err:
            raise InputError(src, f"line {err.lineno}", f"invalid JSON: {err.msg}") from None
        if isinstance(obj, dict) and "jobs" in obj:
            docs.append(obj)
        i = text.find("{", end)
    if not docs:
        raise InputError(src, "jobs", "no fio result (an object with \"jobs\") found")
    return docs


def _num(value: object, src: str, path: str) -> float:
    """A JSON number of fio's output: finite and not negative; anything else is one clear error."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(src, path, f"{value!r} is not a number", "a number >= 0")
    if not math.isfinite(value) or value < 0:
        raise InputError(src, path, f"{value!r} is out of range", "a finite number >= 0")
    return float(value)


def _obj(value: object, src: str, path: str, default: dict | None = None) -> dict:
    """A JSON object of fio's output (None or absent: `default`)."""
    if value is None and default is not None:
        return default
    if not isinstance(value, dict):
        raise InputError(src, path, f"{str(value)[:40]!r} is not an object", "a JSON object as fio writes it")
    return value


def _number_map(obj: dict, key: str, src: str, path: str) -> list[tuple[float, float]]:
    """fio's {"<number>": number} maps (percentiles, json+ bins) as (key, value) pairs."""
    out = []
    for k, value in _obj(obj.get(key), src, f"{path}.{key}", {}).items():
        try:
            at = float(k)
        except ValueError:
            raise InputError(src, f"{path}.{key}", f"key {k!r} is not a number") from None
        out.append((at, _num(value, src, f"{path}.{key}.{k}")))
    return out


def _latency(d: dict, kind: str, src: str, path: str) -> LatencyStats | None:
    """`kind` in (lat, clat, slat): ns keys (fio 3.x) first, us keys (fio 2.x) x 1e-6 else."""
    if f"{kind}_ns" in d:
        obj, scale = d[f"{kind}_ns"], 1e-9
    elif kind in d:
        obj, scale = d[kind], 1e-6
    else:
        return None
    if not isinstance(obj, dict) or "mean" not in obj:
        raise InputError(src, f"{path}.{kind}", "has no mean")
    where = f"{path}.{kind}"

    def seconds(value: float, field: str) -> float:
        return _latency_s(_num(value, src, f"{where}.{field}") * scale, src, f"{where}.{field}")

    pct = {round(q, 6): seconds(v, f"percentile.{q}") for q, v in _number_map(obj, "percentile", src, where)
           if q > 0 and v}
    bins = {_latency_s(at * scale, src, f"{where}.bins.{at:g}"): int(n)      # the keys: any number, as before
            for at, n in _number_map(obj, "bins", src, where) if n > 0}
    sd = seconds(obj["stddev"], "stddev") if "stddev" in obj else math.nan
    return LatencyStats(seconds(obj["mean"], "mean"), pct, bins, sd)


MAX_LATENCY_S = 2.0 ** 64 * 1e-9     # fio keeps latencies as 64-bit nanosecond counts


def _latency_s(value_s: float, src: str, path: str) -> float:
    """A latency in seconds that fio could have written (at most 2^64 ns, about 585 years)."""
    if value_s > MAX_LATENCY_S:
        raise InputError(src, path, f"{value_s:.3g} s is out of range", "a latency fio can write (at most 2^64 ns)")
    return value_s


def _pool_latency(parts: list[tuple[int, LatencyStats]]) -> LatencyStats:
    """Clones of one job: means weighted by I/O count; bins merged; percentiles weighted (an
    approximation, used only when there are no bins)."""
    total = sum(n for n, _ in parts) or 1
    mean = sum(n * s.mean_s for n, s in parts) / total
    bins: dict[float, int] = {}
    for _, s in parts:
        for k, v in s.bins_s.items():
            bins[k] = bins.get(k, 0) + v
    keys = set.intersection(*(set(s.percentiles_s) for _, s in parts)) if parts else set()
    pct = {q: sum(n * s.percentiles_s[q] for n, s in parts) / total for q in keys}
    # pooled spread: within-clone variance plus the spread of the clones' means
    sd = math.nan
    if parts and all(math.isfinite(s.stddev_s) for _, s in parts):
        sd = math.sqrt(sum(n * (s.stddev_s ** 2 + (s.mean_s - mean) ** 2) for n, s in parts) / total)
    return LatencyStats(mean, pct, bins, sd)


def _direction(entries: list[dict], op: str, src: str, name: str) -> DirectionStats | None:
    parts = []
    for e in entries:
        d = e.get(op)
        if not isinstance(d, dict):
            continue
        path = f"jobs[{name}].{op}"
        ios = int(_num(d.get("total_ios", 0), src, f"{path}.total_ios"))
        iops = _num(d.get("iops", 0.0), src, f"{path}.iops")
        if iops <= 0 and ios <= 0:
            continue
        if iops <= 0:
            raise InputError(src, f"{path}.iops", f"is 0 while total_ios is {ios}", "the rate of the I/Os counted")
        lat = _latency(d, "lat", src, path)
        clat = _latency(d, "clat", src, path)
        slat = _latency(d, "slat", src, path)
        if lat is None and clat is None:
            raise InputError(src, path, "has neither lat/clat (fio 2.x) nor lat_ns/clat_ns (fio 3.x)")
        if (clat or lat).mean_s <= 0:
            raise InputError(src, f"{path}.{'clat' if clat else 'lat'}", "mean latency is 0 for I/O that was done",
                             "the mean completion latency fio measured (> 0)")
        if lat is None:   # fio 2.x without lat: lat = slat + clat in mean
            lat = LatencyStats(clat.mean_s + (slat.mean_s if slat else 0.0), clat.percentiles_s, clat.bins_s)
        if "bw_bytes" in d:
            bw = _num(d["bw_bytes"], src, f"{path}.bw_bytes")
        else:
            bw = _num(d.get("bw", 0.0), src, f"{path}.bw") * 1024.0
        parts.append((ios, iops, bw, lat, clat or lat, slat))
    if not parts:
        return None
    # Clones' latencies are pooled by I/O count. Older fio 2.x output has no total_ios: then by
    # rate, which is the same weighting for clones that ran equally long.
    by_count = all(p[0] > 0 for p in parts)
    weighted = [(p[0] if by_count else p[1], p) for p in parts]
    slats = [(w, p[5]) for w, p in weighted if p[5] is not None]
    return DirectionStats(
        ios=sum(p[0] for p in parts), iops=sum(p[1] for p in parts), bw_bytes_s=sum(p[2] for p in parts),
        lat=_pool_latency([(w, p[3]) for w, p in weighted]), clat=_pool_latency([(w, p[4]) for w, p in weighted]),
        slat=_pool_latency(slats) if len(slats) == len(parts) else None)


def _sync(entries: list[dict], src: str, name: str) -> tuple[LatencyStats | None, int]:
    """The sync calls' latency of a job's clones (fio >= 3.5 `sync`: lat_ns, total_ios; fio
    3.33 leaves total_ios at 0 and counts them in lat_ns.N), pooled by count; (None, 0) without."""
    parts = []
    for e in entries:
        d = e.get("sync")
        if d is None:
            continue
        path = f"jobs[{name}].sync"
        d = _obj(d, src, path)
        lat = _latency(d, "lat", src, path)
        if lat is None:
            continue
        obj = d.get("lat_ns", d.get("lat"))
        n = int(max(_num(d.get("total_ios", 0), src, f"{path}.total_ios"),
                    _num(obj.get("N", 0), src, f"{path}.lat.N")))
        if n <= 0:
            continue
        if lat.mean_s <= 0:
            raise InputError(src, f"{path}.lat", f"mean latency is 0 for {n} sync calls",
                             "the mean sync latency fio measured (> 0)")
        parts.append((n, lat))
    if not parts:
        return None, 0
    return _pool_latency(parts), sum(n for n, _ in parts)


FIO_FILE_SUFFIXES = (".json", ".json.gz")


def fio_files(paths) -> list[Path]:
    """The fio output files named on a command line: a file as it is, a directory as the *.json
    and *.json.gz files in it, in name order (fio-plot and bench scripts write one per job)."""
    out: list[Path] = []
    for name in paths:
        path = Path(name)
        if not path.is_dir():
            out.append(path)
            continue
        found = sorted(f for f in path.iterdir() if f.is_file() and f.name.endswith(FIO_FILE_SUFFIXES))
        if not found:
            raise InputError(str(path), "", "a directory with no fio output in it",
                             "a directory of *.json or *.json.gz fio results, or the files themselves")
        out += found
    return out


def read_fio_json(path: str | Path) -> list[FioJob]:
    """All jobs of one fio JSON / json+ output file (several documents allowed)."""
    return fio_jobs_from_text(_read_text(Path(path)), str(path))


def read_fio_json_bytes(raw: bytes, src: str) -> list[FioJob]:
    """As read_fio_json, for contents at hand (an upload); `src` names them in messages."""
    return fio_jobs_from_text(decode_text(raw, src), src)


def fio_jobs_from_text(text: str, src: str) -> list[FioJob]:
    jobs: list[FioJob] = []
    for doc in _json_documents(text, src):
        version = str(doc.get("fio version", "unknown"))
        global_opts = {k: str(v) for k, v in _obj(doc.get("global options"), src, "global options", {}).items()}
        groups: dict[tuple, list[dict]] = {}
        if not isinstance(doc["jobs"], list):
            raise InputError(src, "jobs", "is not a list", "the list of jobs fio writes")
        for i, entry in enumerate(doc["jobs"]):
            if not isinstance(entry, dict) or "jobname" not in entry:
                raise InputError(src, f"jobs[{i}]", "is not a fio job object")
            if "mixed" in entry and "read" not in entry:
                raise InputError(src, f"jobs[{i}].mixed", "unified_rw_reporting output has no per-direction data",
                                 "fio output with separate read and write sections")
            groups.setdefault((str(entry["jobname"]), str(entry.get("groupid", 0))), []).append(entry)
        for (name, _), entries in groups.items():
            opts = dict(FIO_DEFAULTS)
            opts.update(global_opts)
            opts.update({k: str(v) for k, v in
                         _obj(entries[0].get("job options"), src, f"jobs[{name}].job options", {}).items()})
            rw = opts["rw"].split(":")[0]
            if rw in RW_READ_SHARE:
                share = RW_READ_SHARE[rw]
            elif rw in MIXED_RW:
                try:
                    share = float(opts.get("rwmixread", "50")) / 100.0
                except ValueError:
                    share = math.nan
                if not 0.0 <= share <= 1.0:
                    raise InputError(src, f"jobs[{name}].job options.rwmixread", f"{opts['rwmixread']!r} is not a "
                                     "percentage", "0 to 100")
            else:
                raise InputError(src, f"jobs[{name}].job options.rw", f"{rw!r} is not a read/write workload",
                                 "read, write, randread, randwrite, rw, randrw")
            try:
                bs = parse_size_bytes(opts["bs"].split(",")[0].split(":")[0])
                iodepth = int(opts["iodepth"])
                numjobs = int(opts["numjobs"])
            except ValueError:
                raise InputError(src, f"jobs[{name}].job options", "bs, iodepth or numjobs is not a number") from None
            if bs <= 0 or iodepth < 1 or numjobs < 1 or iodepth * numjobs > MAX_OUTSTANDING:
                raise InputError(src, f"jobs[{name}].job options", f"bs={opts['bs']}, iodepth={iodepth}, "
                                 f"numjobs={numjobs}", f"bs > 0, iodepth >= 1, numjobs >= 1, iodepth x numjobs "
                                 f"<= {MAX_OUTSTANDING:,} (what innosim fits and replays)")
            read = _direction(entries, "read", src, name)
            write = _direction(entries, "write", src, name)
            for call in ("fsync", "fdatasync"):
                value = opts.get(call, "0").strip()
                if value and not (value.isascii() and value.isdigit()):
                    raise InputError(src, f"jobs[{name}].job options.{call}", f"{opts[call]!r} is not a whole number",
                                     "writes between two sync calls (0: none)")
            sync, sync_calls = _sync(entries, src, name)
            if read is None and write is None:
                raise InputError(src, f"jobs[{name}]", "did no I/O")
            if (share == 1.0 and read is None) or (share == 0.0 and write is None):
                raise InputError(src, f"jobs[{name}]", f"rw={rw} but it did no {'read' if share else 'write'}s",
                                 "a job whose I/O matches its rw option")
            for op, d in (("read", read), ("write", write)):
                # Little's law: rate x mean latency is the I/Os in flight, at most iodepth x numjobs
                # (on the real sets in shared/data/fio at most 1.02 of it, clones pooled).
                if d is not None and d.iops * d.lat.mean_s > LITTLE_SLACK * iodepth * numjobs:
                    raise InputError(src, f"jobs[{name}].{op}.iops",
                                     f"{d.iops:.6g} I/Os a second at a mean latency of {d.lat.mean_s:.3g} s would "
                                     f"keep {d.iops * d.lat.mean_s:.3g} I/Os in flight, more than iodepth x numjobs "
                                     f"= {iodepth * numjobs}", "the rate and latencies fio measured for the job")
            jobs.append(FioJob(source=src, name=str(name), fio_version=version, rw=rw, block_bytes=bs,
                               iodepth=iodepth, numjobs=numjobs, direct=opts["direct"] in ("1", "true"),
                               ioengine=opts["ioengine"], read_share=share, options=opts, read=read,
                               write=write, clones=len(entries), sync=sync, sync_calls=sync_calls))
    return jobs


LOG_KINDS = ("lat", "clat", "slat", "iops", "bw")


@dataclass(frozen=True)
class FioLog:
    """One --write_*_log file. Latency values in seconds, bandwidth in bytes/s, IOPS as logged."""

    source: str
    kind: str
    time_s: np.ndarray
    value: np.ndarray
    ddir: np.ndarray
    block_bytes: np.ndarray
    offset_bytes: np.ndarray | None
    priority: np.ndarray | None
    columns: int


def log_kind(path: str | Path) -> str:
    """The log kind from fio's file naming: <prefix>_<kind>.<N>.log[.gz]."""
    name = Path(path).name
    for kind in LOG_KINDS:
        if f"_{kind}." in name or name.endswith(f"_{kind}.log") or name.endswith(f"_{kind}.log.gz"):
            return kind
    raise InputError(str(path), "", "cannot tell the log kind from the file name",
                     "names as fio writes them: <prefix>_{lat,clat,slat,iops,bw}.<N>.log")


def read_fio_log(path: str | Path, fio_major: int = 3, kind: str | None = None) -> FioLog:
    """Read a fio log. Latencies are ns in fio >= 3, us in fio 2.x (`fio_major`).

    Columns: time, value, ddir, bs, then per fio version and options: offset (log_offset=1),
    priority (fio >= 3.18; decimal or 0x hex), issue time (log_issue_time=1). A fifth column is
    taken as priority when it holds hex values or only 0/1, else as the offset.
    """
    src = str(path)
    kind = kind or log_kind(path)
    rows = []
    for n, line in enumerate(_read_text(Path(path)).splitlines(), start=1):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 4 or len(cells) > 8:
            raise InputError(src, f"line {n}", f"{len(cells)} columns", "4 to 8 comma-separated columns")
        rows.append(cells)
    if not rows:
        raise InputError(src, "", "is empty", "a fio log with at least one sample")
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        bad = next(i for i, r in enumerate(rows, 1) if len(r) != width)
        raise InputError(src, f"line {bad}", "column count differs from the first line")
    try:
        t = np.array([float(r[0]) for r in rows]) / 1000.0
        v = np.array([float(r[1]) for r in rows])
        ddir = np.array([int(r[2]) for r in rows])
        bs = np.array([int(r[3]) for r in rows])
    except ValueError:
        raise InputError(src, "", "time, value, ddir and bs columns must be numbers") from None
    offset = prio = None

    def prio_value(c: str) -> int:
        return int(c, 16) if c.lower().startswith("0x") else int(c)

    if width >= 5:
        fifth = [r[4] for r in rows]
        looks_prio = any(c.lower().startswith("0x") for c in fifth) or set(fifth) <= {"0", "1"}
        try:
            if width == 5 and looks_prio:
                prio = np.array([prio_value(c) for c in fifth])
            else:
                offset = np.array([int(c) for c in fifth])
                if width >= 6:
                    prio = np.array([prio_value(r[5]) for r in rows])
        except ValueError:
            raise InputError(src, "", "offset and priority columns must be whole numbers (priority may be hex)",
                             "time, value, ddir, bs[, offset][, prio]") from None
    if kind in ("lat", "clat", "slat"):
        v = v * (1e-9 if fio_major >= 3 else 1e-6)
    elif kind == "bw":
        v = v * 1024.0
    return FioLog(src, kind, t, v, ddir, bs, offset, prio, width)
