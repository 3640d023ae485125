"""Sweep page: load a table written by `innosim sweep`, or run a small sweep here; metric
against parameter (mean and 95% interval) and heatmaps over two parameters."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from models.errors import InputError
from sim.app.settings import FORM_SECTIONS, SCENARIO_DIR, editable_keys, load_shipped, shipped_oltp_scenarios
from sim.app.widgets import child_error, figure_block
from sim.sweep import METRIC_LABELS, METRICS, SweepSpec, display_frame, expand, parse_grid, read_table
from sim.sweep_plots import heatmap_figure, line_figure

MAX_RUNS = 24
NONE = "(none)"


def sweep_keys(scn) -> list[str]:
    """The settings a sweep may vary: every form key except the seed (replicates set it)."""
    return [f"{s}.{k}" for s in FORM_SECTIONS for k in editable_keys(s, scn) if f"{s}.{k}" != "run.seed"]


def plan(stem: str, grids: list[str], replicates: int, duration: str):
    """The points of a small sweep of a shipped scenario (validated; at most MAX_RUNS runs)."""
    doc, scn = load_shipped(stem)
    spec = SweepSpec(grid=tuple(parse_grid(g) for g in grids), replicates=replicates)
    overrides = [f"run.duration={duration}"] if duration.strip() else []
    points = expand(doc, f"scenarios/{stem}.toml", stem, spec, overrides)
    if len(points) > MAX_RUNS:
        raise InputError("sweep", "", f"{len(points)} runs is more than the app runs ({MAX_RUNS})",
                         "fewer values or replicates, or `innosim sweep` on the command line")
    return points


PROGRESS_RE = re.compile(r"\] (\d+)/(\d+) runs")


def run_sweep(stem: str, grids: list[str], replicates: int, duration: str, on_progress=None):
    """Run the sweep as `innosim sweep` in a child process (its worker processes are forked from a
    plain interpreter, not from the app's threaded server; results go to the shared run cache).
    Returns (runs, ci, keys); InputError with the child's message if it refused the sweep."""
    with tempfile.TemporaryDirectory(prefix="innosim-app-sweep-") as tmp:
        out = Path(tmp) / "sweep.parquet"
        cmd = [sys.executable, "-m", "sim.cli", "sweep", str(SCENARIO_DIR / f"{stem}.toml"), "-o", str(out),
               "--replicates", str(replicates)]
        for g in grids:
            cmd += ["--grid", g]
        if duration.strip():
            cmd += ["--set", f"run.duration={duration.strip()}"]
        proc = subprocess.Popen(cmd, cwd=SCENARIO_DIR.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        lines = []
        for line in proc.stderr:
            lines.append(line.rstrip())
            m = PROGRESS_RE.search(line)
            if m and on_progress:
                on_progress(int(m.group(1)), int(m.group(2)))
        if proc.wait() != 0:
            raise child_error(lines, "sweep", hide=tmp)
        runs, ci, keys = read_table(out.read_bytes(), out.name)
    return runs, ci, keys


def _run_form() -> None:
    names = list(shipped_oltp_scenarios())
    stem = st.selectbox("scenario", names, key="sw-stem")
    _, scn = load_shipped(stem)
    keys = sweep_keys(scn)
    c1, c2 = st.columns(2)
    k1 = c1.selectbox("parameter 1", keys, index=keys.index("server.innodb_log_file_size"), key="sw-k1")
    v1 = c1.text_input("values", "128M,256M,512M", key="sw-v1")
    k2 = c2.selectbox("parameter 2", [NONE] + keys, index=1 + keys.index("server.innodb_buffer_pool_instances"),
                      key="sw-k2")
    v2 = c2.text_input("values ", "1,8", key="sw-v2")
    c3, c4 = st.columns(2)
    replicates = int(c3.number_input("replicates (seeds)", 1, 5, 1, key="sw-rep"))
    duration = c4.text_input("run.duration of each run", "20s", key="sw-dur",
                             help="shorter runs keep an in-app sweep quick; empty: the scenario's own")
    st.caption(f"Runs go to local worker processes and are cached (shared with `innosim sweep`); at most "
               f"{MAX_RUNS} runs here.")
    if not st.button("Run sweep", type="primary", key="sw-run"):
        return
    grids = [f"{k1}={v1}"] + ([f"{k2}={v2}"] if k2 != NONE else [])
    try:
        points = plan(stem, grids, replicates, duration)
        bar = st.progress(0.0, text=f"sweep: 0/{len(points)} runs")

        def progress(done: int, total: int) -> None:
            bar.progress(done / total, text=f"sweep: {done}/{total} runs")

        runs, ci, keys = run_sweep(stem, grids, replicates, duration, progress)
    except InputError as err:
        st.error(str(err))
        return
    bar.empty()
    st.session_state["sw-result"] = (runs, ci, keys, f"{stem}-sweep")


def _load_form() -> None:
    up = st.file_uploader("sweep table (.parquet or .csv from innosim sweep, or its .ci table)",
                          type=["parquet", "csv"], key="sw-upload")
    if up is None:
        return
    try:
        runs, ci, keys = read_table(up.getvalue(), up.name)
    except InputError as err:
        st.error(str(err))
        st.session_state.pop("sw-result", None)
        return
    if not keys:
        st.error(f"{up.name}: no swept setting among the columns (expected section.key columns)")
        return
    st.session_state["sw-result"] = (runs, ci, keys, up.name.rsplit(".", 1)[0])


def show_result(runs: pd.DataFrame | None, ci: pd.DataFrame, keys: list[str], stem: str) -> None:
    n_runs = len(runs) if runs is not None else int(ci["runs"].sum())
    st.markdown(f"**{n_runs} runs over {', '.join(keys)}**")
    view = display_frame(ci.sort_values(keys), keys)
    c1, c2 = st.columns(2)
    metric = c1.selectbox("metric", list(METRICS), format_func=METRIC_LABELS.get, key="sw-metric")
    x = c2.selectbox("x axis", keys, key="sw-x")
    others = [k for k in keys if k != x]
    by = others[0] if len(others) == 1 else None
    cols = keys + ["runs", f"{metric}_mean", f"{metric}_ci95"]
    figure_block(f"{METRIC_LABELS[metric]} against {x}" + (f", one line per {by}" if by else ""),
                 line_figure(view, x, metric, by), view[cols], f"{stem}-{metric}",
                 caption="Mean over the replicates; bars: 95% confidence interval (Student's t).")
    if len(keys) == 2:
        figure_block(f"{METRIC_LABELS[metric]} over {keys[0]} and {keys[1]}", heatmap_figure(view, x, by, metric),
                     view[cols], f"{stem}-{metric}-heatmap")
    elif len(keys) > 2:
        st.info(f"{len(keys)} swept settings: the heatmap needs exactly two.")
    st.markdown("**Means and 95% intervals per combination**")
    st.dataframe(view, hide_index=True)
    c1, c2, c3 = st.columns([1, 1, 4])
    c1.download_button("CSV (means)", ci.to_csv(index=False), f"{stem}.ci.csv", "text/csv", key="sw-ci-csv")
    if runs is not None:
        buf = io.BytesIO()
        runs.to_parquet(buf, index=False)
        c2.download_button("Parquet (runs)", buf.getvalue(), f"{stem}.parquet", "application/octet-stream",
                           key="sw-runs-parquet")
        c3.download_button("CSV (runs)", runs.to_csv(index=False), f"{stem}.csv", "text/csv", key="sw-runs-csv")


def render() -> None:
    st.title("Sweep: a region of settings")
    st.caption("One or two settings varied over a grid, each point run with one or more seeds. Larger sweeps: "
               "`innosim sweep` (local cores or a Dask cluster), then load its table here.")
    source = st.radio("source", ["run a small sweep", "load a sweep file"], horizontal=True, key="sw-source")
    if source == "run a small sweep":
        _run_form()
    else:
        _load_form()
    if "sw-result" in st.session_state:
        show_result(*st.session_state["sw-result"])
