"""What `innosim run` prints and writes for an oltp scenario.

Files (in -o DIR): series_10ms / series_100ms / series_1s / series_10s / series_60s as CSV and
Parquet, stalls_1s.csv and stalls_100ms.csv, summary.json, scenario.resolved.toml, and PNG plots
(throughput at 1 s and 10 s, checkpoint age with its limits, flushing by kind, sync waits).
Every file is written to a temporary name and renamed, so an interrupted run leaves no half file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from models.recovery import MULTI_BATCH_ERROR_RANGE
from sim.metrics import stalls
from sim.report import format_rows, write_atomic
from sim.settling import as_sentence, settling_text, steady_text
from sim.swing import swing_text

_MARGIN_TEXT = {"sync flush": "in sync flush", "redo space wait": "waiting for redo space (log_free_check)"}
# sysbench 1.0's MAX_QUEUE_LEN (src/sysbench.c): with --rate, a fuller queue stops its workers.
SYSBENCH_MAX_QUEUE = 131072


def _pct(x: float) -> str:
    return f"{x:+.0%}".replace("%", " %")


def log_threads_text(s: dict) -> str:
    """MySQL 8.0's log threads (models.log_threads): the measured window's redo writes and fsyncs,
    and over the whole run how often the writer and flusher spun and the cores that took; "" for
    a server without them."""
    lt = s.get("log_threads")
    if not lt:
        return ""
    cores = lt["spin_cpu_s"] / lt["sim_s"] if lt["sim_s"] > 0 else 0.0
    return (f"redo log threads (MySQL 8.0): {s['log_writes_per_s']:,.0f} writes/s, {s['log_fsyncs_per_s']:,.0f} "
            f"fsyncs/s; {lt['spinners']} spinning in {lt['spin_samples']:,} of "
            f"{lt['cpu_samples']:,} one-second CPU samples, on {cores:.2f} cores on average over the whole run "
            "(innodb_log_writer_threads = ON; with OFF each committing thread writes and fsyncs the log itself)")


def recovery_text(r: dict | None) -> str:
    """The summary's crash-recovery line (models.recovery): the worst second's restart."""
    if not r:
        return ""
    return (f"crash recovery: a crash at {r['at_s']:g} s would take the restart about {r['total_s']:,.1f} s "
            f"(scan {r['redo_bytes'] / 2**20:,.0f} MiB of redo: {r['scan_s']:,.1f} s; apply to "
            f"{r['pages']:,} pages: {r['apply_s']:,.1f} s, their reads at {r['page_read_iops']:,.0f} pages/s "
            f"{r['read_s']:,.1f} s, the records' CPU {r['apply_cpu_s']:,.1f} s; start {r['start_s']:g} s); "
            f"rates: {r['rates']}"
            + (f"; its parsed records would outgrow the buffer pool, so the restart would apply them in "
               f"{r['batches']} batches, writing each batch's pages back and reading the log again (in the "
               f"restarts measured that way this figure was {_pct(MULTI_BATCH_ERROR_RANGE[0])} to "
               f"{_pct(MULTI_BATCH_ERROR_RANGE[1])} off)"
               if r.get("batches", 1) > 1 else "")
            + ("; this crash is larger than any measured, so the figure is extrapolated"
               if r.get("beyond_measured") else ""))


def recovery_sentence(r: dict | None) -> str:
    """recovery_text as a sentence for the app's pages; empty without an estimate."""
    return as_sentence(recovery_text(r))


def summary_text(s: dict) -> str:
    lines = [
        f"scenario {s['scenario']}: {s['measured_s']:g} s measured, {s['buffer_pool_instances']} buffer pool "
        f"instance(s), simulated at {s['realtime_ratio']:.1f}x real time" if s["realtime_ratio"] else "",
        f"throughput: mean {s['tps_mean']:,.0f} commits/s; "
        + ("per second" if s.get("per_s_interval_s", 1.0) == 1.0
           else f"per {s['per_s_interval_s'] * 1000:g} ms interval (the run is shorter than 1 s)")
        + f" median {s['tps_median_per_s']:,.0f}, "
        f"p1 {s['tps_p1_per_s']:,.0f}, p99 {s['tps_p99_per_s']:,.0f}",
        "latency ms: " + ", ".join(f"{k} {v:,.1f}" for k, v in s["latency_ms"].items() if v is not None),
        f"checkpoint age max {s['checkpoint_age_max_pct']:.1f}% of redo capacity "
        f"({s['checkpoint_age_max_bytes'] / 2**20:,.0f} MiB)",
        f"{s.get('version', 'mysql-5.6')} limits: " + "; ".join(
            f"{s['limit_names'][k]} {v:.1f}%" for k, v in s["limits_pct"].items() if v is not None),
        "pages flushed per s: " + ", ".join(f"{k} {v:,.0f}" for k, v in s["pages_flushed_per_s"].items())
        + f" (total {s['pages_flushed_per_s_total']:,.0f})",
        (f"device: busy {s['device_busy_pct_mean']:.0f}% of its units' time (highest second "
         f"{s['device_busy_pct_max_1s']:.0f}%), {s['device_queue_depth_mean']:,.1f} I/Os submitted and not "
         "yet acknowledged on average"
         + (f"; its write cache holds {s['device_write_backlog_mean']:,.0f} acknowledged writes not yet "
            "destaged" if s.get("device_write_backlog_mean") else "")
         if "device_busy_pct_mean" in s else ""),
        f"buffer_flush_sync_waits {s['buffer_flush_sync_waits']:,} (max {s['buffer_flush_sync_waits_max_per_s']:,}/s); "
        + (f"log_on_file_space_waits {s['log_on_file_space_waits']:,}; "
           if s.get("margin_wait", "sync flush") != "sync flush" else "")
        + f"time with user threads {_MARGIN_TEXT.get(s.get('margin_wait'), 'in sync flush')} "
        f"{s['time_under_sync_flush_s']:.1f} s; "
        f"Innodb_buffer_pool_wait_free {s['Innodb_buffer_pool_wait_free']:,}",
        (f"page reads: {s['buffer_pool_reads_per_s']:,.0f}/s (Innodb_buffer_pool_reads); user threads waiting "
         f"for them {s['page_read_wait_threads_mean']:,.1f} on average ({s['page_read_wait_thread_s']:,.1f} thread-s)"
         if s.get("page_read_wait_thread_s") else ""),
        log_threads_text(s),
        (f"binary log (sync_binlog {s['sync_binlog']}): {s['binlog_group_commits']:,} group commits, "
         f"{s['binlog_commits'] / max(1, s['binlog_group_commits']):.1f} transactions each; "
         f"{s['binlog_fsyncs']:,} fsyncs" if s.get("log_bin") else ""),
        (f"innodb_thread_concurrency {s['innodb_thread_concurrency']}: on average "
         f"{s['innodb_queue_threads_mean']:.1f} threads waiting to enter InnoDB "
         f"({s['innodb_queue_thread_s']:,.1f} thread-s)" if s.get("innodb_thread_concurrency") else ""),
        (f"open loop: {s['offered_tps']:,.0f} transactions/s offered; queue mean {s['trx_queue_mean']:,.1f}, "
         f"max {s['trx_queue_max']:,} (latency counts from the arrival)"
         + (f"; sysbench --rate would have stopped: its queue holds {SYSBENCH_MAX_QUEUE:,} events ('The event "
            "queue is full')" if s["trx_queue_max"] >= SYSBENCH_MAX_QUEUE else "") if s.get("offered_tps") else ""),
        f"stalls (below {s['stall_threshold_pct']:g}% of median): at 1 s {stall_count_text(s['stalls_1s'], '{:g}')}, "
        f"at 100 ms {stall_count_text(s['stalls_100ms'], '{:.1f}')}",
        recovery_text(s.get("crash_recovery")),
        settling_text(s.get("settling")),
        steady_text(s.get("steady"), s.get("settling")),
        swing_text(s.get("swing")),
    ]
    for w in s["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(line for line in lines if line)


def stall_count_text(totals: dict, seconds_fmt: str) -> str:
    """'2 (10 s: sync flush 10 s)': a stall list's count and seconds, then its seconds per cause."""
    text = f"{totals['count']} ({seconds_fmt.format(totals['seconds'])} s"
    by_cause = totals.get("seconds_by_cause") or {}
    if by_cause:
        text += ": " + ", ".join(f"{cause} {seconds_fmt.format(sec)} s" for cause, sec in by_cause.items())
    return text + ")"


def stall_table(st, limit: int = 40) -> str:
    if len(st) == 0:
        return "(no stalls)"
    header = ("start s", "length s", "min tps", "median tps", "cause", "sync waits", "flushed/s", "device busy",
              "ckpt age max")
    rows = [(f"{r.start_s:.2f}", f"{r.length_s:.2f}", f"{r.min_tps:,.0f}", f"{r.median_tps:,.0f}", r.cause,
             f"{r.buffer_flush_sync_waits:,}", f"{r.pages_flushed_per_s:,.0f}", f"{r.device_busy_pct:.0f}%",
             f"{r.checkpoint_age_max_pct:.1f}%") for r in st.head(limit).itertuples()]
    text = format_rows(header, rows)
    if len(st) > limit:
        text += f"\n... {len(st) - limit} more (see stalls files)"
    return text


def resolved_toml(scn, base_dir: Path | None = None, origins: bool = False, release: bool = True) -> str:
    """The scenario with every default filled in, as TOML. With `base_dir` (where the TOML will be
    written), a device profile file is named relative to it, where the scenario looks for it.
    `origins`: each line ends with a comment saying where its value came from (Scenario.origins).
    server.version is the release written (Scenario.release), which loads back to the same
    version; with `release` False, the version it runs as (the keys stay the release's)."""
    out = [f"# {scn.name}: resolved from {scn.source}"]
    where = dict(scn.origins) if origins else {}
    from sim.config import SCHEMA, applicable_keys, setting_value
    for section in SCHEMA:
        out.append(f"\n[{section}]")
        for key in applicable_keys(scn, section):
            spec = SCHEMA[section][key]
            v = setting_value(scn, section, key)
            if (section, key) == ("server", "version") and not release:
                v = scn.server.version             # the version the release runs as
            if base_dir is not None and (section, key) == ("hardware", "device") and Path(v).is_file():
                v = os.path.relpath(Path(v).resolve(), base_dir.resolve())
            if isinstance(v, tuple):
                v = list(v)
            if v is None:
                continue
            if isinstance(v, bool):
                line = f"{key} = {'true' if v else 'false'}"
            elif isinstance(v, str):
                line = f'{key} = "{v}"'
            elif isinstance(v, float) and spec.kind == "duration":
                line = f'{key} = "{v:g}s"'
            else:
                line = f"{key} = {v!r}" if not isinstance(v, list) else f"{key} = {json.dumps(v)}"
            came = where.get(f"{section}.{key}")
            out.append(f"{line:<48}# {came}" if came else line)
    return "\n".join(out) + "\n"


def write_outputs(result, out_dir: Path, frames: dict, summary: dict) -> list[Path]:
    """Write every output file from the run's frames (sim.metrics.series_frames) and summary;
    returns the paths written."""
    import io

    from sim.plots import write_plots

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    thr = result.scenario.run.stall_threshold_pct
    for label, df in frames.items():
        p = out_dir / f"series_{label}.csv"
        write_atomic(p, df.to_csv(index=False))
        written.append(p)
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        p = out_dir / f"series_{label}.parquet"
        write_atomic(p, buf.getvalue())
        written.append(p)
    for label in ("1s", "100ms"):
        if label in frames:
            p = out_dir / f"stalls_{label}.csv"
            write_atomic(p, stalls(frames[label], thr, result.settings.version).to_csv(index=False))
            written.append(p)
    p = out_dir / "summary.json"
    write_atomic(p, json.dumps(summary, indent=2) + "\n")
    written.append(p)
    p = out_dir / "scenario.resolved.toml"
    write_atomic(p, resolved_toml(result.scenario))
    written.append(p)
    written += write_plots(result, frames, out_dir)
    return written
