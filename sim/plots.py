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
            ax.plot(df["time_s"], df["tps"], label=f"commits/s, {label} averages",
                    drawstyle="steps-post" if label != "1s" else "default", lw=1.2 if label == "1s" else 2)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("commits / s")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def checkpoint_figure(df):
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.plot(df["time_s"], df["checkpoint_age_pct"], label="checkpoint age (lsn - last checkpoint)")
    ax.plot(df["time_s"], df["modified_age_pct"], label="modified age (lsn - oldest dirty page)", lw=0.8)
    for col, text in LIMIT_LABELS.items():
        ax.axhline(float(df[col].iloc[0]), ls="--", lw=0.8, color="grey")
        ax.text(df["time_s"].iloc[0], float(df[col].iloc[0]), " " + text, fontsize=7, va="bottom")
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
