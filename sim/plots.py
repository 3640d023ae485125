"""PNG plots of an engine run (matplotlib, no display needed)."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from sim.report import write_atomic  # noqa: E402

LIMIT_LABELS = {
    "log_max_modified_age_async_pct": "max_modified_age_async (adaptive reference)",
    "log_max_modified_age_sync_pct": "max_modified_age_sync (sync flush)",
    "log_max_checkpoint_age_async_pct": "max_checkpoint_age_async",
    "log_max_checkpoint_age_pct": "max_checkpoint_age",
}


def _save(fig, path: Path) -> Path:
    write_atomic(path, png_bytes(fig))
    return path


def _interval_s(df) -> float:
    return float(df["time_s"].iloc[1] - df["time_s"].iloc[0]) if len(df) > 1 else 1.0


def _finish(fig, ax, ylabel: str, legend: str | None = "upper left"):
    """Time axis, y label, legend and grid: the common end of every time-series figure."""
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    if legend:
        ax.legend(loc=legend, fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return fig


def throughput_figure(frames: dict, labels=("1s", "10s")):
    fig, ax = plt.subplots(figsize=(10, 3.6))
    for label in labels:
        if label in frames:
            df = frames[label]
            if label == "1s":
                ax.plot(df["time_s"], df["tps"], label="commits/s, 1 s averages", lw=1.2)
            else:
                # Each value covers the interval that ends at its time: draw it over that interval.
                dt = float(df["time_s"].iloc[0])
                x = [float(df["time_s"].iloc[0]) - dt] + df["time_s"].tolist()
                y = [float(df["tps"].iloc[0])] + df["tps"].tolist()
                ax.plot(x, y, label=f"commits/s, {label} averages", drawstyle="steps-pre", lw=2)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("commits / s")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def checkpoint_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.plot(df["time_s"], df["checkpoint_age_pct"], label="checkpoint age (lsn - last checkpoint)")
    ax.plot(df["time_s"], df["modified_age_pct"], label="modified age (lsn - oldest dirty page)", lw=0.8)
    t0, t1 = float(df["time_s"].iloc[0]), float(df["time_s"].iloc[-1])
    for k, (col, text) in enumerate(LIMIT_LABELS.items()):
        y = float(df[col].iloc[0])
        ax.axhline(y, ls="--", lw=0.8, color="grey")
        # The four limits lie within a few percent: labels alternate sides and above/below.
        left = k % 2 == 0
        ax.text(t0 if left else t1, y, (" " + text) if left else (text + " "), fontsize=7,
                ha="left" if left else "right", va="bottom" if k < 2 else "top")
    ax.set_ylim(0, 100)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("% of redo capacity")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


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
    return _finish(fig, ax, "buffer_flush_sync_waits / s", legend=None)


STALL_COLORS = {"sync flush": "tab:red", "free-page wait": "tab:orange", "log write wait": "tab:purple",
                "file lock": "tab:brown", "none identified": "tab:gray"}


def tps_figure(df, label: str, stalls_df=None, other=None, other_label: str = "B"):
    """Commits/s at one resolution; stalls shaded in the colour of their cause. `other`: a second
    run's frame at the same resolution, drawn on the same axes (compare)."""
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.plot(df["time_s"], df["tps"], drawstyle="steps-pre", lw=1.2, label=f"commits/s, {label} intervals"
            + ("" if other is None else " (A)"))
    if other is not None:
        ax.plot(other["time_s"], other["tps"], drawstyle="steps-pre", lw=1.2, label=f"{other_label}")
    seen = set()
    if stalls_df is not None:
        for row in stalls_df.itertuples():
            color = STALL_COLORS.get(row.cause, "tab:gray")
            ax.axvspan(row.start_s, row.end_s, color=color, alpha=0.18, lw=0,
                       label=None if row.cause in seen else f"stall: {row.cause}")
            seen.add(row.cause)
    ax.set_ylim(bottom=0)
    return _finish(fig, ax, "commits / s", legend="lower right")


def latency_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for q in ("p50", "p95", "p99"):
        ax.plot(df["time_s"], df[f"latency_{q}_ms"], drawstyle="steps-pre", lw=1, label=q)
    ax.set_yscale("log")
    return _finish(fig, ax, "transaction latency (ms)")


def pages_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.2))
    ax.plot(df["time_s"], df["Innodb_buffer_pool_pages_dirty"], label="Innodb_buffer_pool_pages_dirty")
    ax.plot(df["time_s"], df["Innodb_buffer_pool_pages_free"], label="Innodb_buffer_pool_pages_free")
    return _finish(fig, ax, "pages")


def io_figure(df):
    """Filesystem lock wait (s per s of run) and device queue depth (mean outstanding I/Os)."""
    fig, ax = plt.subplots(figsize=(10, 3.2))
    dt = _interval_s(df)
    ax.plot(df["time_s"], df["device_queue_depth"], color="tab:blue", label="device queue depth")
    ax.set_ylabel("device queue depth")
    ax2 = ax.twinx()
    ax2.plot(df["time_s"], df["fs_lock_wait_s"] / dt, color="tab:brown", lw=0.9,
             label="filesystem lock wait (s/s)")
    ax2.set_ylabel("inode lock wait (s per s)")
    ax.set_xlabel("time (s)")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes, trimmed to its content (closes it)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def write_plots(result, frames: dict, out_dir: Path) -> list[Path]:
    sec = frames.get("1s")
    if sec is None:
        return []
    return [
        _save(throughput_figure(frames), out_dir / "throughput.png"),
        _save(checkpoint_figure(sec), out_dir / "checkpoint_age.png"),
        _save(flushing_figure(sec), out_dir / "flushing.png"),
        _save(sync_waits_figure(sec), out_dir / "sync_waits.png"),
    ]
