"""Readers of measured server traces, each turned into one per-second frame.

Inputs (issue 4, part 3):
* sysbench 1.0 `--report-interval=N` output: `[ 10s ] thds: 16 tps: ... qps: ... (r/w/o: ...)
  lat (ms,95%): ... err/s: ... reconn/s: ...` (per-interval figures, not cumulative), and with
  `--rate` the `[ 10s ] queue length: N, concurrency: M` line sysbench prints after each of them;
* tpcc-mysql `tpcc_start -i N` output: `  10, trx: 7688, 95%: 37.412, 99%: 51.629, max_rt: 96.649,
  7691|83.015, 769|13.419, 769|91.254, 768|161.849` (new-order count and its 95/99/max latency in
  ms, then count|max of payment, order-status, delivery, stock-level; some forks add a phase);
* `mysqladmin extended-status -r -i N`: repeated `| Variable_name | Value |` tables; the first
  holds absolute values, the following ones the change since the previous (with -r);
* a CSV of timestamped samples (`time_s` seconds, or `timestamp` as epoch seconds or ISO 8601)
  with SHOW GLOBAL STATUS and INFORMATION_SCHEMA.INNODB_METRICS names, counters cumulative as
  the server reports them (what validation/live/capture.py writes).

Frame columns use the simulator's names where it has them (sim.metrics): `tps`, `latency_p95_ms`,
`log_lsn_checkpoint_age` (bytes), `Innodb_buffer_pool_pages_dirty`, `pages_flushed` and
`Innodb_os_log_written` (per second) ... so a measured and a simulated series compare directly.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from models.errors import InputError
from sim.fio import decode_text

# The quantities a trace is checked for; `lacks` names the ones a file did not have.
CORE = {
    "tps": "throughput (transactions per second)",
    "latency": "latency percentiles",
    "log_lsn_checkpoint_age": "checkpoint age",
    "Innodb_buffer_pool_pages_dirty": "dirty pages",
    "pages_flushed": "pages flushed per second",
    "Innodb_os_log_written": "redo bytes written per second",
}

# Counters (cumulative in the server; per second in the frame): frame column <- server names, in
# order of preference (SHOW GLOBAL STATUS first, then INNODB_METRICS).
COUNTERS = {
    "commits": ("Com_commit", "trx_commits_insert_update"),
    "qps": ("Questions", "Queries"),
    "Innodb_os_log_written": ("Innodb_os_log_written", "os_log_bytes_written"),
    "pages_flushed": ("Innodb_buffer_pool_pages_flushed", "buffer_flush_batch_total_pages"),
    "Innodb_buffer_pool_reads": ("Innodb_buffer_pool_reads", "buffer_pool_reads"),
    "Innodb_buffer_pool_read_requests": ("Innodb_buffer_pool_read_requests", "buffer_pool_read_requests"),
    "Innodb_buffer_pool_write_requests": ("Innodb_buffer_pool_write_requests", "buffer_pool_write_requests"),
    "Innodb_data_writes": ("Innodb_data_writes", "os_data_writes"),
    "Innodb_data_fsyncs": ("Innodb_data_fsyncs", "os_data_fsyncs"),
    "Innodb_log_writes": ("Innodb_log_writes", "log_writes"),
    "Innodb_os_log_fsyncs": ("Innodb_os_log_fsyncs", "os_log_fsyncs"),
    "Innodb_dblwr_writes": ("Innodb_dblwr_writes", "innodb_dblwr_writes"),
    "buffer_flush_adaptive_total_pages": ("buffer_flush_adaptive_total_pages",),
    "buffer_flush_background_total_pages": ("buffer_flush_background_total_pages",),
    "buffer_flush_sync_total_pages": ("buffer_flush_sync_total_pages",),
    "buffer_LRU_batch_total_pages": ("buffer_LRU_batch_total_pages", "buffer_LRU_batch_flush_total_pages"),
    "buffer_LRU_single_flush_pages": ("buffer_LRU_single_flush_num_scan", "buffer_LRU_single_flush_pages"),
    "buffer_flush_neighbor_total_pages": ("buffer_flush_neighbor_total_pages",),
    "buffer_flush_sync_waits": ("buffer_flush_sync_waits",),
    "buffer_flush_adaptive": ("buffer_flush_adaptive",),            # page cleaner passes
    "buffer_flush_background": ("buffer_flush_background",),
    "buffer_LRU_batch_num_scan": ("buffer_LRU_batch_num_scan",),
}
# Gauges (a level at the sample time).
GAUGES = {
    "log_lsn_checkpoint_age": ("Innodb_checkpoint_age", "log_lsn_checkpoint_age"),
    "checkpoint_max_age_bytes": ("Innodb_checkpoint_max_age", "log_max_checkpoint_age"),
    "Innodb_buffer_pool_pages_dirty": ("Innodb_buffer_pool_pages_dirty", "buffer_pool_pages_dirty"),
    "Innodb_buffer_pool_pages_free": ("Innodb_buffer_pool_pages_free", "buffer_pool_pages_free"),
    "Innodb_buffer_pool_pages_data": ("Innodb_buffer_pool_pages_data", "buffer_pool_pages_data"),
    "threads_running": ("Threads_running",),
}
# Positions from which checkpoint age follows when no gauge of it was sampled.
LSN_PAIRS = (("Innodb_lsn_current", "Innodb_lsn_last_checkpoint"), ("log_lsn_current", "log_lsn_last_checkpoint"))
# Server names sampled as levels (LSN positions too), and every server name a reader uses.
LEVEL_NAMES = {n for names in GAUGES.values() for n in names} | {n for p in LSN_PAIRS for n in p}
KNOWN_NAMES = LEVEL_NAMES | {n for names in COUNTERS.values() for n in names}


@dataclass
class Trace:
    """One measured trace as a per-second frame (`time_s`: end of each second since the start)."""
    source: str
    kind: str
    frame: pd.DataFrame
    interval_s: float
    lacks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        cols = [c for c in self.frame.columns if c != "time_s"]
        text = (f"{self.source}: {self.kind}, {len(self.frame)} s at {self.interval_s:g} s intervals; "
                f"{len(cols)} series")
        if self.lacks:
            text += "; lacks " + ", ".join(CORE[k] for k in self.lacks)
        return text


def _lacks(frame: pd.DataFrame) -> list[str]:
    have = set(frame.columns)
    out = []
    for k in CORE:
        if k == "latency":
            if not any(c.startswith("latency_") for c in have):
                out.append(k)
        elif k not in have or frame[k].isna().all():
            out.append(k)
    return out


JITTER_S = 0.25     # a sample up to this early or late still counts for its second


def per_second(end_s: np.ndarray, rates: dict[str, np.ndarray], gauges: dict[str, np.ndarray],
               start_s: float = 0.0) -> pd.DataFrame:
    """Per-second frame from interval samples: interval k covers (end_s[k-1], end_s[k]] (the first
    one starts at `start_s`); a rate holds over its whole interval, a gauge is interpolated
    linearly between its sample times. Seconds whose end lies before the first interval's end
    take no rate (NaN)."""
    end_s = np.asarray(end_s, dtype=float)
    n = int(math.floor(end_s[-1] + JITTER_S))
    t = np.arange(1, n + 1, dtype=float)
    out = {"time_s": t}
    # The interval containing second t: the first end >= t (sample clocks jitter by a few ms).
    k = np.searchsorted(end_s, t - JITTER_S, side="left")
    inside = (k < len(end_s)) & (t > start_s + JITTER_S)
    for name, v in rates.items():
        col = np.full(n, np.nan)
        col[inside] = np.asarray(v, dtype=float)[k[inside]]
        out[name] = col
    for name, v in gauges.items():
        v = np.asarray(v, dtype=float)
        ok = ~np.isnan(v)
        out[name] = np.interp(t, end_s[ok], v[ok]) if ok.any() else np.full(n, np.nan)
    return pd.DataFrame(out)


# -- sysbench ------------------------------------------------------------------------------------

_NUM = r"\d+(?:\.\d+)?"          # a decimal as the benchmark tools print it
_SB_LINE = re.compile(
    rf"^\[\s*(?P<t>{_NUM})s\s*\]\s+thds:\s*(?P<thds>\d+)\s+tps:\s*(?P<tps>{_NUM})\s+qps:\s*(?P<qps>{_NUM})\s+"
    rf"\(r/w/o:\s*(?P<r>{_NUM})/(?P<w>{_NUM})/(?P<o>{_NUM})\)\s+lat\s+\(ms,(?P<pct>[^)]+)\):\s*(?P<lat>{_NUM})\s+"
    rf"err/s:?\s*(?P<err>{_NUM})\s+reconn/s:\s*(?P<reconn>{_NUM})")


# With --rate, each report line is followed by the event queue's state (db_report_intermediate).
_SB_QUEUE = re.compile(rf"^\[\s*(?P<t>{_NUM})s\s*\]\s+queue length:\s*(?P<q>\d+),\s*concurrency:\s*(?P<c>\d+)")


def read_sysbench(text: str, src: str) -> Trace:
    rows = []
    queue: dict[float, tuple[float, float]] = {}
    label = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("["):
            continue
        q = _SB_QUEUE.match(line)
        if q is not None:
            queue[float(q["t"])] = (float(q["q"]), float(q["c"]))
            continue
        m = _SB_LINE.match(line)
        if m is None:
            raise InputError(src, f"line {n}", f"not a sysbench 1.0 report line: {line[:80]!r}",
                             "[ Ns ] thds: .. tps: .. qps: .. (r/w/o: ../../..) lat (ms,95%): .. err/s: .. reconn/s: ..")
        label = m["pct"]
        rows.append((float(m["t"]), int(m["thds"]), float(m["tps"]), float(m["qps"]), float(m["lat"]),
                     float(m["err"])))
    if not rows:
        raise InputError(src, "", "no per-interval lines", "sysbench output run with --report-interval=1")
    a = np.array(rows)
    pct = label.rstrip("%")
    lat_col = f"latency_p{pct}_ms" if pct.replace(".", "").isdigit() else f"latency_{pct}_ms"
    interval = float(a[0, 0]) if len(a) == 1 else float(np.median(np.diff(a[:, 0])))
    levels = {"threads": a[:, 1]}
    if queue:
        # --rate: transactions waiting for a thread, and threads running one, at each report.
        qc = np.array([queue.get(t, (np.nan, np.nan)) for t in a[:, 0]])
        levels["trx_queue"], levels["concurrency"] = qc[:, 0], qc[:, 1]
    frame = per_second(a[:, 0], {"tps": a[:, 2], "qps": a[:, 3], lat_col: a[:, 4], "errors_per_s": a[:, 5]},
                       levels)
    return Trace(src, "sysbench", frame, interval, _lacks(frame))


# -- tpcc-mysql ----------------------------------------------------------------------------------

_TPCC_LINE = re.compile(
    rf"^\s*(?P<t>\d+),\s*(?:(?P<phase>[a-z-]+),\s*)?trx:\s*(?P<no>\d+),\s*95%:\s*(?P<p95>{_NUM}),\s*"
    rf"99%:\s*(?P<p99>{_NUM}),\s*max_rt:\s*(?P<max>{_NUM}),\s*(?P<rest>.*)$")


def read_tpcc(text: str, src: str) -> Trace:
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if "trx:" not in line:
            continue
        m = _TPCC_LINE.match(line)
        if m is None:
            raise InputError(src, f"line {n}", f"not a tpcc-mysql interval line: {line.strip()[:80]!r}",
                             "  10, trx: N, 95%: ms, 99%: ms, max_rt: ms, N|ms, N|ms, N|ms, N|ms")
        others = re.findall(rf"(\d+)\|({_NUM})", m["rest"])
        if len(others) != 4:
            raise InputError(src, f"line {n}", "expected four count|max_rt pairs after max_rt",
                             "payment, order-status, delivery, stock-level")
        total = int(m["no"]) + sum(int(c) for c, _ in others)
        rows.append((int(m["t"]), int(m["no"]), total, float(m["p95"]), float(m["p99"]), float(m["max"]),
                     m["phase"] == "rampup"))
    if not rows:
        raise InputError(src, "", "no interval lines (\"  10, trx: ...\")", "tpcc_start output run with -i N")
    t = np.array([r[0] for r in rows], dtype=float)
    if np.any(np.diff(t) <= 0):
        raise InputError(src, "", "interval times do not increase", "one tpcc_start run per file")
    widths = np.diff(np.concatenate([[0.0], t]))
    no = np.array([r[1] for r in rows]) / widths
    tps = np.array([r[2] for r in rows]) / widths
    frame = per_second(t, {"tps": tps, "new_order_per_s": no, "latency_p95_ms": [r[3] for r in rows],
                           "latency_p99_ms": [r[4] for r in rows], "latency_max_ms": [r[5] for r in rows],
                           "rampup": [float(r[6]) for r in rows]}, {})
    frame["rampup"] = frame["rampup"].fillna(0).astype(bool)
    notes = ["latency percentiles are new-order's only (tpcc-mysql prints no others)"]
    return Trace(src, "tpcc-mysql", frame, float(np.median(widths)), _lacks(frame), notes)


# -- server status: mysqladmin and CSV ------------------------------------------------------------

def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _status_frame(t_end: np.ndarray, values: dict[str, np.ndarray], cumulative: bool, start_s: float,
                  src: str) -> tuple[pd.DataFrame, list[str]]:
    """Per-second frame from sampled server variables. `values`: name -> value per sample, counters
    cumulative when `cumulative`, else already per-interval changes (mysqladmin -r after the
    first sample); gauges are levels in either case (the caller rebuilds them)."""
    notes = []
    widths = np.diff(t_end)
    rates, gauges = {}, {}
    def sampled(names: tuple[str, ...]) -> str | None:
        """The first of `names` the trace has values for."""
        return next((n for n in names if n in values and not np.isnan(values[n]).all()), None)

    for col, names in COUNTERS.items():
        name = sampled(names)
        if name is None:
            continue
        v = values[name]
        delta = np.diff(v) if cumulative else v[1:]
        if np.any(delta < 0):
            notes.append(f"{name} went down (a server restart or a counter reset) in {src}")
        rates[col] = delta / widths
    for col, names in GAUGES.items():
        name = sampled(names)
        if name is not None:
            gauges[col] = values[name][1:]
    if "log_lsn_checkpoint_age" not in gauges:
        for cur, ckpt in LSN_PAIRS:
            if cur in values and ckpt in values:
                gauges["log_lsn_checkpoint_age"] = (values[cur] - values[ckpt])[1:]
                notes.append(f"checkpoint age from {cur} - {ckpt}")
                break
    if "commits" in rates:
        rates["tps"] = rates.pop("commits")
        if np.nanmax(rates["tps"]) == 0:
            notes.append("Com_commit stayed at 0 (autocommit statements?): tps is 0; pass a client trace too")
    frame = per_second(t_end[1:], rates, gauges, start_s=t_end[0])
    return frame, notes


def read_mysqladmin(text: str, src: str, interval_s: float | None = None) -> Trace:
    blocks: list[dict[str, float]] = []
    cur: dict[str, float] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith("| Variable_name"):
            cur = {}
            blocks.append(cur)
            continue
        if s.startswith("|") and cur is not None:
            parts = [p.strip() for p in s.strip("|").split("|")]
            if len(parts) != 2:
                raise InputError(src, f"line {n}", "a table row without two columns", "| name | value |")
            v = _number(parts[1])
            if v is not None:
                cur[parts[0]] = v
    blocks = [b for b in blocks if b]
    if len(blocks) < 2:
        raise InputError(src, "", f"{len(blocks)} status table(s) found; at least two are needed",
                         "mysqladmin extended-status -r -i N output (several samples)")
    if "Uptime" not in blocks[0]:
        raise InputError(src, "Uptime", "missing from the first status table", "SHOW GLOBAL STATUS output")
    up = [b.get("Uptime", math.nan) for b in blocks]
    relative = up[1] < up[0]                     # -r: later tables hold the change (Uptime: the interval)
    if interval_s is None:
        step = np.median(up[1:]) if relative else np.median(np.diff(up))
        interval_s = float(step) if step and step > 0 else 1.0
    t = np.arange(len(blocks), dtype=float) * interval_s
    names = sorted(set().union(*blocks))
    raw = {k: np.array([b.get(k, math.nan) for b in blocks], dtype=float) for k in names}
    if relative:
        # Gauges come as changes too: rebuild their level from the first (absolute) table.
        for k in LEVEL_NAMES & set(raw):
            raw[k] = np.nancumsum(raw[k])
    frame, notes = _status_frame(t, raw, cumulative=not relative, start_s=0.0, src=src)
    if not relative:
        notes.append("absolute tables (no -r): rates are differences of consecutive samples")
    return Trace(src, "mysqladmin", frame, interval_s, _lacks(frame), notes)


def _times(col: list[str], name: str, src: str) -> np.ndarray:
    out = []
    for n, v in enumerate(col, 2):
        x = _number(v)
        if x is None:
            try:
                x = datetime.fromisoformat(v.strip()).timestamp()
            except ValueError:
                raise InputError(src, f"line {n}", f"{name} {v!r} is neither seconds nor an ISO 8601 time",
                                 "seconds (relative or epoch) or e.g. 2026-11-22T10:00:01") from None
        out.append(x)
    t = np.array(out, dtype=float)
    if np.any(np.diff(t) <= 0):
        bad = int(np.flatnonzero(np.diff(t) <= 0)[0]) + 3
        raise InputError(src, f"line {bad}", f"{name} does not increase", "samples in time order")
    return t


def read_samples_csv(text: str, src: str) -> Trace:
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as err:
        raise InputError(src, "", f"not CSV: {err}") from None
    if len(rows) < 3:
        raise InputError(src, "", "fewer than two samples", "a header line and two or more sample lines")
    header = rows[0]
    width = len(header)
    for n, r in enumerate(rows[1:], 2):
        if len(r) != width:
            raise InputError(src, f"line {n}", f"{len(r)} fields where the header has {width}", "one value per column")
    cols = {h: [r[i] for r in rows[1:]] for i, h in enumerate(header)}
    tname = next((k for k in ("time_s", "timestamp", "time") if k in cols), None)
    if tname is None:
        raise InputError(src, "header", "no time column", "time_s (seconds), or timestamp / time (epoch or ISO 8601)")
    t = _times(cols[tname], tname, src)
    t = t - t[0]
    values = {}
    for k, v in cols.items():
        if k in (tname, "timestamp", "time", "time_s"):
            continue
        nums = [_number(x) if x != "" else math.nan for x in v]
        if all(x is not None for x in nums):
            values[k] = np.array(nums, dtype=float)
    if not KNOWN_NAMES & set(values):
        raise InputError(src, "header", "no SHOW GLOBAL STATUS or INNODB_METRICS name among the columns",
                         "e.g. Com_commit, Innodb_os_log_written, Innodb_checkpoint_age, Innodb_buffer_pool_pages_dirty")
    frame, notes = _status_frame(t, values, cumulative=True, start_s=0.0, src=src)
    return Trace(src, "samples", frame, float(np.median(np.diff(t))), _lacks(frame), notes)


# -- any file ------------------------------------------------------------------------------------

def sniff(text: str) -> str:
    head = text[:20000]
    if re.search(r"^\[\s*[\d.]+s\s*\]\s+thds:", head, re.M):
        return "sysbench"
    if re.search(r"^\s*\d+,\s*(?:[a-z-]+,\s*)?trx:\s*\d+", head, re.M):
        return "tpcc-mysql"
    if "| Variable_name" in head:
        return "mysqladmin"
    first = head.split("\n", 1)[0]
    if "," in first and any(k in first.split(",") for k in ("time_s", "timestamp", "time")):
        return "samples"
    return "unknown"


def read_trace_bytes(raw: bytes, src: str) -> Trace:
    """Any supported trace (gzip allowed), its kind recognised from the contents."""
    if raw[:4] == b"PAR1" or b"\x00" in raw[:4096] and raw[:2] != b"\x1f\x8b":
        raise InputError(src, "", "binary data, not a text trace",
                         "sysbench or tpcc-mysql output, mysqladmin extended-status output, or a CSV of samples")
    text = decode_text(raw, src)
    kind = sniff(text)
    readers = {"sysbench": read_sysbench, "tpcc-mysql": read_tpcc, "mysqladmin": read_mysqladmin,
               "samples": read_samples_csv}
    if kind not in readers:
        raise InputError(src, "", "not a recognised trace",
                         "sysbench --report-interval output, tpcc_start -i output, mysqladmin extended-status "
                         "-r -i N output, or a CSV with a time_s/timestamp column and server variable names")
    try:
        return readers[kind](text, src)
    except InputError as err:
        cut = _without_cut_last_line(text, err)
        if cut is None:
            raise
        first = err
    try:
        trace = readers[kind](cut, src)
    except InputError:
        raise first from None
    trace.notes.append(f"{src} {first.field} left out: it ends the file without a newline, cut short "
                       "(a file copied while the benchmark still wrote it)")
    return trace


def _without_cut_last_line(text: str, err: InputError) -> str | None:
    """The text without its last line, when that line is unterminated and is the one `err` is
    about; else None."""
    if text.endswith("\n") or not err.field.startswith("line "):
        return None
    last_no = text.count("\n") + 1
    if err.field != f"line {last_no}":
        return None
    return text[: text.rfind("\n") + 1]


def read_trace(path: str | Path) -> Trace:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as err:
        raise InputError(str(p), "", f"cannot be read: {err.strerror}") from None
    return read_trace_bytes(raw, str(p))


def merge(traces: list[Trace], shifts_s: list[float] | None = None) -> Trace:
    """One frame from several traces of the same run (a client trace and a server trace): columns
    are taken from the first trace that has them; `shifts_s` moves each trace's clock."""
    if not traces:
        raise InputError("trace", "", "no trace files")
    shifts_s = shifts_s or [0.0] * len(traces)
    frame = None
    for tr, shift in zip(traces, shifts_s):
        f = tr.frame.copy()
        f["time_s"] = f["time_s"] + shift
        if frame is None:
            frame = f
        else:
            new = [c for c in f.columns if c not in frame.columns]
            frame = frame.merge(f[["time_s", *new]], on="time_s", how="outer")
    frame = frame[frame["time_s"] > 0].sort_values("time_s").reset_index(drop=True)
    notes = [n for tr in traces for n in tr.notes]
    notes += [f"{tr.source}: clock moved by {shift:+g} s" for tr, shift in zip(traces, shifts_s) if shift]
    return Trace(" + ".join(t.source for t in traces), "+".join(t.kind for t in traces), frame,
                 min(t.interval_s for t in traces), _lacks(frame), notes)
