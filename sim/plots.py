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
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return path


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
    dt = float(df["time_s"].iloc[1] - df["time_s"].iloc[0]) if len(df) > 1 else 1.0
    bottom = None
    for col, label in FLUSH_KINDS:
        y = df[col] / dt
        if bottom is None:
            ax.fill_between(df["time_s"], 0, y, step="pre", label=label, alpha=0.7)
            bottom = y
        else:
            ax.fill_between(df["time_s"], bottom, bottom + y, step="pre", label=label, alpha=0.7)
            bottom = bottom + y
    ax.set_xlabel("time (s)")
    ax.set_ylabel("pages flushed / s")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def sync_waits_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.0))
    dt = float(df["time_s"].iloc[1] - df["time_s"].iloc[0]) if len(df) > 1 else 1.0
    ax.plot(df["time_s"], df["buffer_flush_sync_waits"] / dt, color="tab:red")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("buffer_flush_sync_waits / s")
    ax.grid(alpha=0.3)
    return fig


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
