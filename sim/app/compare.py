"""Compare page: two configurations run side by side, drawn on the same axes, with the difference
in every summary metric."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from models.errors import InputError
from sim.app.settings import apply, form_texts, overrides_from
from sim.app.widgets import choose_scenario, figure_block, pasted_server_inputs, run_with_progress, settings_form
from sim.plots import overlay_figure
from sim.settling import settling_text
from sim.sweep import METRIC_LABELS, METRICS, metrics_row

RESOLUTIONS = {"100 ms": "100ms", "1 s": "1s", "10 s": "10s"}
# Out of the box the page compares the default scenario with 8 and with 1 buffer pool instance.
B_PRESET = {"server.innodb_buffer_pool_instances": "1"}


def difference_table(a: dict, b: dict) -> pd.DataFrame:
    """Summary metrics of runs A and B (sim.metrics.summary), with B - A and the change in %."""
    ra, rb = metrics_row(a), metrics_row(b)
    rows = []
    for m in METRICS:
        va, vb = ra.get(m), rb.get(m)
        if va is None or vb is None:
            diff = pct = math.nan
        else:
            diff = float(vb) - float(va)
            pct = 100.0 * diff / abs(float(va)) if va else math.nan
        rows.append({"metric": METRIC_LABELS[m], "key": m, "A": va, "B": vb, "B - A": diff, "change %": pct})
    return pd.DataFrame(rows)


def joined(frames_a: pd.DataFrame, frames_b: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The two runs' columns side by side by time (suffixes _A and _B), for the CSV downloads."""
    a = frames_a[["time_s", *columns]].rename(columns={c: f"{c}_A" for c in columns})
    b = frames_b[["time_s", *columns]].rename(columns={c: f"{c}_B" for c in columns})
    return a.merge(b, on="time_s", how="outer").sort_values("time_s")


def _side(label: str, prefix: str, preset: dict | None):
    st.subheader(label)
    chosen = choose_scenario(prefix)
    if chosen is None:
        return None
    doc, scn, source = chosen
    pasted = pasted_server_inputs(prefix, doc, scn, source)
    if pasted is None:
        return None
    doc, scn, form_key = pasted
    initial = form_texts(scn)
    edited = settings_form(scn, form_key, columns=2, preset=preset if scn.name == "default" else None)
    return doc, scn, source, overrides_from(initial, edited)


def show_comparison(out_a: dict, out_b: dict, names: tuple[str, str], resolution: str) -> None:
    la, lb = f"A: {names[0]}", f"B: {names[1]}"
    table = difference_table(out_a["summary"], out_b["summary"])
    st.markdown("**Summary, A against B**")
    c = st.columns(4)
    for col, m in zip(c, ("tps_mean", "tps_p1_per_s", "stalls_1s_s", "checkpoint_age_max_pct")):
        row = table[table["key"] == m].iloc[0]
        col.metric(f"{row['metric']} (B)", f"{row['B']:,.1f}", delta=f"{row['B - A']:+,.1f} vs A",
                   delta_color="normal" if m.startswith("tps") else "inverse")
    st.dataframe(table.drop(columns="key"), hide_index=True)
    for side, out in (("A", out_a), ("B", out_b)):
        s = out["summary"].get("settling")
        if s and s["settled"] is False:       # a difference read from a start-up transient is said so
            st.info(f"{side}: {settling_text(s)}.")
    st.download_button("CSV", table.to_csv(index=False), "compare-summary.csv", "text/csv", key="csv-cmp-summary")
    label = RESOLUTIONS[resolution]
    fa, fb = out_a["frames"], out_b["frames"]
    if label not in fa or label not in fb:
        st.warning(f"a run is shorter than {resolution}: showing 1 s intervals")
        label = "1s"
    da, db = fa[label], fb[label]
    figure_block(f"Throughput at {resolution} resolution", overlay_figure({la: da, lb: db}, "tps", "commits / s"),
                 joined(da, db, ["tps"]), f"compare-throughput-{label}")
    figure_block(f"Latency p99 at {resolution}", overlay_figure({la: da, lb: db}, "latency_p99_ms", "latency p99 (ms)",
                                                                logy=True),
                 joined(da, db, ["latency_p99_ms"]), f"compare-latency-{label}")
    sa, sb = fa.get("1s", da), fb.get("1s", db)
    limits = {lab: {"sync flush": float(f["log_max_modified_age_sync_pct"].iloc[0]),
                    "users wait": float(f["log_max_checkpoint_age_pct"].iloc[0])}
              for lab, f in ((la, sa), (lb, sb))}
    figure_block("Checkpoint age (1 s), with each run's sync-flush and max checkpoint age limits",
                 overlay_figure({la: sa, lb: sb}, "checkpoint_age_pct", "% of redo capacity", limits=limits),
                 joined(sa, sb, ["checkpoint_age_pct", "log_max_modified_age_sync_pct",
                                 "log_max_checkpoint_age_pct"]), "compare-checkpoint-age")
    figure_block("Pages flushed per second, all kinds (1 s)",
                 overlay_figure({la: sa, lb: sb}, "pages_flushed", "pages flushed / s", per_s=True),
                 joined(sa, sb, ["pages_flushed", "buffer_flush_sync_total_pages"]), "compare-flushing")
    figure_block("buffer_flush_sync_waits per second (1 s)",
                 overlay_figure({la: sa, lb: sb}, "buffer_flush_sync_waits", "waits / s", per_s=True),
                 joined(sa, sb, ["buffer_flush_sync_waits"]), "compare-sync-waits")


def render() -> None:
    st.title("Compare: two configurations")
    st.caption("Two scenarios, or one scenario with different settings, run with the same seed handling and "
               "drawn on the same axes. Out of the box: the default scenario with 8 buffer pool instances (A) "
               "and with 1 (B).")
    left, right = st.columns(2)
    with left:
        a = _side("A", "cmp-a", None)
    with right:
        b = _side("B", "cmp-b", B_PRESET)
    if a is None or b is None:
        return
    resolution = st.select_slider("resolution", list(RESOLUTIONS), value="1 s", key="cmp-res")
    if st.button("Run both", type="primary", key="cmp-run"):
        try:
            scn_a = apply(a[0], a[2], a[1].name, a[3])
            scn_b = apply(b[0], b[2], b[1].name, b[3])
        except InputError as err:
            st.error(str(err))
            return
        out_a = run_with_progress(scn_a, f"A ({scn_a.name})")
        out_b = run_with_progress(scn_b, f"B ({scn_b.name})")
        st.session_state["cmp-out"] = (out_a, out_b, (scn_a.name, scn_b.name))
    if "cmp-out" in st.session_state:
        out_a, out_b, names = st.session_state["cmp-out"]
        for side, out in (("A", out_a), ("B", out_b)):
            for w in out["warnings"]:
                st.warning(f"{side}: {w}")
        show_comparison(out_a, out_b, names, resolution)
