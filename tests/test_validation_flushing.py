"""The flushing suite's reference and metrics (the full suite is `innosim validate flushing`)."""

from pathlib import Path

import pytest

from sim.config import load_scenario, scenario_from_dict
from sim.engine import Server
from sim.metrics import frame
from validation import flushing

METRICS = ("drop_seconds", "longest_drop_s", "sync_waits_max_per_s", "flush_pages_per_s", "redo_use_max_gib",
           "ckpt_age_median_pct", "mod_age_max_over_sync", "tps_mean", "tps_p99", "min_over_median_10s",
           "data_writes_per_s")


def test_reference_rows_name_real_scenarios_and_metrics():
    rows = flushing.load_reference()
    assert len(rows) >= 25
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        assert r.where
        assert r.metric in METRICS, r.id
        for name in (r.scenario, r.b):
            if name is not None:
                scn = load_scenario(Path(flushing.SCENARIO_DIR) / f"{name}.toml")
                assert scn.workload.kind == "oltp"
                assert scn.run.duration_s > r.measure_from_s, r.id
        if r.check in ("figure", "at_least", "at_most"):
            assert r.published is not None, r.id
        if r.check == "not_modelled":
            assert r.reason, r.id


def test_metrics_and_checks_on_a_short_run():
    doc = {"server": {"innodb_buffer_pool_size": "24M", "innodb_log_file_size": "1M", "innodb_flush_method": "O_DIRECT"},
           "hardware": {"device": "seed-12core-disks-2012", "cpu_cores": 4},
           "workload": {"kind": "oltp", "data_size": "48M", "users": 8}, "run": {"duration": "12s"}}
    res = Server(scenario_from_dict(doc, "t")).run()
    run = {"name": "t", "sec": frame(res, 1.0), "ten": frame(res, 10.0), "sync_age": res.limits.max_modified_age_sync,
           "capacity": res.redo_capacity_bytes, "wall_s": res.wall_s, "simulated_s": 12.0}
    values = {m: flushing.metric_value(m, run, 1.0) for m in METRICS}
    assert values["tps_mean"] > 0 and values["flush_pages_per_s"] > 0
    assert 0 <= values["drop_seconds"] <= 11 and values["longest_drop_s"] <= values["drop_seconds"]
    # A 2 x 1 MB log drives the modified age to the sync point.
    assert values["mod_age_max_over_sync"] >= 0.9
    row = flushing.Row("x", "w", "t", None, "tps_mean", "figure", values["tps_mean"] * 1.1, 0.2, 1.0, "")
    assert flushing.evaluate(row, {"t": run}).ok
    row = flushing.Row("x", "w", "t", None, "tps_mean", "figure", values["tps_mean"] * 2, 0.2, 1.0, "")
    assert flushing.evaluate(row, {"t": run}).ok is False
    with pytest.raises(ValueError):
        flushing.metric_value("nonsense", run, 1.0)


def test_device_sensitivity_variant_is_the_assumed_profile_with_one_figure_changed(tmp_path):
    import json

    from models.device import load_profile
    from validation.device_sensitivity import PROFILE, variant_profile

    path = variant_profile(4500, None, tmp_path)
    base, doc = json.loads(PROFILE.read_text()), json.loads(path.read_text())
    assert doc["classes"]["write"]["16384"]["capacity_iops"] == 4500
    doc["classes"]["write"]["16384"]["capacity_iops"] = base["classes"]["write"]["16384"]["capacity_iops"]
    assert {k: v for k, v in doc.items() if k not in ("name", "description")} == \
        {k: v for k, v in base.items() if k not in ("name", "description")}
    assert load_profile(str(path)).op_class("write", 16384).capacity_iops == 4500


def test_device_sensitivity_cache_variants(tmp_path):
    import json

    from models.device import load_profile
    from validation.device_sensitivity import PROFILE, variant_profile

    base = json.loads(PROFILE.read_text())
    small = json.loads(variant_profile(3000, None, tmp_path, cache_mb=64).read_text())
    assert small["write_cache"] == dict(base["write_cache"], bytes=64 << 20)
    none = variant_profile(3000, None, tmp_path, cache_mb=0)
    assert "write_cache" not in json.loads(none.read_text())
    assert load_profile(str(none)).write_cache_bytes == 0
    assert {k: v for k, v in small.items() if k not in ("name", "description", "write_cache")} == \
        {k: v for k, v in base.items() if k not in ("name", "description", "write_cache")}


def test_calibration_target_rows_are_marked_and_printed_apart():
    """The rows whose figures the DBT2 profile is fitted to say so, in the table, the JSON and the
    summary line; every other row checks a prediction."""
    from validation.common import RowResult

    rows = {r.id: r for r in flushing.load_reference()}
    fitted = {i for i, r in rows.items() if r.fitted}
    assert fitted == {"dbt2.12core.commits", "dbt2.32core.commits", "dbt2.3g.flush_rate",
                      "dbt2.8g.flush_rate", "dbt2.32core.flush_rate"}
    assert all("PROFILE_NOTES" in rows[i].fitted for i in fitted)
    passed_fit = RowResult(rows["dbt2.3g.flush_rate"], 1500.0, 1600.0, 0.067, True)
    failed_fit = RowResult(rows["dbt2.12core.commits"], 5500.0, 8000.0, 0.45, False)
    passed = RowResult(rows["dbt2.8g.8inst.no_drops"], 0.0, 0.0, None, True)
    run = {"sec": None, "wall_s": 1.0, "simulated_s": 300.0,
           "settling": {"settled": True, "series": {}}}
    res = flushing.SuiteResult([passed_fit, failed_fit, passed],
                               {n: run for n in ("seed-dbt2-1inst-3g", "seed-dbt2-8inst-8g")})
    text = flushing.format_table(res)
    lines = {ln.split()[0]: ln for ln in text.splitlines() if ln.startswith("dbt2.")}
    assert lines["dbt2.3g.flush_rate"].rstrip().endswith("ok (fitted)")
    assert lines["dbt2.12core.commits"].rstrip().endswith("FAIL (fitted)")
    assert lines["dbt2.8g.8inst.no_drops"].rstrip().endswith("ok")
    assert "suite flushing: 2 passed (1 of them calibration targets, not predictions), 1 failed" in text
    assert "fitted" in passed_fit.to_json("c") and "fitted" not in passed.to_json("c")


def test_device_sensitivity_scales_the_whole_array(tmp_path):
    """--write-scale: every write class's capacity times F and QD1 latency over F (the units each
    class has stay as they were), reads and the cache as the profile has them."""
    import json

    import pytest as _pytest

    from models.device import load_profile
    from validation.device_sensitivity import PROFILE, variant_profile

    base = json.loads(PROFILE.read_text())
    path = variant_profile(None, None, tmp_path, write_scale=0.4)
    doc = json.loads(path.read_text())
    assert set(doc["classes"]["write"]) == set(base["classes"]["write"])
    for size, cls in base["classes"]["write"].items():
        new = doc["classes"]["write"][size]
        assert new["capacity_iops"] == _pytest.approx(0.4 * cls["capacity_iops"])
        assert new["latency_qd1_s"] == _pytest.approx(cls["latency_qd1_s"] / 0.4)
        assert new["service_cv"] == cls["service_cv"]
    assert doc["classes"]["read"] == base["classes"]["read"]
    assert {k: v for k, v in doc.items() if k not in ("name", "description", "classes")} == \
        {k: v for k, v in base.items() if k not in ("name", "description", "classes")}
    p = load_profile(str(path))
    assert p.op_class("write", 1048576).capacity_iops == _pytest.approx(0.4 * 300)
    with _pytest.raises(ValueError):
        variant_profile(3000, None, tmp_path, write_scale=0.5)
