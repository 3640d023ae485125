"""What-if page: a shipped or uploaded scenario, any setting changed, one run, every figure."""

from __future__ import annotations

import streamlit as st

from models.errors import InputError
from models.versions import version as version_of
from sim.app.settings import apply, form_texts, overrides_from
from sim.app.widgets import (choose_scenario, figure_block, pasted_server_inputs, run_with_progress,
                             settings_form, stalls_1s_text)
from sim.metrics import stalls
from sim.plots import (checkpoint_figure, flushing_figure, io_figure, latency_figure, pages_figure, queue_figure,
                       recovery_figure, sync_waits_figure, tps_figure)
from sim.run_output import log_threads_text, recovery_sentence
from sim.settling import settling_sentence, steady_sentence
from sim.swing import swing_sentence

RESOLUTIONS = {"100 ms": "100ms", "1 s": "1s", "10 s": "10s", "60 s": "60s"}


def show_summary(s: dict) -> None:
    c = st.columns(6)
    c[0].metric("commits/s (mean)", f"{s['tps_mean']:,.0f}")
    c[1].metric("p1 of per-second commits", f"{s['tps_p1_per_s']:,.0f}")
    c[2].metric("latency p99 (ms)", f"{s['latency_ms']['p99']:,.1f}")
    c[3].metric("stalls at 1 s", stalls_1s_text(s))
    waiting = "sync flushing" if s.get("margin_wait", "sync flush") == "sync flush" else "redo space waits"
    c[4].metric(f"time under {waiting} (s)", f"{s['time_under_sync_flush_s']:.1f}")
    c[5].metric("max checkpoint age", f"{s['checkpoint_age_max_pct']:.1f}%")


def show_run(out: dict, resolution: str, key: str) -> None:
    frames, s = out["frames"], out["summary"]
    for w in out["warnings"]:
        st.warning(w)
    v = version_of(s.get("version", "mysql-5.6"))
    st.caption(f"Simulated server: {v.label} ({v.source}). Redo limits, % of the configured redo size: "
               + "; ".join(f"{s['limit_names'][k]} {p:.1f}%" for k, p in s["limits_pct"].items() if p is not None))
    show_summary(s)
    sentence = settling_sentence(s.get("settling"))
    if sentence:    # a run still in its start-up transient is said so where its figures are read
        (st.caption if s["settling"]["settled"] else st.info)(sentence)
    steady = steady_sentence(s.get("steady"), s.get("settling"))
    if steady:
        st.caption(steady)
    swing_line = swing_sentence(s.get("swing"))
    if swing_line:
        st.info(swing_line)
    if s.get("log_bin"):
        st.caption(f"Binary log on (sync_binlog {s['sync_binlog']}): {s['binlog_group_commits']:,} group "
                   f"commits, {s['binlog_commits'] / max(1, s['binlog_group_commits']):.1f} transactions "
                   f"each, {s['binlog_fsyncs']:,} fsyncs. Commits held in its group commit show as "
                   "\"binlog wait\".")
    if s.get("log_threads"):
        st.caption(log_threads_text(s))
    if s.get("page_read_wait_thread_s"):
        st.caption(f"Page reads: {s['buffer_pool_reads_per_s']:,.0f}/s (Innodb_buffer_pool_reads); on average "
                   f"{s['page_read_wait_threads_mean']:.1f} user threads waited for the pages they missed, "
                   "shown as \"page read wait\" where they hold a stall.")
    if s.get("innodb_thread_concurrency"):
        st.caption(f"innodb_thread_concurrency {s['innodb_thread_concurrency']}: on average "
                   f"{s['innodb_queue_threads_mean']:.1f} threads waiting to enter InnoDB.")
    if s.get("offered_tps"):
        st.caption(f"Open loop: {s['offered_tps']:,.0f} transactions/s offered; on average "
                   f"{s['trx_queue_mean']:,.1f} waited for a user (at most {s['trx_queue_max']:,}), and their "
                   "latency counts from their arrival, so a stall shows as a queue and a latency spike.")
    label = RESOLUTIONS[resolution]
    if label not in frames:
        st.warning(f"the run is shorter than {resolution}: showing 1 s intervals")
        label = "1s" if "1s" in frames else "100ms"
    df = frames[label]
    st_df = stalls(df, out["threshold_pct"], s.get("version", "mysql-5.6"))
    figure_block(f"Throughput at {resolution} resolution, stalls shaded by cause", tps_figure(df, resolution, st_df),
                 df[["time_s", "commits", "tps"]], f"{key}-throughput-{label}",
                 caption="The seed's point: 10 s and 60 s averages hide the stalls that 1 s and 100 ms show.")
    st.markdown(f"**Stalls at {resolution}** (below {out['threshold_pct']:g}% of the median)")
    if len(st_df):
        st.dataframe(st_df[["start_s", "length_s", "min_tps", "median_tps", "cause", "buffer_flush_sync_waits",
                            "pages_flushed_per_s", "device_busy_pct", "checkpoint_age_max_pct"]],
                     hide_index=True)
    else:
        st.write("no stalls at this resolution")
    sec = frames.get("1s", df)
    figure_block("Latency percentiles", latency_figure(df), df[["time_s", "latency_p50_ms", "latency_p95_ms",
                                                                "latency_p99_ms", "latency_max_ms"]],
                 f"{key}-latency-{label}")
    if s.get("offered_tps"):
        figure_block(f"Transactions waiting for a user ({resolution}; open loop)", queue_figure(df),
                     df[["time_s", "trx_queue"]], f"{key}-queue-{label}")
    figure_block("Checkpoint age against the version's limits (1 s)", checkpoint_figure(sec, s.get("limit_names")),
                 sec[["time_s", "checkpoint_age_pct", "modified_age_pct", "log_max_modified_age_async_pct",
                      "log_max_modified_age_sync_pct", "log_max_checkpoint_age_async_pct",
                      "log_max_checkpoint_age_pct"]], f"{key}-checkpoint-age")
    figure_block("Dirty and free pages (1 s)", pages_figure(sec),
                 sec[["time_s", "Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_pages_free"]], f"{key}-pages")
    figure_block("Pages flushed per second by kind (1 s)", flushing_figure(sec),
                 sec[["time_s", "buffer_flush_adaptive_total_pages", "buffer_flush_background_total_pages",
                      "buffer_flush_sync_total_pages", "buffer_LRU_batch_total_pages",
                      "buffer_LRU_single_flush_pages"]], f"{key}-flushing")
    figure_block("buffer_flush_sync_waits per second (1 s)", sync_waits_figure(sec),
                 sec[["time_s", "buffer_flush_sync_waits"]], f"{key}-sync-waits")
    rec = recovery_sentence(s.get("crash_recovery"))
    if rec:
        figure_block("Crash recovery, had the server crashed at that second (1 s)", recovery_figure(sec),
                     sec[["time_s", "log_lsn_checkpoint_age", "recovery_pages", "recovery_batches",
                          "recovery_estimate_s"]],
                     f"{key}-recovery", caption=rec)
    figure_block(f"Device busy and queue depth, filesystem lock wait ({resolution})", io_figure(df),
                 df[["time_s", "fs_lock_wait_s", "device_queue_depth", "device_write_backlog", "device_busy_pct"]],
                 f"{key}-io")


def render() -> None:
    st.title("What-if: one server, one change")
    st.caption("Pick a scenario, change any setting (my.cnf names), run, and see where throughput "
               "drops and why. The server version is a setting ([server] version: MySQL 5.6, 5.7, 8.0, "
               "8.0.30, 8.4, MariaDB 10.11); see the README for what is and is not modelled.")
    chosen = choose_scenario("wi")
    if chosen is None:
        return
    doc, scn, source = chosen
    pasted = pasted_server_inputs("wi", doc, scn, source)
    if pasted is None:
        return
    doc, scn, form_key = pasted
    initial = form_texts(scn)
    edited = settings_form(scn, form_key)
    resolution = st.select_slider("resolution", list(RESOLUTIONS), value="1 s", key="wi-res")
    if st.button("Run", type="primary", key="wi-run"):
        try:
            run_scn = apply(doc, source, scn.name, overrides_from(initial, edited))
        except InputError as err:
            st.error(str(err))
            return
        st.session_state["wi-out"] = run_with_progress(run_scn)
    if "wi-out" in st.session_state:
        show_run(st.session_state["wi-out"], resolution, "whatif")
