"""The standard sweep figures: each metric against one swept parameter (mean with its 95%
interval, one line per value of a second parameter), and heatmaps over two parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sim.plots import _save, plt
from sim.sweep import METRIC_LABELS

# The metrics drawn by `innosim sweep --plot` (labels: sim.sweep.METRIC_LABELS).
FIGURE_METRICS = ("tps_mean", "latency_p99_ms", "stalls_1s_s", "stalls_100ms_s", "time_under_sync_flush_s",
                  "checkpoint_age_max_pct")


def _axis_values(series: pd.Series):
    """Numeric axis when every value is a number, else the values as categories."""
    num = pd.to_numeric(series, errors="coerce")
    return (num, True) if num.notna().all() else (series.astype(str), False)


def line_figure(ci: pd.DataFrame, x: str, metric: str, by: str | None = None):
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    groups = [(None, ci)] if by is None else list(ci.groupby(by, sort=True))
    for label, g in groups:
        xs, numeric = _axis_values(g[x])
        if numeric:
            g = g.assign(_x=xs).sort_values("_x")
            xs = g["_x"]
        pos = xs if numeric else np.arange(len(xs))
        yerr = g[f"{metric}_ci95"].to_numpy(dtype=float)
        ax.errorbar(pos, g[f"{metric}_mean"], yerr=None if np.isnan(yerr).all() else yerr, marker="o",
                    capsize=3, label=None if by is None else f"{by} = {label}")
        if not numeric:
            ax.set_xticks(pos, list(xs))
    ax.set_xlabel(x)
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    ax.grid(alpha=0.3)
    if by is not None:
        ax.legend(fontsize=8)
    return fig


def heatmap_figure(ci: pd.DataFrame, x: str, y: str, metric: str):
    # dropna=False keeps the points without a value (a steady_* metric of a run that did not settle).
    table = ci.pivot_table(index=y, columns=x, values=f"{metric}_mean", aggfunc="mean", sort=False, dropna=False)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    im = ax.imshow(table.to_numpy(dtype=float), aspect="auto", origin="lower", cmap="viridis")
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=30, ha="right")
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    vals = table.to_numpy(dtype=float)
    if not np.isfinite(vals).any():
        ax.set_title(f"no point has a value for {metric}", fontsize=9)
        return fig
    lo, hi = np.nanmin(vals), np.nanmax(vals)
    for (r, c), v in np.ndenumerate(vals):
        if not np.isnan(v):
            bright = hi > lo and (v - lo) / (hi - lo) > 0.6         # viridis turns light: dark text
            ax.text(c, r, f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}", ha="center", va="center",
                    color="black" if bright else "white", fontsize=8)
    fig.colorbar(im, ax=ax, label=METRIC_LABELS.get(metric, metric))
    return fig


def write_sweep_figures(ci: pd.DataFrame, keys: list[str], out: Path) -> list[Path]:
    """PNG files beside `out`: `<stem>.<metric>.png` (lines) and `<stem>.<metric>.heatmap.png`.
    Size settings are drawn as categories in size order (1G, 2G, ...)."""
    from sim.sweep import display_frame

    paths = []
    if not keys:
        return paths
    ci = display_frame(ci.sort_values(keys), keys)
    stem = out.with_suffix("")
    for metric in FIGURE_METRICS:
        by = keys[1] if len(keys) == 2 else None
        if len(keys) <= 2:
            paths.append(_save(line_figure(ci, keys[0], metric, by), Path(f"{stem}.{metric}.png")))
        if len(keys) == 2:
            paths.append(_save(heatmap_figure(ci, keys[0], keys[1], metric),
                               Path(f"{stem}.{metric}.heatmap.png")))
    return paths
