"""Series, aggregation, stalls and the summary of an engine run.

The base series has one row per tick (run.resolution, 10 ms by default). Counters become
per-interval counts under their server names; gauges are the value at the interval's end (and,
for checkpoint age, also the interval's maximum); latency percentiles come from every
transaction committed in the interval; `threads_<state>` is the mean number of user threads in
that state. `aggregate` builds the same columns at 100 ms, 1 s, 10 s, 60 s from the base rows and
the raw commits, so a 10 s row is exactly what a 10 s sampler would report.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from models.recovery import MEASURED_MAX_PAGES, MEASURED_MAX_REDO_BYTES, MEASURED_RATES, batch_count, recovery_s
from models.redo import LIMIT_FIELDS
from models.server import COUNTERS, FLUSH_KIND_COUNTER
from models.versions import version as version_of
from models.user_threads import STATE_NAMES
from sim.engine import GAUGES, EngineResult
from sim.settling import settling
from sim.swing import swing

RATE_COUNTERS = [c for c in COUNTERS if c != "commits"]
STALL_CAUSES = ("sync flush", "free-page wait", "log write wait", "binlog wait", "page read wait")
_STATE_COL = {name: "threads_" + name.replace(" ", "_").replace("-", "_") for name in STATE_NAMES}


def _latency_percentiles(commit_t: np.ndarray, latency_s: np.ndarray, edges: np.ndarray) -> dict[str, np.ndarray]:
    """p50/p95/p99/max of the latencies of transactions committed in each [edges[k], edges[k+1])."""
    n = len(edges) - 1
    out = {k: np.full(n, np.nan) for k in ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms")}
    if len(commit_t) == 0:
        return out
    idx = np.searchsorted(edges, commit_t, side="right") - 1
    ok = (idx >= 0) & (idx < n)
    idx, lat = idx[ok], latency_s[ok]
    order = np.lexsort((lat, idx))
    idx, lat = idx[order], lat[order]
    counts = np.bincount(idx, minlength=n)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    has = counts > 0
    for name, q in (("latency_p50_ms", 0.50), ("latency_p95_ms", 0.95), ("latency_p99_ms", 0.99),
                    ("latency_max_ms", 1.0)):
        pos = starts + np.floor(q * (counts - 1)).astype(np.int64)
        vals = np.full(n, np.nan)
        vals[has] = lat[pos[has]] * 1000.0
        out[name] = vals
    return out


def frame(result: EngineResult, interval_s: float | None = None) -> pd.DataFrame:
    """The series at `interval_s` (a multiple of the base tick; default the base tick)."""
    tick = result.tick_s
    step = 1 if interval_s is None else max(1, int(round(interval_s / tick)))
    n = result.n_ticks // step
    if n == 0:
        raise ValueError("interval longer than the run")
    last = np.arange(1, n + 1) * step - 1                  # base-tick row closing each interval
    dt = step * tick
    time_s = (last + 1) * tick
    cols: dict[str, np.ndarray] = {"time_s": time_s}
    cum = result.counters[last]
    prev = np.vstack([np.zeros((1, cum.shape[1]), dtype=cum.dtype), cum[:-1]])
    diff = cum - prev
    commits = diff[:, COUNTERS.index("commits")]
    cols["commits"] = commits
    cols["tps"] = commits / dt
    edges = np.concatenate([[0.0], time_s])
    cols.update(_latency_percentiles(result.commit_t, result.latency_s, edges))
    g = result.gauges[last]
    gi = {name: k for k, name in enumerate(GAUGES)}
    cap = result.redo_capacity_bytes
    lsn, ckpt, oldest = g[:, gi["lsn"]], g[:, gi["log_lsn_last_checkpoint"]], g[:, gi["log_lsn_buf_pool_oldest"]]
    cols["log_lsn_current"] = lsn
    cols["log_lsn_last_checkpoint"] = ckpt
    cols["log_lsn_buf_pool_oldest"] = oldest
    cols["log_lsn_checkpoint_age"] = lsn - ckpt
    cols["checkpoint_age_pct"] = 100.0 * (lsn - ckpt) / cap
    base_age = result.gauges[:, gi["lsn"]] - result.gauges[:, gi["log_lsn_last_checkpoint"]]
    cols["checkpoint_age_max_pct"] = 100.0 * base_age[: n * step].reshape(n, step).max(axis=1) / cap
    cols["modified_age_pct"] = 100.0 * (lsn - oldest) / cap
    lim = result.limits
    for name in LIMIT_FIELDS:
        v = getattr(lim, name)
        cols[f"log_{name}_pct"] = np.full(n, np.nan if v is None else 100.0 * v / cap)
    cols["Innodb_buffer_pool_pages_dirty"] = g[:, gi["Innodb_buffer_pool_pages_dirty"]]
    cols["Innodb_buffer_pool_pages_free"] = g[:, gi["Innodb_buffer_pool_pages_free"]]
    cols["recovery_pages"] = g[:, gi["recovery_pages"]]       # taken once a second (models.recovery)
    # The restart's duration had the server crashed then (models.recovery; NaN without a read rate).
    cols["recovery_estimate_s"] = (recovery_s(lsn - ckpt, cols["recovery_pages"], result.page_read_iops,
                                              MEASURED_RATES).total_s
                                   if result.page_read_iops > 0 else np.full(n, np.nan))
    # How many batches that recovery would apply its redo in (its parsed records outgrowing the pool).
    cols["recovery_batches"] = batch_count(lsn - ckpt, result.settings.buffer_pool_size_bytes, MEASURED_RATES)
    for name in RATE_COUNTERS:
        cols[name] = diff[:, COUNTERS.index(name)]
    cols["pages_flushed"] = sum(diff[:, COUNTERS.index(k)] for k in FLUSH_KIND_COUNTER.values())
    # Cumulative gauges (seconds so far), per interval.
    cols["fs_lock_wait_s"] = np.diff(g[:, gi["fs_lock_wait_s"]], prepend=0.0)
    cols["device_queue_depth"] = g[:, gi["device_queue_depth"]]          # submitted, not acknowledged
    cols["device_write_backlog"] = g[:, gi["device_write_backlog"]]      # acknowledged, not destaged
    cols["device_busy_pct"] = 100.0 * np.diff(g[:, gi["device_busy_s"]], prepend=0.0) / (result.device_units * dt)
    cols["trx_queue"] = g[:, gi["trx_queue"]]           # open loop: arrived, not yet taken by a user
    cols["buffer_flush_n_to_flush_requested"] = g[:, gi["buffer_flush_n_to_flush_requested"]]
    cols["buffer_flush_pct_for_lsn"] = g[:, gi["buffer_flush_pct_for_lsn"]]
    ts = result.thread_s[:, : n * step].reshape(len(STATE_NAMES), n, step).sum(axis=2) / dt
    for k, name in enumerate(STATE_NAMES):
        cols[_STATE_COL[name]] = ts[k]
    df = pd.DataFrame(cols)
    df["warmup"] = df["time_s"] <= result.warmup_s + 1e-9
    return df


def crash_recovery(m1: pd.DataFrame, result: EngineResult) -> dict | None:
    """models.recovery's estimate at the measured second whose crash would take longest to recover
    (None without a 1 s series or a device read rate)."""
    if len(m1) == 0 or "recovery_pages" not in m1 or result.page_read_iops <= 0:
        return None
    redo = m1["log_lsn_checkpoint_age"].to_numpy()
    pages = m1["recovery_pages"].to_numpy()
    k = int(np.argmax(m1["recovery_estimate_s"].to_numpy()))
    est = recovery_s(redo[k], pages[k], result.page_read_iops, MEASURED_RATES)
    out = {"at_s": float(m1["time_s"].iloc[k]), "redo_bytes": int(est.redo_bytes), "pages": int(est.pages),
           "batches": int(m1["recovery_batches"].iloc[k]),
           "page_read_iops": result.page_read_iops, "rates": MEASURED_RATES.source,
           "pages_max": int(pages.max()), "redo_bytes_max": int(redo.max()),
           # Past the largest crash the rates were measured on: the estimate is an extrapolation.
           "beyond_measured": bool(est.redo_bytes > MEASURED_MAX_REDO_BYTES or est.pages > MEASURED_MAX_PAGES)}
    out.update({name: float(getattr(est, name)) for name in ("start_s", "scan_s", "read_s", "apply_cpu_s",
                                                              "apply_s", "total_s")})
    return out


def stalls(df: pd.DataFrame, threshold_pct: float, version: str = "mysql-5.6") -> pd.DataFrame:
    """Runs of consecutive intervals with throughput below threshold_pct % of the median.

    The median and the stalls are taken over the measured part (after the warm-up). The cause in
    force is the user-thread wait state with most thread-time over the stall (sync flush, free-page
    wait, log write wait, binlog wait, page read wait); when none of them holds threads, "file lock" if InnoDB's writes waited
    on inode locks during it, else "none identified". The log_free_check wait is named for the
    server `version` (models.versions.Version.margin_wait: "sync flush" or "redo space wait").
    Beside the cause, what the I/O side did over the stall: pages flushed a second (and their
    median over the measured part), the data device's busy share of its units' time, and the
    highest checkpoint age (% of the redo capacity). A log write wait on a device kept busy by a
    flush burst is a different stall from one on an idle device.
    """
    m = df[~df["warmup"]]
    cols = ["start_s", "end_s", "length_s", "min_tps", "median_tps", "cause", "sync_flush_thread_s",
            "free_page_wait_thread_s", "log_write_wait_thread_s", "binlog_wait_thread_s",
            "page_read_wait_thread_s", "fs_lock_wait_s", "buffer_flush_sync_waits",
            "pages_flushed_per_s", "median_pages_flushed_per_s", "device_busy_pct", "checkpoint_age_max_pct"]
    if len(m) == 0:
        return pd.DataFrame(columns=cols)
    dt = float(m["time_s"].iloc[1] - m["time_s"].iloc[0]) if len(m) > 1 else float(m["time_s"].iloc[0])
    med = float(np.median(m["tps"]))
    med_flushed = float(np.median(m["pages_flushed"])) / dt
    low = (m["tps"] < med * threshold_pct / 100.0).to_numpy()
    rows = []
    k = 0
    n = len(m)
    state_cols = [_STATE_COL[c] for c in STALL_CAUSES]
    while k < n:
        if not low[k]:
            k += 1
            continue
        j = k
        while j + 1 < n and low[j + 1]:
            j += 1
        seg = m.iloc[k: j + 1]
        waits = [float(seg[c].sum() * dt) for c in state_cols]
        fsw = float(seg["fs_lock_wait_s"].sum())
        if max(waits) > 0:
            cause = STALL_CAUSES[int(np.argmax(waits))]
            if cause == "sync flush":
                cause = version_of(version).margin_wait
        elif fsw > 0:
            cause = "file lock"
        else:
            cause = "none identified"
        length_s = (j - k + 1) * dt
        rows.append((float(seg["time_s"].iloc[0] - dt), float(seg["time_s"].iloc[-1]), length_s,
                     float(seg["tps"].min()), med, cause, *waits, fsw,
                     int(seg["buffer_flush_sync_waits"].sum()),
                     float(seg["pages_flushed"].sum()) / length_s, med_flushed,
                     float(seg["device_busy_pct"].mean()), float(seg["checkpoint_age_max_pct"].max())))
        k = j + 1
    return pd.DataFrame(rows, columns=cols)


def stall_totals(st: pd.DataFrame) -> dict:
    """A stall list's count, its seconds, and its seconds per cause, the most first."""
    by_cause: dict[str, float] = {}
    for cause, length_s in zip(st["cause"], st["length_s"]):
        by_cause[cause] = by_cause.get(cause, 0.0) + float(length_s)
    return {"count": len(st), "seconds": float(st["length_s"].sum()) if len(st) else 0.0,
            "seconds_by_cause": dict(sorted(by_cause.items(), key=lambda kv: (-kv[1], kv[0])))}


SERIES_INTERVALS = (("10ms", None), ("100ms", 0.1), ("1s", 1.0), ("10s", 10.0), ("60s", 60.0))


def series_frames(result: EngineResult) -> dict[str, pd.DataFrame]:
    """`frame` at the base tick and every standard interval that fits in the run, by label."""
    total_s = result.n_ticks * result.tick_s
    return {label: frame(result, interval) for label, interval in SERIES_INTERVALS
            if interval is None or interval <= total_s}


def _swing(ten: pd.DataFrame, m1: pd.DataFrame) -> dict | None:
    """sim.swing.swing on the measured 10 s series and the measured 1 s one (m1)."""
    ten = ten[~ten["warmup"]]
    return swing(ten["tps"].to_numpy(), 10.0, m1["time_s"].to_numpy(),
                 m1["log_lsn_current"].to_numpy(dtype=float), m1["log_lsn_buf_pool_oldest"].to_numpy(dtype=float))


def steady_figures(m1: pd.DataFrame, mb: pd.DataFrame, settled: dict | None, warmup_s: float) -> dict | None:
    """Headline figures over the steady state: the measured 1 s rows (m1) and base-tick rows (mb)
    from where sim.settling ends the start-up transient. None when the run has not settled or is
    too short to judge."""
    if not settled or not settled["settled"]:
        return None
    skip_s = settled["transient_ends_s"]
    w1 = m1.iloc[int(round(skip_s)):]                 # settling reads the 1 s rows by position
    from_s = warmup_s + skip_s
    wb = mb[mb["time_s"] > from_s + 1e-9]
    if not len(w1) or not len(wb):
        return None
    tps = w1["tps"].to_numpy(dtype=float)
    return {"from_s": from_s, "seconds": len(w1),
            "tps_mean": float(tps.mean()), "tps_p1_per_s": float(np.percentile(tps, 1)),
            "seconds_below_50pct_median": int((tps < 0.5 * np.median(tps)).sum()),
            "pages_flushed_per_s_total": float(w1["pages_flushed"].mean()),
            "modified_age_mean_pct": float(w1["modified_age_pct"].mean()),
            "modified_age_max_pct": float(wb["modified_age_pct"].max()),
            "checkpoint_age_max_pct": float(wb["checkpoint_age_pct"].max()),
            "buffer_flush_sync_waits": int(w1["buffer_flush_sync_waits"].sum()),
            "buffer_flush_sync_waits_max_per_s": int(w1["buffer_flush_sync_waits"].max())}


def summary(result: EngineResult, frames: dict[str, pd.DataFrame] | None = None) -> dict:
    """Headline figures of a run (measured part only); `frames` as from series_frames, if at hand."""
    scn = result.scenario
    thr = scn.run.stall_threshold_pct
    if frames is None:
        frames = series_frames(result)
    base = frames["10ms"]
    sec = frames.get("1s", base)
    ms100 = frames.get("100ms", base)
    m1 = sec[~sec["warmup"]]
    mb = base[~base["warmup"]]
    t0 = result.warmup_s
    # The engine runs half a tick past the end so that the last tick is recorded: commits in that
    # half tick are not part of the run.
    end_s = result.n_ticks * result.tick_s
    sel = (result.commit_t > t0) & (result.commit_t <= end_s + 1e-12)
    lat = result.latency_s[sel]
    measured_s = result.n_ticks * result.tick_s - t0
    ver = result.settings.version
    s1, s100 = stalls(sec, thr, ver), stalls(ms100, thr, ver)
    out = {
        "scenario": scn.name,
        "stall_threshold_pct": thr,
        "measured_s": measured_s,
        "commits": int(sel.sum()),
        "tps_mean": float(sel.sum() / measured_s) if measured_s > 0 else 0.0,
        "tps_p99_per_s": float(np.percentile(m1["tps"], 99)) if len(m1) else None,
        "tps_p1_per_s": float(np.percentile(m1["tps"], 1)) if len(m1) else None,
        "tps_median_per_s": float(np.median(m1["tps"])) if len(m1) else None,
        # The interval the per-second figures are taken at: 1 s, or the base tick in a run shorter than 1 s.
        "per_s_interval_s": 1.0 if "1s" in frames else result.tick_s,
        "latency_ms": {q: (float(np.percentile(lat, p) * 1000) if len(lat) else None)
                       for q, p in (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100))},
        "seconds_below_50pct_median": int((m1["tps"] < 0.5 * np.median(m1["tps"])).sum()) if len(m1) else 0,
        "stalls_1s": stall_totals(s1),
        "stalls_100ms": stall_totals(s100),
        "sync_flush_thread_s": float((mb[_STATE_COL["sync flush"]] * result.tick_s).sum()),
        "page_read_wait_thread_s": float((mb[_STATE_COL["page read wait"]] * result.tick_s).sum()),
        "page_read_wait_threads_mean": float(mb[_STATE_COL["page read wait"]].mean()) if len(mb) else 0.0,
        "buffer_pool_reads_per_s": float(m1["Innodb_buffer_pool_reads"].sum() / max(len(m1), 1)),
        "time_under_sync_flush_s": float(((mb[_STATE_COL["sync flush"]] > 0)).sum() * result.tick_s),
        "buffer_flush_sync_waits": int(m1["buffer_flush_sync_waits"].sum()) if len(m1) else 0,
        "buffer_flush_sync_waits_max_per_s": int(m1["buffer_flush_sync_waits"].max()) if len(m1) else 0,
        "log_on_file_space_waits": int(m1["log_on_file_space_waits"].sum()) if len(m1) else 0,
        "margin_wait": version_of(result.settings.version).margin_wait,
        "checkpoint_age_max_pct": float(mb["checkpoint_age_pct"].max()) if len(mb) else 0.0,
        "checkpoint_age_max_bytes": int(mb["log_lsn_checkpoint_age"].max()) if len(mb) else 0,
        "modified_age_max_pct": float(mb["modified_age_pct"].max()) if len(mb) else 0.0,
        "pages_flushed_per_s": {k: float(m1[c].sum() / max(len(m1), 1)) for k, c in FLUSH_KIND_COUNTER.items()},
        "pages_flushed_per_s_total": float(m1["pages_flushed"].sum() / max(len(m1), 1)),
        "device_busy_pct_mean": float(m1["device_busy_pct"].mean()) if len(m1) else 0.0,
        "device_busy_pct_max_1s": float(m1["device_busy_pct"].max()) if len(m1) else 0.0,
        "device_queue_depth_mean": float(mb["device_queue_depth"].mean()) if len(mb) else 0.0,
        "device_write_backlog_mean": float(mb["device_write_backlog"].mean()) if len(mb) else 0.0,
        "Innodb_buffer_pool_wait_free": int(m1["Innodb_buffer_pool_wait_free"].sum()) if len(m1) else 0,
        "log_threads": result.log_threads,
        "log_writes_per_s": float(m1["Innodb_log_writes"].sum() / max(len(m1), 1)),
        "log_fsyncs_per_s": float(m1["Innodb_os_log_fsyncs"].sum() / max(len(m1), 1)),
        "log_bin": result.settings.log_bin,
        "sync_binlog": result.settings.sync_binlog,
        "binlog_group_commits": int(m1["Binlog_group_commits"].sum()) if len(m1) else 0,
        "binlog_commits": int(m1["Binlog_commits"].sum()) if len(m1) else 0,
        "binlog_fsyncs": int(m1["binlog_fsyncs"].sum()) if len(m1) else 0,
        "innodb_thread_concurrency": result.settings.thread_concurrency,
        "innodb_queue_thread_s": float((mb[_STATE_COL["innodb queue"]] * result.tick_s).sum()),
        "innodb_queue_threads_mean": float(mb[_STATE_COL["innodb queue"]].mean()) if len(mb) else 0.0,
        "offered_tps": scn.workload.rate_tps,
        "trx_queue_mean": float(mb["trx_queue"].mean()) if len(mb) else 0.0,
        "trx_queue_max": int(mb["trx_queue"].max()) if len(mb) else 0,
        "redo_capacity_bytes": result.redo_capacity_bytes,
        "limits_pct": {name: (None if getattr(result.limits, name) is None
                              else 100.0 * getattr(result.limits, name) / result.redo_capacity_bytes)
                       for name in LIMIT_FIELDS},
        "limit_names": dict(result.limits.names),
        "version": result.settings.version,
        "buffer_pool_instances": result.n_instances,
        "wall_s": result.wall_s,
        "realtime_ratio": (result.n_ticks * result.tick_s) / result.wall_s if result.wall_s > 0 else None,
        # Whether the measured part left its start-up transient (sim.settling: a settling band on the 1 s series).
        "settling": settling(sec, 1.0).as_dict() if "1s" in frames and len(sec) > 1 else None,
        # A slow swing of the 10 s averages, its period and the flush list's residence time.
        # (a run long enough for a 10 s interval has its 1 s series too, so m1 is at 1 s)
        "swing": _swing(frames["10s"], m1) if "10s" in frames else None,
        "warnings": list(result.warnings),
    }
    out["crash_recovery"] = crash_recovery(m1, result)
    # The headline figures again, over the steady state only (None: not settled).
    out["steady"] = steady_figures(m1, mb, out["settling"], t0)      # no 1 s series: no settling, None
    return out
