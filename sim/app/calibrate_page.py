"""Calibrate page: fio results in, a fitted device profile out (sim.calibrate, the same fit as
`innosim calibrate fio`), with the fit report, the cross-prediction check and the downloads."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from models.errors import InputError
from sim.calibrate import TARGETS, calibrate_fio, report_rows
from sim.fio import read_fio_json_bytes
from sim.plots import fio_fit_figure
from sim.app.widgets import figure_block


@st.cache_data(show_spinner=False, max_entries=8)
def fit_uploads(files: tuple[tuple[str, bytes], ...], holdout: str, name: str) -> dict:
    """Fit on the uploaded fio files: profile, think time, report rows and held-out rows."""
    jobs = [j for fname, data in files for j in read_fio_json_bytes(data, fname)]
    if not jobs:
        raise InputError(", ".join(f for f, _ in files), "", "no fio jobs in the files", "fio --output-format=json")
    cal = calibrate_fio(jobs, holdout or None, name, "innosim app calibrate: " + ", ".join(f for f, _ in files))
    return {"profile": cal.fit.profile, "think_s": cal.fit.think_s, "report": report_rows(cal),
            "holdout_rows": cal.holdout_rows, "n_jobs": len(jobs), "n_held": len(cal.held)}


def holdout_summary(rows: list[dict]) -> pd.DataFrame:
    """Per metric: held-out jobs within the target, and the median |relative error|."""
    out = []
    for metric, target in TARGETS.items():
        sel = [r for r in rows if r["metric"] == metric and r["rel_error"] is not None]
        if sel:
            out.append({"metric": metric, "target": f"within {target:.0%}",
                        "jobs within target": f"{sum(bool(r['within_target']) for r in sel)} of {len(sel)}",
                        "median |error| %": 100 * float(np.median([abs(r["rel_error"]) for r in sel]))})
    return pd.DataFrame(out)


def show_fit(out: dict, name: str) -> None:
    prof = out["profile"]
    c = st.columns(4)
    c[0].metric("fio jobs", f"{out['n_jobs']} ({out['n_held']} held out)")
    c[1].metric("internal units", prof["parallelism"])
    c[2].metric("host path (us)", f"{prof['host_overhead_s'] * 1e6:.1f}")
    c[3].metric("fio think time (us)", f"{out['think_s'] * 1e6:.1f}")
    st.caption(f"unit assignment: {prof['unit_assignment']}")
    report = pd.DataFrame(out["report"])
    figure_block("Measured and fitted: IOPS and p99 latency against outstanding I/Os", fio_fit_figure(out["report"]),
                 report, f"{name}-fit", caption="Markers: measured (hollow: held out of the fit); lines: the "
                 "fitted profile run in innosim's device model.")
    if out["holdout_rows"]:
        st.markdown("**Cross-prediction on the held-out jobs**")
        st.dataframe(holdout_summary(out["holdout_rows"]), hide_index=True)
        held = pd.DataFrame(out["holdout_rows"])
        st.download_button("CSV (held-out rows)", held.to_csv(index=False), f"{name}-holdout.csv", "text/csv",
                           key="cal-holdout-csv")
    st.markdown("**Fit report per job**")
    st.dataframe(report, hide_index=True)
    st.download_button("Download profile JSON", json.dumps(prof, indent=2) + "\n", f"{name}.json",
                       "application/json", type="primary", key="cal-profile")
    st.caption(f"Name the file in a scenario: `[hardware] device = \"path/to/{name}.json\"`.")


def render() -> None:
    st.title("Calibrate: your device from fio results")
    st.caption("Upload fio JSON or json+ output (fio 2.x or 3.x, gzip allowed, one job or many per file). "
               "innosim fits its device model (internal units, service times per operation and block size, "
               "tail spread) and re-runs every job on the fitted profile.")
    files = st.file_uploader("fio output files", type=["json", "gz", "txt"], accept_multiple_files=True,
                             key="cal-files")
    c1, c2 = st.columns(2)
    name = c1.text_input("profile name", "my-device", key="cal-name").strip() or "my-device"
    holdout = c2.text_input("hold out (job option=value, optional)", "", key="cal-holdout",
                            help="e.g. numjobs=16: those jobs are predicted, not fitted, and the error is reported")
    if st.button("Fit", type="primary", key="cal-run", disabled=not files):
        try:
            with st.spinner("fitting and re-running every job..."):
                out = fit_uploads(tuple((f.name, f.getvalue()) for f in files), holdout.strip(), name)
        except InputError as err:
            st.error(str(err))
            st.session_state.pop("cal-out", None)
        else:
            st.session_state["cal-out"] = (out, name)
    if not files:
        st.info("Upload the JSON files of a fio run set with both random reads and random writes at several "
                "queue depths (for example `fio --output-format=json` over iodepth 1..64).")
    if "cal-out" in st.session_state:
        show_fit(*st.session_state["cal-out"])
    st.divider()
    st.subheader("Server traces")
    st.info("Fitting workload quantities to a measured server trace (sysbench, tpcc-mysql, mysqladmin "
            "extended-status, INNODB_METRICS samples) is not available yet: it lands with the trace part of the "
            "calibration work (`innosim calibrate trace`).")
