"""The versions suite: reference rows, threshold rows, live figures and run metrics (the full suite
is `innosim validate versions`)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sim.config import load_scenario, scenario_from_dict
from sim.engine import Server
from sim.metrics import frame
from validation import versions

METRICS = ("mod_age_plateau_pct", "ckpt_age_plateau_pct", "ckpt_age_max_pct", "users_wait_mod_age_pct",
           "users_wait_ckpt_age_pct", "drop_seconds", "mod_age_max_over_sync", "tps_mean", "user_wait_thread_s",
           "max_checkpoint_age_bytes", "live_tps_mean", "live_ckpt_age_plateau_pct", "live_pages_flushed_mean",
           "live_drop_seconds", "live_lru_share_pct", "live_neighbour_share_pct", "live_adaptive_passes_s",
           "live_background_passes_s", "live_lru_passes_s", "live_log_writes_per_commit",
           "live_data_fsyncs_per_commit")


def test_reference_rows_name_real_scenarios_versions_and_metrics():
    rows = versions.load_reference()
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids))
    kinds = {r.kind for r in rows}
    assert kinds == {"threshold", "run"}
    for r in rows:
        assert r.where
        if r.kind == "threshold":
            assert r.version and r.size and r.check == "within_pp" and r.tolerance <= 0.1
            continue
        assert r.metric in METRICS, r.id
        for name in (r.scenario, r.b):
            if name is not None:
                scn = load_scenario(Path(versions.SCENARIO_DIR) / f"{name}.toml")
                assert scn.workload.kind == "oltp"
                if not r.metric.startswith("live_") and r.metric != "max_checkpoint_age_bytes":
                    assert scn.run.duration_s > r.measure_from_s, r.id
        if r.check != "report":
            assert r.published is not None, r.id
        if r.metric.startswith("live_"):
            assert r.published == "measured", r.id
            assert (versions.LIVE_ROOT / r.live / "variables.tsv").is_file(), r.id
            assert (r.b is None) == (r.b_live is None), r.id
    # Every version has threshold rows and a run whose limits are observed.
    from models.versions import VERSION_NAMES
    assert {r.version for r in rows if r.kind == "threshold"} == set(VERSION_NAMES)


def test_threshold_rows_all_agree_with_the_worked_numbers():
    for r in versions.load_reference():
        if r.kind == "threshold":
            res = versions.evaluate(r, {})
            assert res.ok, (r.id, res.published, res.simulated)


def test_live_figures_are_read_from_the_capture():
    assert versions.measured_live("max_checkpoint_age_bytes") == 80_819_529      # Innodb_checkpoint_max_age
    tps = versions.measured_live("live_tps_mean")
    assert 1000 < tps < 2000
    plateau = versions.measured_live("live_ckpt_age_plateau_pct")
    assert 60 < plateau < 81


def test_live_shares_of_the_pages_flushed():
    """The 96M capture: the LRU flush writes most pages (1,033 of 1,177 a second from 60 s on), and
    most of those are neighbours (791); the simulated series give the same columns."""
    lru = versions.measured_live("live_lru_share_pct", "log-size-96m")
    nbr = versions.measured_live("live_neighbour_share_pct", "log-size-96m")
    assert 80 < lru < 95 and 55 < nbr < 75
    f = pd.DataFrame({"time_s": np.arange(1.0, 181.0), "tps": np.full(180, 1000.0), "pages_flushed": np.full(180, 200.0),
                      "buffer_LRU_batch_total_pages": np.full(180, 150.0),
                      "buffer_flush_neighbor_total_pages": np.full(180, 50.0)})
    run = {"name": "t", "sec": f}
    assert versions.metric_value("live_lru_share_pct", run, 0.0) == pytest.approx(75.0)
    assert versions.metric_value("live_neighbour_share_pct", run, 0.0) == pytest.approx(25.0)


def test_live_figures_of_each_capture_and_their_ratio():
    assert versions.live_log_file_bytes() == 96 << 20
    assert versions.measured_live("live_pages_flushed_mean") > 0
    drops = versions.measured_live("live_drop_seconds")
    assert 0 <= drops <= 160
    ratio_row = versions.Row("r", "run", "w", "live_tps_mean", "figure", "measured", 0.1, 0.0, "",
                             scenario="a", b="b", live="example", b_live="example")
    run = {"sec": pd.DataFrame({"time_s": np.arange(1.0, 181.0), "tps": np.full(180, 1500.0)})}
    res = versions.evaluate(ratio_row, {"a": run, "b": run})
    assert res.published == pytest.approx(1.0) and res.simulated == pytest.approx(1.0) and res.ok


def test_drop_seconds_counts_seconds_below_half_the_median():
    tps = np.array([100.0, 100, 40, 100, 49, 51, 100, 100, 0])      # median 100
    assert versions.drop_seconds(tps) == 3.0
    assert versions.drop_seconds(np.array([])) == 0.0


def test_report_rows_show_the_measured_figure():
    rep = versions.Row("x", "run", "w", "live_drop_seconds", "report", "measured", 0.0, 0.0, "")
    res = versions.check(rep, 4.0, 6.0)
    assert res.published == 4.0 and res.ok is None


def test_the_simulated_mariadb_limit_is_the_one_the_server_reported():
    scn = load_scenario(Path(versions.SCENARIO_DIR) / "live-mariadb-10.11-sysbench.toml")
    from sim.engine import preflight
    assert preflight(scn).limits.max_checkpoint_age == versions.measured_live("max_checkpoint_age_bytes")


def test_wait_onsets_take_the_age_just_before_each_wait():
    t = np.arange(1, 11) * 0.1
    fine = pd.DataFrame({"time_s": t, "threads_sync_flush": [0, 0, 3, 2, 0, 0, 0, 5, 0, 0],
                         "modified_age_pct": [70, 74, 76, 75, 73, 74, 75.5, 76, 74, 73.0],
                         "checkpoint_age_pct": t})
    got = versions._wait_onsets_pct({"fine": fine}, 0.0, "modified_age_pct")
    assert got == pytest.approx(np.median([74, 75.5]))
    none = fine.assign(threads_sync_flush=0)
    assert versions._wait_onsets_pct({"fine": none}, 0.0, "modified_age_pct") is None


def test_checks():
    row = versions.Row("x", "run", "w", "m", "within_pp", 75.9, 1.0, 0.0, "")
    assert versions.check(row, 75.9, 76.8).ok and not versions.check(row, 75.9, 77.0).ok
    lo = versions.Row("x", "run", "w", "m", "at_least_pp", 81.0, 1.0, 0.0, "")
    assert versions.check(lo, 81.0, None).ok and versions.check(lo, 81.0, 80.5).ok
    assert not versions.check(lo, 81.0, 70.0).ok
    rep = versions.Row("x", "run", "w", "m", "report", None, 1.0, 0.0, "")
    assert versions.check(rep, None, 5.0).ok is None


def test_metrics_on_a_short_run():
    doc = {"server": {"version": "mysql-8.0", "innodb_buffer_pool_size": "24M", "innodb_log_file_size": "4M",
                      "innodb_flush_method": "O_DIRECT"},
           "hardware": {"device": "seed-12core-disks-2012", "cpu_cores": 4},
           "workload": {"kind": "oltp", "data_size": "48M", "users": 8}, "run": {"duration": "6s"}}
    res = Server(scenario_from_dict(doc, "t")).run()
    run = {"name": "t", "sec": frame(res, 1.0), "fine": frame(res, 0.1), "limits": res.limits}
    for metric in METRICS:
        if metric.startswith("live_") or metric == "max_checkpoint_age_bytes":
            continue
        v = versions.metric_value(metric, run, 1.0)
        assert v is None or np.isfinite(v), metric
    assert versions.metric_value("ckpt_age_max_pct", run, 1.0) > 50


@pytest.mark.slow
def test_mysql80_limit_rows_hold():
    """8.0 holds the modified age at its sync point, and its user threads wait only at the
    free-check limit: the rows on the overloaded scenario (80 users) hold."""
    name = "versions-limits-mysql80-overload"
    rows = [r for r in versions.load_reference() if r.scenario == name]
    assert {r.metric for r in rows} == {"users_wait_ckpt_age_pct", "mod_age_plateau_pct"}
    run = versions._run_one(name)
    for r in rows:
        res = versions.evaluate(r, {name: run})
        assert res.ok, (r.id, res.published, res.simulated)


def test_io_counters_a_commit_measured_and_simulated():
    """live.log96m.*_per_commit: the capture's Innodb_log_writes and Innodb_data_fsyncs over 20-180 s
    per sysbench transaction (198,715 data writes and 1,542 doublewrite batches are the same
    seconds' other counters), and the simulated run's the same way."""
    assert versions.measured_live("live_log_writes_per_commit", "log-size-96m") == pytest.approx(0.624, abs=5e-4)
    assert versions.measured_live("live_data_fsyncs_per_commit", "log-size-96m") == pytest.approx(0.723, abs=5e-4)
    t = np.arange(0.0, 200.0, 1.0)
    sec = pd.DataFrame({"time_s": t, "tps": np.full(t.size, 1000.0), "Innodb_log_writes": np.full(t.size, 600.0),
                        "Innodb_data_fsyncs": np.where(t > 20, 700.0, 0.0)})
    assert versions.metric_value("live_log_writes_per_commit", {"sec": sec, "name": "x"}, 0.0) == pytest.approx(0.6)
    assert versions.metric_value("live_data_fsyncs_per_commit", {"sec": sec, "name": "x"}, 0.0) == pytest.approx(0.7)
