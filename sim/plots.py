"""PNG plots of an engine run (matplotlib, no display needed)."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sim.report import write_atomic  # noqa: E402

from models.redo import LIMIT_FIELDS, RedoLimits  # noqa: E402

DEFAULT_LIMIT_NAMES = dict(RedoLimits.__dataclass_fields__["names"].default)


def _save(fig, path: Path) -> Path:
    write_atomic(path, png_bytes(fig))
    return path


def _interval_s(df) -> float:
    return float(df["time_s"].iloc[1] - df["time_s"].iloc[0]) if len(df) > 1 else 1.0


FIXED_MARGINS = "innosim-fixed-margins"


LEGEND_COLUMNS = 5
LEGEND_ROW_IN = 0.2                 # height of one legend row at font size 8, in inches


def _margins(fig, right_axis: bool = False, legend_rows: int = 0):
    """Margins in inches (room for tick labels and axis labels, and for `legend_rows` rows of legend
    over the axes), so the PNG needs no second drawing pass to trim it (bbox_inches="tight" draws
    the figure twice: about 0.1 s per figure)."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=0.8 / w, right=1 - (0.8 if right_axis else 0.25) / w, bottom=0.55 / h,
                        top=1 - (0.12 + LEGEND_ROW_IN * legend_rows) / h)
    fig.set_label(FIXED_MARGINS)
    return fig


def _legend_above(ax, handles=None, labels=None) -> int:
    """The legend over the axes, where it hides no data (a drop at a run's end, an age that stays
    low), up to LEGEND_COLUMNS entries a row; returns its rows."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return 0
    ncol = min(len(handles), LEGEND_COLUMNS)
    ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=ncol, fontsize=8, frameon=False,
              borderaxespad=0.2, handlelength=1.5, columnspacing=1.2)
    return -(-len(handles) // ncol)


def _finish(fig, ax, ylabel: str, legend: bool = True):
    """Time axis, y label, legend, grid and margins: the common end of every time-series figure."""
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    rows = _legend_above(ax) if legend else 0
    ax.grid(alpha=0.3, which="both")
    return _margins(fig, legend_rows=rows)


def _over_intervals(df):
    """(x, y) to draw each value over the interval that ends at its time (steps-pre)."""
    dt = _interval_s(df) if len(df) > 1 else float(df["time_s"].iloc[0])
    return [float(df["time_s"].iloc[0]) - dt] + df["time_s"].tolist(), [float(df["tps"].iloc[0])] + df["tps"].tolist()


def throughput_figure(frames: dict, labels=("1s", "10s")):
    fig, ax = plt.subplots(figsize=(10, 3.6))
    for label in labels:
        if label in frames:
            df = frames[label]
            if label == "1s":
                ax.plot(df["time_s"], df["tps"], label="commits/s, 1 s averages", lw=1.2)
            else:
                ax.plot(*_over_intervals(df), label=f"commits/s, {label} averages", drawstyle="steps-pre", lw=2)
    return _finish(fig, ax, "commits / s")


def checkpoint_figure(df, names: dict | None = None):
    """Checkpoint and modified age with the version's limits, each under the version's own name
    (`names`: limit field -> name, the summary's limit_names; a limit the version lacks is NaN)."""
    names = names or DEFAULT_LIMIT_NAMES
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.plot(df["time_s"], df["checkpoint_age_pct"], label="checkpoint age (lsn - last checkpoint)")
    ax.plot(df["time_s"], df["modified_age_pct"], label="modified age (lsn - oldest dirty page)", lw=0.8)
    t0, t1 = float(df["time_s"].iloc[0]), float(df["time_s"].iloc[-1])
    for k, field in enumerate(LIMIT_FIELDS):
        y = float(df[f"log_{field}_pct"].iloc[0])
        if y != y:                                  # NaN: the version has no such limit
            continue
        text = names[field]
        ax.axhline(y, ls="--", lw=0.8, color="grey")
        # The four limits lie within a few percent: labels alternate sides; the lower two sit under their
        # lines, the upper two over theirs.
        left = k % 2 == 0
        ax.text(t0 if left else t1, y, (" " + text) if left else (text + " "), fontsize=7,
                ha="left" if left else "right", va="top" if k < 2 else "bottom")
    ax.set_ylim(0, 100)
    return _finish(fig, ax, "% of redo capacity")


FLUSH_KINDS = (("buffer_flush_adaptive_total_pages", "adaptive"), ("buffer_LRU_batch_total_pages", "LRU"),
               ("buffer_flush_sync_total_pages", "sync"), ("buffer_LRU_single_flush_pages", "single page"),
               ("buffer_flush_background_total_pages", "background"))


def flushing_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.6))
    dt = _interval_s(df)
    bottom = None
    for col, label in FLUSH_KINDS:
        y = df[col] / dt
        if bottom is None:
            ax.fill_between(df["time_s"], 0, y, step="pre", label=label, alpha=0.7)
            bottom = y
        else:
            ax.fill_between(df["time_s"], bottom, bottom + y, step="pre", label=label, alpha=0.7)
            bottom = bottom + y
    return _finish(fig, ax, "pages flushed / s")


def sync_waits_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.0))
    dt = _interval_s(df)
    ax.plot(df["time_s"], df["buffer_flush_sync_waits"] / dt, color="tab:red")
    return _finish(fig, ax, "buffer_flush_sync_waits / s", legend=False)


STALL_COLORS = {"sync flush": "tab:red", "redo space wait": "tab:pink", "free-page wait": "tab:orange",
                "log write wait": "tab:purple", "binlog wait": "tab:olive", "page read wait": "tab:cyan",
                "file lock": "tab:brown", "none identified": "tab:gray"}


def tps_figure(df, label: str, stalls_df=None):
    """Commits/s at one resolution; stalls shaded in the colour of their cause."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.plot(df["time_s"], df["tps"], drawstyle="steps-pre", lw=1.2, label=f"commits/s, {label} intervals")
    seen = set()
    if stalls_df is not None:
        for row in stalls_df.itertuples():
            color = STALL_COLORS.get(row.cause, "tab:gray")
            ax.axvspan(row.start_s, row.end_s, color=color, alpha=0.18, lw=0,
                       label=None if row.cause in seen else f"stall: {row.cause}")
            seen.add(row.cause)
    ax.set_ylim(bottom=0)
    return _finish(fig, ax, "commits / s")


def latency_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for q in ("p50", "p95", "p99"):
        ax.plot(df["time_s"], df[f"latency_{q}_ms"], drawstyle="steps-pre", lw=1, label=q)
    ax.set_yscale("log")
    return _finish(fig, ax, "transaction latency (ms)")


def queue_figure(df):
    """Open loop: transactions waiting for a user at each interval's end (workload.rate)."""
    fig, ax = plt.subplots(figsize=(10, 3.0))
    ax.plot(df["time_s"], df["trx_queue"], drawstyle="steps-pre", color="tab:purple")
    ax.set_ylim(bottom=0)
    return _finish(fig, ax, "transactions queued", legend=False)


def pages_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.2))
    ax.plot(df["time_s"], df["Innodb_buffer_pool_pages_dirty"], label="Innodb_buffer_pool_pages_dirty")
    ax.plot(df["time_s"], df["Innodb_buffer_pool_pages_free"], label="Innodb_buffer_pool_pages_free")
    return _finish(fig, ax, "pages")


def recovery_figure(df):
    """The restart's duration had the server crashed at each second (models.recovery), and the
    pages it would read."""
    fig, ax = plt.subplots(figsize=(10, 3.2))
    _two_axes(ax, df, ("recovery_estimate_s", "tab:purple", "crash recovery (s)", "restart (s)"),
              ("recovery_pages", "tab:gray", "pages to recover", "pages"))
    ax.set_xlabel("time (s)")
    fig.tight_layout()
    return fig


def _two_axes(ax, df, left: tuple, right: tuple) -> int:
    """Two series against time on their own y axes, one legend over them (its rows returned): each
    (column, colour, label, y label)."""
    col, colour, label, ylabel = left
    ax.plot(df["time_s"], df[col], color=colour, lw=0.9, label=label)
    ax.set_ylabel(ylabel)
    ax2 = ax.twinx()
    col, colour, label, ylabel = right
    ax2.plot(df["time_s"], df[col], color=colour, lw=0.9, label=label)
    ax2.set_ylabel(ylabel)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    return _legend_above(ax, h1 + h2, l1 + l2)


def io_figure(df):
    """The device (share of its units' time busy; queue depth: I/Os submitted and not yet
    acknowledged), with a write cache the acknowledged writes not yet destaged in a panel of their
    own, and the filesystem lock wait (s per s of run)."""
    cached = "device_write_backlog" in df and bool(df["device_write_backlog"].any())
    fig, axes = plt.subplots(3 if cached else 2, 1, figsize=(10, 6.4 if cached else 4.6), sharex=True)
    ax, ax3 = axes[0], axes[-1]
    dt = _interval_s(df)
    rows = _two_axes(ax, df, ("device_busy_pct", "tab:red", "device busy (%)", "device busy (%)"),
                     ("device_queue_depth", "tab:blue", "device queue depth", "queue depth"))
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    if cached:
        axc = axes[1]
        axc.plot(df["time_s"], df["device_write_backlog"], color="tab:purple", lw=0.9,
                 label="write cache: acknowledged, not destaged")
        axc.set_ylabel("writes")
        axc.legend(loc="upper left", fontsize=8)
        axc.grid(alpha=0.3)
    ax3.plot(df["time_s"], df["fs_lock_wait_s"] / dt, color="tab:brown", lw=0.9,
             label="filesystem lock wait (s/s)")
    ax3.set_ylabel("inode lock wait\n(s per s)")
    ax3.set_xlabel("time (s)")
    ax3.legend(loc="upper left", fontsize=8)
    ax3.grid(alpha=0.3)
    _margins(fig, right_axis=True, legend_rows=rows)
    fig.subplots_adjust(hspace=0.12)
    return fig


def overlay_figure(frames: dict, column: str, ylabel: str, per_s: bool = False, logy: bool = False,
                   limits: dict | None = None):
    """One column of several runs' frames (label -> frame) on the same axes; `per_s` divides counts
    by the interval; `limits`: label -> {line label: y} drawn as dashed lines in the run's colour."""
    fig, ax = plt.subplots(figsize=(10, 3.4))
    for n, (label, df) in enumerate(frames.items()):
        color = f"C{n}"
        y = df[column] / _interval_s(df) if per_s else df[column]
        ax.plot(df["time_s"], y, drawstyle="steps-pre", lw=1.2, color=color, label=label)
        for text, value in ((limits or {}).get(label) or {}).items():
            if value != value:                      # NaN: that run's version has no such limit
                continue
            ax.axhline(value, ls="--", lw=0.8, color=color, alpha=0.7)
            ax.text(float(df["time_s"].iloc[0]), value, f" {label}: {text}", fontsize=7, color=color,
                    va="bottom")
    if logy:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    return _finish(fig, ax, ylabel)


def resolutions_figure(frames: dict, labels=("100ms", "1s", "10s", "60s")):
    """Commits/s of one run at several averaging intervals, each value drawn over its interval."""
    fig, ax = plt.subplots(figsize=(10, 3.8))
    widths = {"100ms": 0.6, "1s": 1.0, "10s": 2.0, "60s": 2.6}
    for label in labels:
        if label not in frames:
            continue
        ax.plot(*_over_intervals(frames[label]), drawstyle="steps-pre", lw=widths.get(label, 1.0),
                label=f"{label} averages", alpha=0.55 if label == "100ms" else 1.0)
    ax.set_ylim(bottom=0)
    return _finish(fig, ax, "commits / s")


def fio_fit_figure(report):
    """Measured (markers; hollow: held out) and fitted (lines) IOPS and p99 latency against the
    outstanding I/Os, one colour per (rw, block size) class. `report`: sim.calibrate.report_rows."""
    import pandas as pd

    df = pd.DataFrame(report)
    df = df[df["set"].isin(("fit", "held out"))]      # jobs the fitted model speaks for
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for n, ((rw, bs), g) in enumerate(df.groupby(["rw", "block_bytes"], sort=True)):
        g = g.sort_values("outstanding")
        color = f"C{n % 10}"
        label = f"{rw} {bs // 1024}K" if bs % 1024 == 0 else f"{rw} {bs}B"
        for ax, col in ((ax1, "iops"), (ax2, "lat_p99_us")):
            ax.plot(g["outstanding"], g[f"{col}_fitted"], color=color, lw=1.2, label=f"{label} fitted")
            fit, held = g[g["set"] == "fit"], g[g["set"] != "fit"]
            ax.scatter(fit["outstanding"], fit[f"{col}_measured"], color=color, s=18, label=f"{label} measured")
            if len(held):
                ax.scatter(held["outstanding"], held[f"{col}_measured"], facecolors="none", edgecolors=color, s=40,
                           label=f"{label} held out")
    for ax, ylabel in ((ax1, "IOPS"), (ax2, "p99 latency (us)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("outstanding I/Os (iodepth x numjobs)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
    ax2.set_yscale("log")
    ax1.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes, trimmed to its content unless its margins were set (closes it)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches=None if fig.get_label() == FIXED_MARGINS else "tight")
    plt.close(fig)
    return buf.getvalue()


def write_plots(result, frames: dict, out_dir: Path) -> list[Path]:
    sec = frames.get("1s")
    if sec is None:
        return []
    return [
        _save(throughput_figure(frames), out_dir / "throughput.png"),
        _save(checkpoint_figure(sec, dict(result.limits.names)), out_dir / "checkpoint_age.png"),
        _save(flushing_figure(sec), out_dir / "flushing.png"),
        _save(sync_waits_figure(sec), out_dir / "sync_waits.png"),
    ]
