"""Settling-band verdicts (sim/settling.py), without and with the engine."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.config import scenario_from_dict
from sim.engine import Server
from sim.metrics import series_frames, steady_figures, summary
from sim.run_output import summary_text
from sim.settling import (BAND_REL, BATCH, MIN_BATCHES, band_truncation, batch_means, noise_sd,
                          running_median3, settling, settling_text, steady_text)
from validation import flushing
from validation.common import RowResult, unsettled_notes


def test_flat_series_drops_nothing():
    t = band_truncation(np.full(300, 6667.0))
    assert (t.drop, t.limit, t.level) == (0, 150, 6667.0) and t.settled
    assert t.half_width == pytest.approx(BAND_REL * 6667.0)


def test_a_ramp_over_the_whole_run_leaves_its_band_after_the_first_half():
    t = band_truncation(np.linspace(0.0, 75.0, 300))
    assert t.drop > t.limit == 150 and not t.settled


def test_ramp_then_noise_is_cut_after_the_ramp_and_removes_its_bias():
    rng = np.random.default_rng(3)
    x = np.r_[np.linspace(0.0, 10.0, 60), np.full(240, 10.0)] + rng.normal(0.0, 0.5, 300)
    t = band_truncation(x)
    assert t.settled and 45 <= t.drop <= 60
    assert abs(x.mean() - 10.0) > 0.9 and abs(x[t.drop:].mean() - 10.0) < 0.1


def test_a_damped_swing_settles_where_it_stays_inside_five_per_cent():
    """The transient MSER-5 misread: a climb, an overshoot, then a swing that dies away. The end
    is where the swing's last excursion beyond 5 % of the level ends, and a longer run moves it
    only by the batch the last excursion falls in."""
    t_s = np.arange(1800.0)
    climb = np.minimum(t_s / 300.0, 1.0) * 64.0
    swing = np.where(t_s > 300, 50.0 + 14.0 * np.exp(-(t_s - 300) / 150.0) * np.cos((t_s - 300) / 250.0 * 2 * np.pi),
                     climb)
    ends = [band_truncation(swing[:n]) for n in (1200, 1500, 1800)]
    last_out = 300 + np.flatnonzero(np.abs(swing[300:] - 50.0) > 2.5)[-1]
    for t in ends:
        assert t.settled and abs(t.drop - last_out) <= 2 * BATCH
    assert not band_truncation(swing[:600]).settled


def test_stalls_are_not_a_start_up_transient():
    x = np.full(600, 5500.0)
    x[500] = 0.0
    assert band_truncation(x).drop == 0
    x[500:503] = 0.0                    # three seconds: still one batch mean below the band
    assert band_truncation(x).drop == 0
    x[495:510] = 0.0                    # a 15 s stall late in the run widens the band (noise), it is no start-up
    t = band_truncation(x)
    assert t.settled and t.drop == 0 and t.half_width > 0.5 * t.level


def test_noise_widens_the_band_past_five_per_cent():
    rng = np.random.default_rng(5)
    x = 1000.0 * (1.0 + 0.3 * rng.standard_normal(600))
    t = band_truncation(x)
    assert t.settled and t.half_width > 0.1 * t.level


def test_too_short_or_not_finite():
    assert band_truncation(np.ones(MIN_BATCHES * BATCH - 1)) is None
    t = band_truncation(np.r_[np.full(10, np.nan), np.ones(40)])
    assert (t.drop, t.limit) == (0, 20)          # the NaNs are left out before batching


def test_running_median_and_noise_are_plain_functions():
    assert list(running_median3(np.array([1.0, 9.0, 1.0, 1.0]))) == [1.0, 1.0, 1.0, 1.0]
    assert noise_sd(np.arange(40.0)) == pytest.approx(0.0, abs=1e-9)   # a straight line has no noise


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4), min_size=40, max_size=200),
       st.floats(0.01, 100.0), st.floats(-1e5, 1e5))
def test_truncation_does_not_depend_on_units(values, scale, offset):
    """A change of unit scales level and band alike and leaves the cut alone; a shift of origin
    leaves the cut alone whenever the noise, not the level, sets the band."""
    x = np.array(values)
    a = band_truncation(x)
    assert a.drop % BATCH == 0 and 0 <= a.drop <= len(x) // BATCH * BATCH
    assert a.limit == (len(x) // BATCH // 2) * BATCH
    b = band_truncation(x * scale)
    assert b.level == pytest.approx(a.level * scale, rel=1e-9, abs=1e-6)
    assert b.half_width == pytest.approx(a.half_width * scale, rel=1e-6, abs=1e-6)
    z = running_median3(batch_means(x, BATCH))
    margin = np.abs(np.abs(z - a.level) - a.half_width)
    if margin.min() > 1e-6 * max(1.0, float(np.abs(x).max())):    # no batch mean on the band's edge
        assert b.drop == a.drop
        if a.half_width > BAND_REL * (abs(a.level) + abs(offset)):
            assert band_truncation(x + offset).drop == a.drop


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
    assert settling_text(s).startswith("steady state: from 0 s of the 300 s measured, each series within its band")
    assert "modified age 60.0% ±3.0 from 0 s, pages flushed 1,000/s ±50 from 0 s" in settling_text(s)

    rising = np.linspace(1000.0, 2000.0, n)
    s = settling(_frame(np.full(n, 60.0), rising, flat), 1.0).as_dict()
    assert s["settled"] is False and s["transient_ends_s"] is None
    assert s["series"]["pages_flushed"]["first_half_mean"] < s["series"]["pages_flushed"]["second_half_mean"]
    text = settling_text(s)
    assert text.startswith("steady state: not reached: pages flushed (1,751/s ±88) leaves its band after the "
                           "first half of the 300 s measured (±5% band, 5 s means; last at 300 s)")
    assert "1,249/s -> 1,751/s" in text and "run.warmup" in text
    assert "lengthen run.duration to at least 600 s (twice the last time a series left its band" in text
    assert text.endswith("skip the start with run.warmup (at least 300 s more than now)")
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
    steady = s["steady"]
    assert (steady is None) == (not st_["settled"])
    if steady is not None:
        assert steady["from_s"] == 4 + st_["transient_ends_s"] and steady["seconds"] == 30 - st_["transient_ends_s"]
        assert (steady_text(steady, st_) in summary_text(s)) and json.dumps(steady, allow_nan=False)


def test_validation_names_the_unsettled_run_of_a_failing_row():
    row = flushing.Row("r", "w", "a", "b", "tps_mean", "greater", None, 0.0, 0.0, "")
    n = 300
    unsettled = settling(_frame(np.full(n, 60.0), np.linspace(1000.0, 2000.0, n), np.full(n, 5.0)), 1.0).as_dict()
    settled = settling(_frame(np.full(n, 60.0), np.full(n, 9.0), np.full(n, 5.0)), 1.0).as_dict()
    runs = {"a": {"settling": unsettled}, "b": {"settling": settled}}
    failing = RowResult(row, None, 1.0, None, False)
    notes = unsettled_notes([failing], runs)
    assert len(notes) == 1 and notes[0].startswith("not settled: a: pages flushed (1,751/s ±88) leaves its band")
    assert unsettled_notes([RowResult(row, None, 1.0, None, True)], runs) == []


def _steady_frame(n=300, step_at=100, warmup_s=0):
    t = np.arange(1, n + 1, dtype=float)
    after = t > warmup_s + step_at
    return pd.DataFrame({"time_s": t, "warmup": t <= warmup_s,
                         "tps": np.where(after, 2000.0, 1000.0), "pages_flushed": np.where(after, 500.0, 100.0),
                         "modified_age_pct": np.where(after, 60.0, t / max(1, warmup_s + step_at) * 60.0),
                         "checkpoint_age_pct": np.where(after, 62.0, 30.0),
                         "buffer_flush_sync_waits": np.where(t == n, 7, np.where(after, 0, 50))})


def test_steady_figures_are_read_from_the_end_of_the_transient():
    f = _steady_frame(warmup_s=20)
    m = f[~f["warmup"]]
    s = settling(f, 1.0).as_dict()
    assert s["settled"] and s["transient_ends_s"] == 100
    st_ = steady_figures(m, m, s, 20.0)
    assert st_["from_s"] == 120 and st_["seconds"] == 180
    assert st_["tps_mean"] == 2000 and st_["pages_flushed_per_s_total"] == 500
    assert st_["modified_age_mean_pct"] == 60 and st_["checkpoint_age_max_pct"] == 62
    assert st_["buffer_flush_sync_waits"] == 7 and st_["buffer_flush_sync_waits_max_per_s"] == 7
    line = steady_text(st_, s)
    assert line.startswith("steady-state figures, the last 180 s (120 s into the run on): 2,000 commits/s")
    assert "500 pages flushed/s" in line and "buffer_flush_sync_waits 7 (max 7/s)" in line
    # Settled from the start: the headline figures are the steady state's, and no second line is printed.
    flat = _steady_frame(step_at=0)
    s0 = settling(flat, 1.0).as_dict()
    assert s0["transient_ends_s"] == 0 and steady_text(steady_figures(flat, flat, s0, 0.0), s0) == ""
    # Not settled (the step comes after half the run), or too short to say: no steady-state figures.
    late = _steady_frame(step_at=200)
    s1 = settling(late, 1.0).as_dict()
    assert s1["settled"] is False and steady_figures(late, late, s1, 0.0) is None
    assert steady_figures(late, late, None, 0.0) is None and steady_text(None, s1) == ""
