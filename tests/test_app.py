"""The Streamlit page loads, runs, and shows an error instead of a traceback on bad input."""

from pathlib import Path

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_app_runs_default_and_shows_results():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    at.button[0].click().run()
    assert not at.exception
    assert len(at.dataframe) == 1
    df = at.dataframe[0].value
    assert set(df["fs"]) == {"ext4", "xfs"}
    assert len(df) == 10


def test_app_bad_mount_option_shows_error():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.text_input[0].set_value("noatime,turbo").run()
    at.button[0].click().run()
    assert not at.exception
    assert at.error and "turbo" in at.error[0].value
