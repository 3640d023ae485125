"""MSER-5 settling verdicts (sim/settling.py), without and with the engine."""

import json

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.config import scenario_from_dict
from sim.engine import Server
from sim.metrics import series_frames, summary
from sim.run_output import summary_text
from sim.settling import BATCH, is_settled, mser_truncation, settling, settling_text
from validation import flushing
from validation.common import RowResult, unsettled_notes


def test_flat_series_drops_nothing():
    assert mser_truncation(np.full(300, 6667.0)) == (0, 150)
    assert is_settled((0, 150))


def test_a_ramp_over_the_whole_run_has_no_end_in_its_first_half():
    drop, limit = mser_truncation(np.linspace(0.0, 75.0, 300))
    assert drop == limit == 150
    assert not is_settled((drop, limit))


def test_ramp_then_noise_is_cut_after_the_ramp_and_removes_its_bias():
    rng = np.random.default_rng(3)
    x = np.r_[np.linspace(0.0, 10.0, 60), np.full(240, 10.0)] + rng.normal(0.0, 0.5, 300)
    drop, limit = mser_truncation(x)
    assert 50 <= drop < limit
    assert abs(x.mean() - 10.0) > 0.9 and abs(x[drop:].mean() - 10.0) < 0.1


def test_too_short_or_not_finite():
    assert mser_truncation(np.ones(19)) is None
    x = np.r_[np.full(10, np.nan), np.ones(40)]
    assert mser_truncation(x) == (0, 20)          # the NaNs are left out before batching


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4), min_size=20, max_size=200),
       st.floats(0.01, 100.0), st.floats(-1e5, 1e5))
def test_truncation_does_not_depend_on_units_or_offset(values, scale, offset):
    """MSER compares spreads of the same series: a change of unit or origin leaves its cut alone."""
    x = np.array(values)
    a = mser_truncation(x)
    b = mser_truncation(x * scale + offset)
    drop, limit = a
    assert drop % BATCH == 0 and 0 <= drop <= limit == (len(x) // BATCH // 2) * BATCH
    # Exact ties between truncation points can resolve differently after rounding; compare statistics.
    assert b[1] == limit
    if a != b:
        z = x[: len(x) // BATCH * BATCH].reshape(-1, BATCH).mean(axis=1)
        tails = [z[d // BATCH:] for d in (a[0], b[0])]
        stats = [((t - t.mean()) ** 2).sum() / len(t) ** 2 for t in tails]
        assert np.isclose(stats[0], stats[1], rtol=1e-6, atol=1e-9 * max(1.0, float(np.abs(z).max())) ** 2)


def _frame(age, flushed, tps, warmup_s=0):
    n = len(age)
    t = np.arange(1, n + 1, dtype=float)
    return pd.DataFrame({"time_s": t, "modified_age_pct": age, "pages_flushed": flushed, "tps": tps,
                         "warmup": t <= warmup_s})


def test_verdict_and_its_line():
    n = 300
    flat = np.full(n, 1000.0)
    s = settling(_frame(np.full(n, 60.0), flat, flat), 1.0).as_dict()
    assert s["settled"] is True and s["transient_ends_s"] == 0
    assert "ends the start-up transient 0 s into the 300 s measured" in settling_text(s)

    rising = np.linspace(1000.0, 2000.0, n)
    s = settling(_frame(np.full(n, 60.0), rising, flat), 1.0).as_dict()
    assert s["settled"] is False and s["transient_ends_s"] is None
    assert s["series"]["pages_flushed"]["first_half_mean"] < s["series"]["pages_flushed"]["second_half_mean"]
    text = settling_text(s)
    assert text.startswith("steady state: not reached: pages flushed shows no end")
    assert "1,249/s -> 1,751/s" in text and "run.warmup" in text
    json.dumps(s, allow_nan=False)

    # The warm-up is not judged: the ramp before it does not count.
    age = np.r_[np.linspace(0.0, 60.0, 100), np.full(200, 60.0)]
    assert settling(_frame(age, flat, flat, warmup_s=100), 1.0).as_dict()["settled"] is True
    assert settling(_frame(age, flat, flat), 1.0).as_dict()["series"]["modified_age_pct"]["transient_ends_s"] >= 90

    s = settling(_frame(np.ones(10), np.ones(10), np.ones(10)), 1.0).as_dict()
    assert s["settled"] is None and settling_text(s) == ""


def test_engine_summary_carries_the_verdict():
    doc = {"server": {"innodb_buffer_pool_size": "24M", "innodb_log_file_size": "1M", "innodb_flush_method": "O_DIRECT"},
           "hardware": {"device": "seed-12core-disks-2012", "cpu_cores": 4},
           "workload": {"kind": "oltp", "data_size": "48M", "users": 8}, "run": {"duration": "30s", "warmup": "4s"}}
    res = Server(scenario_from_dict(doc, "t")).run()
    frames = series_frames(res)
    s = summary(res, frames)
    st_ = s["settling"]
    assert st_["measured_s"] == 30 and set(st_["series"]) == {"modified_age_pct", "pages_flushed", "tps"}
    assert st_["settled"] in (True, False)
    line = settling_text(st_)
    assert line.startswith("steady state: ") and line in summary_text(s)


def test_validation_names_the_unsettled_run_of_a_failing_row():
    row = flushing.Row("r", "w", "a", "b", "tps_mean", "greater", None, 0.0, 0.0, "")
    n = 300
    unsettled = settling(_frame(np.full(n, 60.0), np.linspace(1000.0, 2000.0, n), np.full(n, 5.0)), 1.0).as_dict()
    settled = settling(_frame(np.full(n, 60.0), np.full(n, 9.0), np.full(n, 5.0)), 1.0).as_dict()
    runs = {"a": {"settling": unsettled}, "b": {"settling": settled}}
    failing = RowResult(row, None, 1.0, None, False)
    notes = unsettled_notes([failing], runs)
    assert len(notes) == 1 and notes[0].startswith("not settled: a: pages flushed shows no end")
    assert unsettled_notes([RowResult(row, None, 1.0, None, True)], runs) == []
