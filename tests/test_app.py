"""The Streamlit app: each page loads, a run completes and shows its figures and numbers, and bad
input shows an error instead of a traceback (streamlit.testing AppTest)."""

from pathlib import Path

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _whatif():
    from sim.app import whatif

    whatif.render()


def _iobench():
    from sim.app import iobench_page

    iobench_page.render()


def _set(at, label, value):
    [box] = [t for t in at.text_input if t.label == label]
    box.set_value(value)


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
    assert len(at.get("image")) == 7              # throughput, latency, checkpoint age, pages, flushing, waits, I/O
    assert len(at.get("download_button")) == 14    # a PNG and a CSV for each
    assert any("Stalls at 1 s" in m.value for m in at.markdown)
    # A stall table with its causes (128M of redo for this load stalls in sync flushing).
    assert at.dataframe and "sync flush" in set(at.dataframe[0].value["cause"])
    # Another resolution redraws from the same run.
    at.select_slider[0].set_value("100 ms").run()
    assert not at.exception
    assert any("Stalls at 100 ms" in m.value for m in at.markdown)


def test_what_if_bad_setting_shows_the_error():
    at = AppTest.from_function(_whatif, default_timeout=60).run()
    _set(at, "innodb_io_capacity_max", "50")
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "innodb_io_capacity_max" in at.error[0].value
    assert not at.metric


def test_what_if_refused_setting_shows_the_servers_reason():
    at = AppTest.from_function(_whatif, default_timeout=60).run()
    _set(at, "innodb_log_file_size", "1M")
    _set(at, "innodb_thread_concurrency", "100")
    at.button[0].click().run()
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
