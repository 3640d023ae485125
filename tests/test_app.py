"""The Streamlit app: each page loads, a run completes and shows its figures and numbers, and bad
input shows an error instead of a traceback (streamlit.testing AppTest)."""

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _whatif():
    from sim.app import whatif

    whatif.render()


def _iobench():
    from sim.app import iobench_page

    iobench_page.render()


def _compare():
    from sim.app import compare

    compare.render()


def _sweep():
    from sim.app import sweep_page

    sweep_page.render()


def _calibrate():
    from sim.app import calibrate_page

    calibrate_page.render()


def _learn():
    from sim.app import learn

    learn.render()


def _set(at, label, value):
    [box] = [t for t in at.text_input if t.label == label]
    box.set_value(value)


def _set_all(at, label, value):
    for box in at.text_input:
        if box.label == label:
            box.set_value(value)


def _what_if_click(settings: dict, timeout: int = 180):
    """The What-if page with `settings` typed into the form (in order) and Run pressed."""
    at = AppTest.from_function(_whatif, default_timeout=timeout).run()
    for label, value in settings.items():
        _set(at, label, value)
    at.button[0].click().run()
    return at


def test_app_opens_on_the_what_if_page():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value.startswith("What-if")


def test_what_if_runs_a_scenario_and_shows_figures_numbers_and_stalls():
    at = AppTest.from_function(_whatif, default_timeout=180).run()
    assert not at.exception
    assert at.selectbox[0].value == "default"
    _set(at, "duration", "20s")                   # a shorter run of the default scenario
    _set(at, "innodb_log_file_size", "128M")      # and a smaller log: sync flushing shows
    at.button[0].click().run()
    assert not at.exception, at.exception
    labels = [m.label for m in at.metric]
    assert "commits/s (mean)" in labels and "max checkpoint age" in labels
    tps = float(at.metric[0].value.replace(",", ""))
    assert tps > 100
    # throughput, latency, checkpoint age, pages, flushing, waits, crash recovery, I/O
    assert len(at.get("image")) == 8
    assert len(at.get("download_button")) == 16    # a PNG and a CSV for each
    assert any(c.value.startswith("Crash recovery: a crash at ") for c in at.caption)
    assert any("Stalls at 1 s" in m.value for m in at.markdown)
    # A stall table with its causes (128M of redo for this load stalls in sync flushing).
    assert at.dataframe and "sync flush" in set(at.dataframe[0].value["cause"])
    # with what the I/O side did over each stall
    assert {"pages_flushed_per_s", "device_busy_pct", "checkpoint_age_max_pct"} <= set(at.dataframe[0].value.columns)
    # Whether the 20 s left their start-up is said under the headline figures.
    said = [e.value for e in list(at.caption) + list(at.info) if e.value.startswith("Steady state: ")]
    assert len(said) == 1
    # Another resolution redraws from the same run.
    at.select_slider[0].set_value("100 ms").run()
    assert not at.exception
    assert any("Stalls at 100 ms" in m.value for m in at.markdown)


def test_what_if_names_the_binary_log_and_the_innodb_queue():
    at = _what_if_click({"duration": "5s", "log_bin": "true", "sync_binlog": "1", "innodb_thread_concurrency": "8"})
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "Binary log on (sync_binlog 1)" in captions
    assert "innodb_thread_concurrency 8: on average" in captions


def test_what_if_says_when_transactions_waited_for_page_reads():
    at = _what_if_click({"duration": "5s", "innodb_buffer_pool_size": "1G"})
    assert not at.exception, at.exception
    said = [c.value for c in at.caption if c.value.startswith("Page reads: ")]
    assert len(said) == 1 and "user threads waited for the pages they missed" in said[0]


def test_what_if_open_loop_shows_its_queue():
    at = _what_if_click({"duration": "5s", "rate": "3000"})
    assert not at.exception, at.exception
    assert "Open loop: 3,000 transactions/s offered" in " ".join(c.value for c in at.caption)
    assert len(at.get("image")) == 9              # the eight figures and the queue
    assert any("Transactions waiting for a user" in m.value for m in at.markdown)


def test_what_if_bad_setting_shows_the_error():
    at = _what_if_click({"innodb_io_capacity_max": "50"}, timeout=60)
    assert not at.exception
    assert at.error and "innodb_io_capacity_max" in at.error[0].value
    assert not at.metric


def test_what_if_refused_setting_shows_the_servers_reason():
    at = _what_if_click({"innodb_log_file_size": "1M", "innodb_thread_concurrency": "100"}, timeout=60)
    assert not at.exception
    assert at.error and "log_calc_max_ages" in at.error[0].value


def test_iobench_page_runs_default_and_shows_results():
    at = AppTest.from_function(_iobench, default_timeout=120).run()
    assert not at.exception
    at.button[0].click().run()
    assert not at.exception
    assert len(at.dataframe) == 1
    df = at.dataframe[0].value
    assert set(df["fs"]) == {"ext4", "xfs"}
    assert len(df) == 10


def test_iobench_page_runs_through_the_host_scheduler():
    at = AppTest.from_function(_iobench, default_timeout=120).run()
    at.selectbox(key="io-sched").set_value("cfq").run()
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert len(at.dataframe[0].value) == 10


def test_iobench_page_bad_mount_option_shows_error():
    at = AppTest.from_function(_iobench, default_timeout=120).run()
    at.text_input[0].set_value("noatime,turbo").run()
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "turbo" in at.error[0].value


def test_uploaded_scenarios_are_checked():
    from models.errors import InputError
    from sim.app.settings import parse_upload

    doc, scn = parse_upload(b'[workload]\nkind = "oltp"\nwarehouses = 1\nusers = 4\n', "mine.toml")
    assert scn.name == "mine" and scn.workload.users == 4
    for data, needle in ((b"\xff\xfe", "UTF-8"), (b"[server\n", "invalid TOML"),
                         (b'[workload]\nkind = "iobench"\n', "oltp"),
                         (b"[server]\ninnodb_log_file_size = \"lots\"\n", "innodb_log_file_size")):
        with pytest.raises(InputError, match=needle):
            parse_upload(data, "bad.toml")


def test_form_texts_round_trip_to_the_same_scenario():
    from sim.app.settings import apply, form_texts, load_shipped, overrides_from
    from sim.run_output import resolved_toml

    doc, scn = load_shipped("default")
    texts = form_texts(scn)
    assert texts["server.innodb_buffer_pool_size"] == "16G" and texts["run.duration"] == "60s"
    assert overrides_from(texts, dict(texts)) == []
    # Every text, sent back as an override, gives the same scenario.
    same = apply(doc, "d", scn.name, [f"{k}={v}" for k, v in texts.items() if v])
    assert resolved_toml(same).split("\n", 1)[1] == resolved_toml(scn).split("\n", 1)[1]
    edited = dict(texts, **{"server.innodb_io_capacity": "400"})
    assert overrides_from(texts, edited) == ["server.innodb_io_capacity=400"]


# -- Compare -----------------------------------------------------------------------------------

def test_compare_runs_two_configurations_on_the_same_axes():
    from sim.sweep import METRICS
    at = AppTest.from_function(_compare, default_timeout=180).run()
    assert not at.exception
    # Out of the box: the default scenario with 8 (A) and 1 (B) buffer pool instances.
    inst = [t.value for t in at.text_input if t.label == "innodb_buffer_pool_instances"]
    assert inst == ["8", "1"]
    _set_all(at, "duration", "20s")
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert len(at.get("image")) == 5                 # throughput, latency, checkpoint age, flushing, waits
    assert len(at.get("download_button")) == 11      # PNG + CSV each, and the summary CSV
    table = at.dataframe[0].value
    assert len(table) == len(METRICS) and list(table.columns) == ["metric", "A", "B", "B - A", "change %"]
    row = table[table["metric"] == "commits/s (mean)"].iloc[0]
    assert row["A"] > 100 and row["B"] > 100
    assert row["B - A"] == pytest.approx(row["B"] - row["A"])
    # Each side that had not left its start-up transient in its 20 s says so, by its letter.
    steady = table[table["metric"].str.startswith("steady state reached")].iloc[0]
    said = {i.value[0] for i in at.info if "steady state: not reached" in i.value}
    assert said == {side for side in "AB" if steady[side] == 0.0}


def test_compare_same_configuration_twice_gives_no_difference():
    # Same scenario, same seed: the same run (and B is served from the cache without error).
    at = AppTest.from_function(_compare, default_timeout=180).run()
    _set_all(at, "duration", "10s")
    [b_inst] = [t for t in at.text_input if t.label == "innodb_buffer_pool_instances" and t.value == "1"]
    b_inst.set_value("8")
    at.button[0].click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert (table["B - A"].fillna(0) == 0).all()


def test_compare_bad_setting_names_the_key():
    at = AppTest.from_function(_compare, default_timeout=60).run()
    [b_inst] = [t for t in at.text_input if t.label == "innodb_buffer_pool_instances" and t.value == "1"]
    b_inst.set_value("65")
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "innodb_buffer_pool_instances" in at.error[0].value
    assert not at.dataframe


def test_compare_bad_upload_shows_an_error():
    at = AppTest.from_function(_compare, default_timeout=60).run()
    at.radio[0].set_value("upload").run()
    at.file_uploader[0].set_value(("mine.toml", b"[server\n", "application/toml")).run()
    assert not at.exception
    assert at.error and "invalid TOML" in at.error[0].value


def test_difference_table():
    from sim.app.compare import difference_table
    from sim.sweep import METRICS

    def summary(tps, waits):
        return {"tps_mean": tps, "tps_p99_per_s": tps, "tps_p1_per_s": 0.0,
                "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0, "max": 4.0},
                "stalls_100ms": {"count": 0, "seconds": 0.0}, "stalls_1s": {"count": 1, "seconds": 2.0},
                "time_under_sync_flush_s": 1.0, "buffer_flush_sync_waits": waits,
                "buffer_flush_sync_waits_max_per_s": waits, "checkpoint_age_max_pct": 70.0,
                "pages_flushed_per_s": {k: 1.0 for k in ("adaptive", "background", "sync", "lru", "single_page")},
                "pages_flushed_per_s_total": 5.0}

    t = difference_table(summary(1000.0, 0), summary(1500.0, 30))
    assert len(t) == len(METRICS)
    tps = t[t["key"] == "tps_mean"].iloc[0]
    assert tps["B - A"] == 500.0 and tps["change %"] == pytest.approx(50.0)
    waits = t[t["key"] == "buffer_flush_sync_waits"].iloc[0]
    assert waits["B - A"] == 30 and np.isnan(waits["change %"])    # no percentage of zero


# -- Sweep -------------------------------------------------------------------------------------

def test_sweep_page_runs_a_small_sweep_then_loads_its_table(tmp_path, monkeypatch):
    monkeypatch.setenv("INNOSIM_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_function(_sweep, default_timeout=300).run()
    assert not at.exception
    at.text_input(key="sw-dur").set_value("4s")
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, at.error[0].value if at.error else ""
    assert len(at.get("image")) == 2                  # metric against parameter, heatmap
    view = at.dataframe[0].value
    assert len(view) == 6 and set(view["server.innodb_log_file_size"]) == {"128M", "256M", "512M"}
    assert (view["runs"] == 1).all() and (view["tps_mean_mean"] > 0).all()
    runs = at.session_state["sw-result"][0]
    assert len(list((tmp_path / "cache").glob("*.json"))) == 6     # the CLI's run cache, shared
    assert [b.proto.label for b in at.get("download_button")][-3:] == ["CSV (means)", "Parquet (runs)", "CSV (runs)"]
    # The runs table, loaded back, gives the same means.
    buf = io.BytesIO()
    runs.to_parquet(buf, index=False)
    at.radio[0].set_value("load a sweep file").run()
    at.file_uploader[0].set_value(("mine.parquet", buf.getvalue(), "application/octet-stream")).run()
    assert not at.exception
    again = at.dataframe[0].value
    assert list(again["tps_mean_mean"]) == list(view["tps_mean_mean"])
    # Another metric and axis redraw from the same table.
    at.selectbox(key="sw-metric").set_value("stalls_1s_s").run()
    at.selectbox(key="sw-x").set_value("server.innodb_buffer_pool_instances").run()
    assert not at.exception and len(at.get("image")) == 2


def test_sweep_page_refuses_bad_values_and_files(tmp_path, monkeypatch):
    monkeypatch.setenv("INNOSIM_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_function(_sweep, default_timeout=120).run()
    at.text_input(key="sw-v1").set_value("128M,lots")
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "innodb_log_file_size" in at.error[0].value
    at.text_input(key="sw-v1").set_value(",".join(f"{m}M" for m in range(128, 128 * 14, 128)))
    at.button[0].click().run()
    assert at.error and "more than the app runs" in at.error[0].value
    at.radio[0].set_value("load a sweep file").run()
    at.file_uploader[0].set_value(("table.csv", b"a,b\n1,2\n", "text/csv")).run()
    assert not at.exception
    assert at.error and "not an innosim sweep table" in at.error[0].value


def test_read_table_formats_and_errors():
    from models.errors import InputError
    from sim.sweep import METRICS, read_table

    runs = pd.DataFrame({"server.innodb_io_capacity": [200, 200, 400, 400], "replicate": [0, 1, 0, 1],
                         "seed": [1, 2, 1, 2], **{m: [1.0, 3.0, 5.0, 7.0] for m in METRICS},
                         "run_key": ["a", "b", "c", "d"]})
    got_runs, ci, keys = read_table(runs.to_csv(index=False).encode(), "s.csv")
    assert keys == ["server.innodb_io_capacity"] and len(got_runs) == 4
    assert list(ci["tps_mean_mean"]) == [2.0, 6.0] and list(ci["runs"]) == [2, 2]
    none_runs, ci2, keys2 = read_table(ci.to_csv(index=False).encode(), "s.ci.csv")
    assert none_runs is None and keys2 == keys and list(ci2["tps_mean_mean"]) == [2.0, 6.0]
    for data, name, needle in ((b"x", "s.xlsx", "not a sweep table format"),
                               (b"not parquet", "s.parquet", "cannot be read"),
                               (runs.drop(columns="tps_mean").to_csv(index=False).encode(), "s.csv", "tps_mean"),
                               (b"a,b\n1,2\n", "s.csv", "not an innosim sweep table")):
        with pytest.raises(InputError, match=needle):
            read_table(data, name)


def test_read_table_takes_a_table_written_before_the_page_read_metrics():
    """Tables written before 2026-11-30 lack buffer_pool_reads_per_s and page_read_wait_threads_mean:
    they still read, with those columns empty, and a table lacking any other metric is refused."""
    from models.errors import InputError
    from sim.sweep import ADDED_METRICS, METRICS, read_table

    old = [m for m in METRICS if m not in ADDED_METRICS]
    runs = pd.DataFrame({"server.innodb_io_capacity": [200, 200], "replicate": [0, 1], "seed": [1, 2],
                         **{m: [1.0, 3.0] for m in old}, "run_key": ["a", "b"]})
    got, ci, _ = read_table(runs.to_csv(index=False).encode(), "old.csv")
    assert got["page_read_wait_threads_mean"].isna().all() and list(ci["tps_mean_mean"]) == [2.0]
    none_runs, ci2, _ = read_table(ci.drop(columns=[f"{m}_{x}" for m in ADDED_METRICS for x in ("mean", "ci95")])
                                   .to_csv(index=False).encode(), "old.ci.csv")
    assert none_runs is None and ci2["buffer_pool_reads_per_s_mean"].isna().all()
    with pytest.raises(InputError, match="device_busy_pct_mean"):
        read_table(runs.drop(columns="device_busy_pct_mean").to_csv(index=False).encode(), "old.csv")


# -- Calibrate ---------------------------------------------------------------------------------

def test_calibrate_page_fits_uploaded_fio_results():
    from fio_synth import fio_run_set

    files = [(name, data, "application/json") for name, data in fio_run_set(numjobs=(1, 2))]
    at = AppTest.from_function(_calibrate, default_timeout=180).run()
    assert not at.exception
    at.file_uploader[0].set_value(files).run()
    at.text_input(key="cal-holdout").set_value("numjobs=2")
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, at.error[0].value if at.error else ""
    labels = {m.label: m.value for m in at.metric}
    assert labels["fio jobs"] == "28 (14 held out)"
    assert len(at.get("image")) == 1
    summary, report = at.dataframe[0].value, at.dataframe[1].value
    assert len(report) == 28 and set(report["set"]) == {"fit", "held out"}
    # Jobs made by the simulator from a built-in profile are predicted well when held out.
    iops = summary[summary["metric"] == "iops"].iloc[0]
    assert iops["jobs within target"] == "14 of 14"
    assert "Download profile JSON" in [b.proto.label for b in at.get("download_button")]


@pytest.mark.slow
def test_calibrate_page_fits_through_the_hosts_cfq():
    from fio_synth import fio_run_set

    files = [(name, data, "application/json") for name, data in fio_run_set(depths=(1, 4, 8, 16), numjobs=(1, 2))]
    at = AppTest.from_function(_calibrate, default_timeout=300).run()
    at.file_uploader[0].set_value(files).run()
    at.selectbox(key="cal-host").set_value("CFQ, SATA queue depth 32 (Linux 4.x legacy block layer)").run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error, at.error[0].value if at.error else ""
    report = at.dataframe[0].value
    # two processes each 8 or 16 deep: CFQ's slices shape them, so they are predicted, not fitted
    assert set(report["set"]) == {"fit", "host-shaped"}
    assert (report["set"] == "host-shaped").sum() == 4


def test_calibrate_page_names_the_sequential_jobs_it_leaves_out():
    import json as _json

    from fio_synth import fio_run_set

    files = [(name, data, "application/json") for name, data in fio_run_set(depths=(1, 2, 4, 8, 16, 32))]
    doc = _json.loads(files[0][1])
    doc["jobs"][0]["job options"]["rw"] = "read"          # a sequential copy of a random read job
    files.append(("seq.json", _json.dumps(doc).encode(), "application/json"))
    at = AppTest.from_function(_calibrate, default_timeout=180).run()
    at.file_uploader[0].set_value(files).run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    report = at.dataframe[0].value
    unused = report[report["set"].str.startswith("not used")]
    assert len(unused) == 1 and unused.iloc[0]["rw"] == "read"
    assert any("1 job(s) not used for the units (not used: sequential (rw=read)" in c.value for c in at.caption)


def test_calibrate_page_bad_files_show_the_error():
    at = AppTest.from_function(_calibrate, default_timeout=60).run()
    at.file_uploader[0].set_value(("broken.json", b"{not json", "application/json")).run()
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "broken.json" in at.error[0].value
    from fio_synth import fio_run_set

    reads_only = [(n, d, "application/json") for n, d in fio_run_set(depths=(1, 4)) if n.startswith("randread")]
    at.file_uploader[0].set_value(reads_only).run()
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "write" in at.error[0].value


# -- Learn -------------------------------------------------------------------------------------

def test_learn_walks_render_their_simulations():
    at = AppTest.from_function(_learn, default_timeout=240).run()
    assert not at.exception
    assert len(at.get("image")) == 1
    assert list(at.dataframe[0].value.index) == ["raw (2012)"]
    # Step 2 brings ext4 in: one O_DIRECT writer per file, the rest wait on the inode lock.
    at.radio[0].set_value(at.radio[0].options[1]).run()
    table = at.dataframe[0].value
    assert table.loc["ext4 (2012)", "peak IOPS"] < 0.3 * table.loc["raw (2012)", "peak IOPS"]
    assert table.loc["ext4 (2012)", "lock wait % at most processes"] > 50
    at.selectbox(key="learn-walk").set_value("Buffer pool instances and sync flushing").run()
    assert not at.exception, at.exception
    assert len(at.get("image")) == 4
    assert {m.label for m in at.metric} >= {"buffer_flush_sync_waits", "max checkpoint age",
                                            "crash recovery, worst second"}
    recovery = next(m.value for m in at.metric if m.label == "crash recovery, worst second")
    assert recovery.endswith(" s") and float(recovery[:-2].replace(",", "")) > 0
    at.selectbox(key="learn-walk").set_value("Micro-stalls hidden by averaging").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["resolution"]) == ["60s", "10s", "1s", "100ms"]
    # Averaging hides: the lowest 60 s value is far above the lowest 1 s value.
    mins = dict(zip(table["resolution"], table["min commits/s"]))
    assert mins["60s"] > mins["1s"]


def test_learn_cfq_walk_shows_slices_and_preemption():
    at = AppTest.from_function(_learn, default_timeout=240).run()
    at.selectbox(key="learn-walk").set_value("The host's I/O scheduler (CFQ) on a SATA SSD").run()
    assert not at.exception, at.exception
    one = at.dataframe[0].value.set_index("elevator")
    assert one.loc["cfq", "reads/s"] == pytest.approx(one.loc["noop", "reads/s"], rel=0.03)
    # 4 processes x 16: the others wait 3 slices of 75 ms
    at.radio[0].set_value(at.radio[0].options[1]).run()
    assert not at.exception, at.exception
    four = at.dataframe[0].value.set_index("elevator")
    assert four.loc["cfq", "p99.9 ms"] == pytest.approx(225, rel=0.05)
    assert four.loc["noop", "p99.9 ms"] < 10


def test_learn_open_loop_step_shows_the_queue():
    at = AppTest.from_function(_learn, default_timeout=240).run()
    at.selectbox(key="learn-walk").set_value("Micro-stalls hidden by averaging").run()
    radio = at.radio(key="learn-step-Micro-stalls hidden by averaging")
    radio.set_value(radio.options[4]).run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    # 3,500/s offered on the default scenario: served, but sync-flush pauses queue the arrivals.
    assert int(metrics["queue max"].replace(",", "")) > 100
    assert len(at.get("image")) == 2


def test_learn_start_up_step_says_where_the_start_ends():
    at = AppTest.from_function(_learn, default_timeout=240).run()
    at.selectbox(key="learn-walk").set_value("Buffer pool instances and sync flushing").run()
    radio = at.radio(key="learn-step-Buffer pool instances and sync flushing")
    radio.set_value(next(o for o in radio.options if "Start-up" in o)).run()
    assert not at.exception, at.exception
    # 120 s of the default scenario: its first crossing is over well before half the run.
    line = next(c.value for c in at.caption if c.value.startswith("Steady state: "))
    assert "s of the 120 s measured, each series within its band" in line
    # It settles after its first crossing (not at 0 s), so the steady state's own figures follow.
    figures = [c.value for c in at.caption if c.value.startswith("Steady-state figures, the last ")]
    assert len(figures) == 1 and "commits/s" in figures[0] and "s into the run on" in figures[0]


def test_learn_versions_walk_runs_each_version():
    at = AppTest.from_function(_learn, default_timeout=240).run()
    at.selectbox(key="learn-walk").set_value("One load on each server version").run()
    assert not at.exception, at.exception
    assert len(at.get("image")) == 3
    assert "time under sync flush (s)" in {m.label for m in at.metric}
    at.radio[0].set_value(at.radio[0].options[2]).run()          # MySQL 8.0
    assert not at.exception, at.exception
    assert "time under redo space wait (s)" in {m.label for m in at.metric}
    at.radio[0].set_value(at.radio[0].options[4]).run()          # MariaDB: the server's warnings shown
    assert not at.exception, at.exception
    assert any("innodb_buffer_pool_instances' was removed" in w.value for w in at.warning)


def test_learn_checksum_walk_shows_the_foreground_cost():
    at = AppTest.from_function(_learn, default_timeout=240).run()
    at.selectbox(key="learn-walk").set_value("Checksums in the foreground").run()
    assert not at.exception, at.exception
    assert len(at.get("image")) == 2

    def metrics():
        return {m.label: float(m.value.split()[0].replace(",", "").rstrip("%")) for m in at.metric}
    inno = metrics()
    assert inno["checksum time in user threads"] > 0.1          # ~7,500 pages/s x 31 us
    at.radio[0].set_value(at.radio[0].options[1]).run()          # checksums off
    assert not at.exception, at.exception
    off = metrics()
    assert off["checksum time in user threads"] == 0.0
    assert off["commits/s (mean)"] > 1.1 * inno["commits/s (mean)"]
    at.radio[0].set_value(at.radio[0].options[4]).run()          # tiny pool over the OS page cache
    assert not at.exception, at.exception
    cached = metrics()
    assert cached["served by the page cache"] == 100.0 and cached["checksum time in user threads"] > 1.0
    at.selectbox(key="learn-4-4-fm").set_value("O_DIRECT").run()
    assert not at.exception, at.exception
    direct = metrics()
    assert direct["served by the page cache"] == 0.0 and direct["commits/s (mean)"] < 0.5 * cached["commits/s (mean)"]


def test_calibrate_page_fits_a_server_trace():
    from trace_synth import samples_csv

    text, _ = samples_csv(str(Path(APP).parent / "scenarios" / "default.toml"),
                          ["run.duration=20s", "workload.cpu_per_txn=2.5ms"])
    at = AppTest.from_function(_calibrate, default_timeout=300).run()
    at.file_uploader(key="tr-files").set_value([("status.csv", text.encode(), "text/csv")]).run()
    at.multiselect(key="tr-fit").set_value(["workload.cpu_per_txn"])
    at.text_input(key="tr-warmup").set_value("4s")
    at.text_input(key="tr-duration").set_value("")
    at.button(key="tr-run").click().run()
    assert not at.exception, at.exception
    assert not at.error, at.error[0].value if at.error else ""
    fitted = at.dataframe[0].value
    assert fitted["parameter"].tolist() == ["workload.cpu_per_txn"]
    assert fitted["value"].iloc[0] == pytest.approx(2.5e-3, rel=0.03)
    assert len(at.get("image")) == 1
    assert "Fitted scenario" in [b.proto.label for b in at.get("download_button")]


def test_calibrate_page_trace_errors_show_the_message():
    at = AppTest.from_function(_calibrate, default_timeout=120).run()
    at.file_uploader(key="tr-files").set_value([("junk.csv", b"a,b\n1,2\n", "text/csv")]).run()
    at.button(key="tr-run").click().run()
    assert not at.exception
    assert at.error and "junk.csv" in at.error[0].value and "innosim-app-trace" not in at.error[0].value


# -- server versions ------------------------------------------------------------------------------

def test_what_if_runs_another_version_and_names_its_limits():
    at = _what_if_click({"duration": "15s", "version": "mysql-8.0.30"})
    assert not at.exception, at.exception
    assert any("MySQL 8.0.30+" in c.value and "free check capacity" in c.value for c in at.caption)
    # 8.0's log threads: their writes, fsyncs and spinning, as the CLI's summary says them.
    assert any(c.value.startswith("redo log threads (MySQL 8.0): ") and "innodb_log_writer_threads = ON" in c.value
               for c in at.caption)
    # The 5.6 log settings are mapped, with the server's deprecation message.
    assert any("innodb_redo_log_capacity" in w.value for w in at.warning)
    assert len(at.get("image")) == 8


def test_what_if_setting_a_version_lacks_shows_the_error():
    at = AppTest.from_function(_whatif, default_timeout=60).run()
    _set(at, "version", "mysql-5.6")
    at.selectbox[0].set_value("seed-dbt2-8inst-3g-mysql8030").run()
    _set(at, "version", "mysql-5.7")
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "innodb_redo_log_capacity" in at.error[0].value and "MySQL 5.7" in at.error[0].value


@pytest.mark.parametrize("stem", ["seed-dbt2-8inst-3g-mysql57", "seed-dbt2-8inst-3g-mysql8030", "seed-dbt2-3g-mariadb1011"])
def test_form_texts_round_trip_for_version_scenarios(stem):
    from sim.app.settings import apply, form_texts, load_shipped
    from sim.run_output import resolved_toml

    doc, scn = load_shipped(stem)
    texts = form_texts(scn)
    assert texts["server.version"] == scn.server.version
    same = apply(doc, "d", scn.name, [f"{k}={v}" for k, v in texts.items() if v])
    assert resolved_toml(same).split("\n", 1)[1] == resolved_toml(scn).split("\n", 1)[1]


def test_what_if_takes_a_pasted_my_cnf():
    at = AppTest.from_function(_whatif, default_timeout=300).run()
    [area] = [a for a in at.text_area if a.label == "my.cnf"]
    area.set_value("[mysqld]\ninnodb_io_capacity = 1500\ninnodb-flush-neighbors = 0\n!include /etc/passwd\n").run()
    assert not at.exception and not at.error
    infos = " ".join(i.value for i in at.info)
    assert "2 setting(s) simulated" in infos and "not followed (pasted text)" in infos
    [box] = [t for t in at.text_input if t.label == "innodb_io_capacity"]
    assert box.value == "1500"
    [area] = [a for a in at.text_area if a.label == "my.cnf"]
    area.set_value("[mysqld]\ninnodb_io_capacity = plenty\n").run()
    assert at.error and "pasted my.cnf line 2" in at.error[0].value


def test_what_if_takes_pasted_server_variables():
    at = AppTest.from_function(_whatif, default_timeout=300).run()
    [area] = [a for a in at.text_area if a.label == "server variables"]
    area.set_value("Variable_name\tValue\nversion\t8.0.36\ninnodb_io_capacity\t900\n").run()
    assert not at.exception and not at.error
    assert "MySQL 8.0.30+ (version 8.0.36)" in " ".join(i.value for i in at.info)
    [box] = [t for t in at.text_input if t.label == "version"]
    assert box.value == "8.0.36"                    # the release pasted, which runs as mysql-8.0.30
    [box] = [t for t in at.text_input if t.label == "innodb_io_capacity"]
    assert box.value == "900"


def test_compare_takes_a_pasted_my_cnf_on_one_side():
    # A: the default scenario as shipped; B: the same with a proposed my.cnf pasted.
    at = AppTest.from_function(_compare, default_timeout=180).run()
    areas = [a for a in at.text_area if a.label == "my.cnf"]
    assert len(areas) == 2
    areas[1].set_value("[mysqld]\ninnodb_io_capacity = 3000\n").run()
    assert not at.exception and not at.error
    caps = [t.value for t in at.text_input if t.label == "innodb_io_capacity"]
    assert caps == ["200", "3000"]


def test_calibrate_page_shows_the_cache_flush_of_an_fdatasync_job():
    from pathlib import Path

    from fio_synth import fio_run_set

    files = [(name, data, "application/json") for name, data in fio_run_set(depths=(1, 2, 4, 8, 16, 32))]
    sync = Path(__file__).resolve().parent.parent / "validation/live/fio-2026-11-29/fio/fdatasync-4k-qd1-nj1.json"
    files.append((sync.name, sync.read_bytes(), "application/json"))
    at = AppTest.from_function(_calibrate, default_timeout=180).run()
    at.file_uploader[0].set_value(files).run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert any("sync mean 64 us measured, 64 us on the profile; cache flush 29.0 us" in c.value for c in at.caption)
