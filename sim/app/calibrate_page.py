"""Calibrate page: fio results in, a fitted device profile out (sim.calibrate, the same fit as
`innosim calibrate fio`), with the fit report, the cross-prediction check and the downloads; and a
server trace in, fitted workload quantities out (`innosim calibrate trace`, run as a child
process)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from models.block_layer import BlockLayerConfig
from models.errors import InputError
from sim.app.settings import SCENARIO_DIR, shipped_oltp_scenarios
from sim.calibrate import NOT_USED, calibrate_fio, cfq_fingerprints, holdout_summary, report_rows
from sim.fio import read_fio_json_bytes
from sim.plots import fio_fit_figure
from sim.trace_fit import DEFAULT_FIT, FITTABLE, SERIES_NAMES
from sim.app.widgets import child_error, figure_block


HOST_CHOICES = {"the device alone (NVMe, or no elevator)": None,
                "CFQ, SATA queue depth 32 (Linux 4.x legacy block layer)": BlockLayerConfig("cfq", 32),
                "noop / deadline, SATA queue depth 32": BlockLayerConfig("none", 32)}


@st.cache_data(show_spinner=False, max_entries=8)
def fit_uploads(files: tuple[tuple[str, bytes], ...], holdout: str, name: str, host: str = "") -> dict:
    """Fit on the uploaded fio files: profile, think time, report rows and held-out rows; `host`
    names the measuring host's block layer (a HOST_CHOICES key; any other: the device alone)."""
    jobs = [j for fname, data in files for j in read_fio_json_bytes(data, fname)]
    if not jobs:
        raise InputError(", ".join(f for f, _ in files), "", "no fio jobs in the files", "fio --output-format=json")
    cal = calibrate_fio(jobs, holdout or None, name, "innosim app calibrate: " + ", ".join(f for f, _ in files),
                        HOST_CHOICES.get(host))
    return {"profile": cal.fit.profile, "think_s": cal.fit.think_s, "report": report_rows(cal),
            "holdout_rows": cal.holdout_rows, "n_jobs": len(jobs), "n_held": len(cal.held),
            "flush_rows": list(cal.flush_rows),
            "cfq_fingerprints": cfq_fingerprints(jobs) if cal.host is None else []}


def holdout_table(rows: list[dict]) -> pd.DataFrame:
    """calibrate.holdout_summary as the page shows it."""
    return pd.DataFrame([{"metric": h["metric"], "target": f"within {h['target']:.0%}",
                          "jobs within target": f"{h['within']} of {h['of']}",
                          "median |error| %": 100 * h["median_abs_error"]} for h in holdout_summary(rows)])


def show_fit(out: dict, name: str) -> None:
    prof = out["profile"]
    c = st.columns(4)
    c[0].metric("fio jobs", f"{out['n_jobs']} ({out['n_held']} held out)")
    c[1].metric("internal units", prof["parallelism"])
    c[2].metric("host path (us)", f"{prof['host_overhead_s'] * 1e6:.1f}")
    c[3].metric("fio think time (us)", f"{out['think_s'] * 1e6:.1f}")
    st.caption(f"unit assignment: {prof['unit_assignment']}"
               + ("; behind a front end (one FIFO stage: each I/O holds it for 1 / capacity, then its unit "
                  "for the class's unit_service_s)" if prof.get("front_end") else ""))
    for f in out.get("flush_rows", []):
        st.caption(f"fdatasync job {f['job']} ({f['set']}): sync mean {f['sync_mean_us_measured']:.0f} us measured, "
                   f"{f['sync_mean_us_fitted']:.0f} us on the profile; "
                   + (f"cache flush {prof['flush_s'] * 1e6:.1f} us (the mean less the filesystem's own fsync work)"
                      if prof.get("flush_s") else "no cache flush cost beyond the filesystem's own fsync work"))
    prints = out.get("cfq_fingerprints", [])
    if len(prints) >= 2:
        st.warning(f"{len(prints)} jobs wait as CFQ's slices make them wait (e.g. {prints[0]}): the host that ran "
                   "fio likely used CFQ. Choose it under 'the host that ran fio' and fit again.")
    unused = [r for r in out["report"] if r["set"].startswith(NOT_USED)]
    if unused:
        st.caption(f"{len(unused)} job(s) not used for the units ({unused[0]['set'].split(';')[0]}, ...): the "
                   "device model is fitted to random I/O, and jobs that sync between writes time their sync calls "
                   "too. The profile's description lists what the fit assumed.")
    report = pd.DataFrame(out["report"])
    figure_block("Measured and fitted: IOPS and p99 latency against outstanding I/Os", fio_fit_figure(out["report"]),
                 report, f"{name}-fit", caption="Markers: measured (hollow: held out of the fit); lines: the "
                 "fitted profile run in innosim's device model.")
    if out["holdout_rows"]:
        st.markdown("**Cross-prediction on the held-out jobs**")
        st.dataframe(holdout_table(out["holdout_rows"]), hide_index=True)
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
    host = st.selectbox("the host that ran fio", list(HOST_CHOICES), key="cal-host",
                        help="/sys/block/DEV/queue/scheduler on that host. Under CFQ several processes each "
                             "more than 4 deep get slices: some I/Os wait 100-300 ms and throughput drops; "
                             "the jobs are then predicted through it (models/block_layer.py)")
    if st.button("Fit", type="primary", key="cal-run", disabled=not files):
        try:
            with st.spinner("fitting and re-running every job..."):
                out = fit_uploads(tuple((f.name, f.getvalue()) for f in files), holdout.strip(), name, host)
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
    trace_section()


def run_trace_fit(files: list[tuple[str, bytes]], scenario: tuple[str, bytes] | str, fit: list[str],
                  warmup: str, duration: str, max_evals: int, series: list[str] | None = None,
                  multistart: bool = False) -> dict:
    """`innosim calibrate trace` in a child process (its worker processes are forked from a plain
    interpreter, not from the app's threaded server): the JSON report, the fitted TOML, the PNG."""
    with tempfile.TemporaryDirectory(prefix="innosim-app-trace-") as tmp:
        d = Path(tmp)
        paths = []
        for name, data in files:
            p = d / Path(name).name
            p.write_bytes(data)
            paths.append(str(p))
        if isinstance(scenario, tuple):
            scn_path = d / Path(scenario[0]).name
            scn_path.write_bytes(scenario[1])
        else:
            scn_path = Path(scenario)
        cmd = [sys.executable, "-m", "sim.cli", "calibrate", "trace", *paths, "--scenario", str(scn_path),
               "--json", "-o", str(d / "fitted.toml"), "--plot", str(d / "overlay.png"),
               "--max-evals", str(max_evals)]
        for k in fit:
            cmd += ["--fit", k]
        if series:
            cmd += ["--series", ",".join(series)]
        if multistart:
            cmd += ["--multistart"]
        if warmup.strip():
            cmd += ["--warmup", warmup.strip()]
        if duration.strip():
            cmd += ["--duration", duration.strip()]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=SCENARIO_DIR.parent)
        if r.returncode != 0:
            raise child_error(r.stderr.splitlines(), "trace fit", hide=tmp)
        out = json.loads(r.stdout)
        out["toml"] = (d / "fitted.toml").read_text()
        out["png"] = (d / "overlay.png").read_bytes()
        out["traces"] = [ln.replace(tmp + "/", "") for ln in r.stderr.splitlines() if " s intervals" in ln]
    return out


def trace_section() -> None:
    st.subheader("Workload from a server trace")
    st.caption("Upload what you measured on a server (sysbench or tpcc-mysql output, `mysqladmin extended-status "
               "-r -i 1` output, a CSV of SHOW GLOBAL STATUS / INNODB_METRICS samples; several files of one run "
               "are merged) and pick the scenario it ran on. innosim fits the quantities a trace cannot show "
               "directly by simulating the scenario until its series match the measured ones. Each step is a "
               "simulation of the fitted span, so this takes minutes; `validation/live/capture.py` records such "
               "a trace on your own machine.")
    traces = st.file_uploader("trace files", type=["txt", "log", "csv", "gz", "out"], accept_multiple_files=True,
                              key="tr-files")
    c1, c2 = st.columns(2)
    names = list(shipped_oltp_scenarios())
    which = c1.selectbox("scenario the trace was measured on", names + ["upload"], key="tr-stem")
    scn_up = c1.file_uploader("scenario TOML", type=["toml"], key="tr-scn") if which == "upload" else None
    fit = c2.multiselect("fit", list(FITTABLE), default=list(DEFAULT_FIT), key="tr-fit")
    series = c2.multiselect("match the series", list(SERIES_NAMES), default=list(SERIES_NAMES), key="tr-series",
                            help="the ones the trace lacks are left out anyway; unmatched ones are still shown")
    c3, c4, c5 = st.columns(3)
    warmup = c3.text_input("warm-up left out", "10s", key="tr-warmup")
    duration = c4.text_input("span fitted (empty: the whole trace)", "60s", key="tr-duration")
    max_evals = int(c5.number_input("most optimiser steps", 2, 60, 8, key="tr-evals"))
    multistart = st.checkbox("two starts (also from cpu_per_txn = cores / measured commits/s; twice the time)",
                             key="tr-multistart")
    ready = bool(traces) and bool(fit) and "tps" in series and (which != "upload" or scn_up is not None)
    if st.button("Fit the trace", type="primary", key="tr-run", disabled=not ready):
        scenario = (scn_up.name, scn_up.getvalue()) if which == "upload" else str(SCENARIO_DIR / f"{which}.toml")
        try:
            with st.spinner("simulating and fitting (minutes)..."):
                out = run_trace_fit([(f.name, f.getvalue()) for f in traces], scenario, fit, warmup, duration,
                                    max_evals, series, multistart)
        except InputError as err:
            st.error(str(err))
            st.session_state.pop("tr-out", None)
        else:
            st.session_state["tr-out"] = out
    if "tr-out" in st.session_state:
        show_trace_fit(st.session_state["tr-out"])


def show_trace_fit(out: dict) -> None:
    for line in out["traces"]:
        st.caption(line)
    for n in out["notes"]:
        st.info(n)
    fitted = pd.DataFrame([{"parameter": k, "value": v["value"], "sd": v["sd"]} for k, v in out["fitted"].items()])
    st.markdown(f"**Fitted values** ({out['simulations']} simulations)")
    st.dataframe(fitted, hide_index=True)
    series = pd.DataFrame(out["series"])
    st.markdown("**Fit error per series** (5 s windows after the warm-up; relative to the measured mean)")
    st.dataframe(series[["series", "fitted", "measured_mean", "simulated_mean", "mean_error_pct", "nrms_pct"]],
                 hide_index=True)
    st.markdown("**Measured and simulated series**")
    st.image(out["png"], width="stretch")
    c1, c2, c3, _ = st.columns([1, 1, 1, 3])
    c1.download_button("PNG", out["png"], "trace-fit.png", "image/png", key="tr-png")
    c2.download_button("CSV", series.to_csv(index=False), "trace-fit-series.csv", "text/csv", key="tr-csv")
    c3.download_button("Fitted scenario", out["toml"], "fitted.toml", "application/toml", key="tr-toml")
