"""sim.swing: the period of a slow throughput swing and the flush list's residence time."""

import numpy as np
from hypothesis import given, settings, strategies as st

from sim.config import scenario_from_dict
from sim.engine import Server
from sim.metrics import series_frames, summary
from sim.run_output import summary_text
from sim.swing import dominant_period, residence_times_s, swing, swing_sentence, swing_text


def _wave(period_s, duration_s=1200.0, dt=10.0, noise=0.0, seed=0, level=5000.0, depth=1500.0):
    t = np.arange(dt, duration_s + dt / 2, dt)
    rng = np.random.default_rng(seed)
    return t, level + depth * np.cos(2 * np.pi * t / period_s) + noise * rng.standard_normal(len(t))


def test_period_of_a_noisy_wave():
    _, x = _wave(360.0, noise=300.0)
    period, acf = dominant_period(x, 10.0)
    assert 350.0 <= period <= 370.0
    assert acf > 0.5


def test_no_period_in_noise_or_a_flat_line():
    rng = np.random.default_rng(3)
    assert dominant_period(5000 + 500 * rng.standard_normal(120), 10.0) is None
    assert dominant_period(np.full(120, 5000.0), 10.0) is None


def test_no_period_with_fewer_than_two_cycles():
    _, x = _wave(400.0, duration_s=600.0)
    assert dominant_period(x, 10.0) is None


def test_a_trend_is_not_a_period():
    assert dominant_period(np.linspace(3000, 6000, 120), 10.0) is None


@settings(max_examples=60, deadline=None)
@given(period=st.integers(min_value=6, max_value=40), phase=st.floats(0, 2 * np.pi), n=st.integers(90, 160))
def test_a_clean_wave_gives_its_period(period, phase, n):
    x = np.cos(2 * np.pi * np.arange(n) / period + phase)
    if n // 2 <= period:
        return
    found = dominant_period(x, 1.0)
    assert found is not None and abs(found[0] - period) <= 1.0


def test_residence_time_of_a_steady_flush_list():
    t = np.arange(0.0, 1200.0, 1.0)
    rate = 20e6
    lsn = rate * t
    oldest = np.maximum(0.0, rate * (t - 300.0))      # the tail trails the head by 300 s of redo
    res = residence_times_s(t, lsn, oldest)
    assert len(res) == 900                              # the last 300 s are not reached in the series
    assert np.allclose(res, 300.0)


def test_residence_ignores_a_tail_that_steps_back():
    t = np.arange(0.0, 10.0, 1.0)
    lsn = 100.0 * t
    oldest = np.array([0, 0, 50, 40, 200, 300, 400, 500, 600, 700], dtype=float)
    res = residence_times_s(t, lsn, oldest)
    assert np.all(res >= 0)


def test_swing_paced_by_the_flush_list():
    t10, tps = _wave(360.0, noise=200.0)
    t1 = np.arange(1.0, 1201.0)
    lsn = 17e6 * t1
    oldest = 17e6 * (t1 - 355.0)
    s = swing(tps, 10.0, t1, lsn, oldest)
    assert s is not None and s["paced_by_flush_list"]
    assert 350 <= s["period_s"] <= 370 and abs(s["residence_s"] - 355.0) < 1.0
    assert "echo" in swing_text(s)
    assert swing_sentence(s).startswith("Throughput swing") and swing_sentence(s).endswith(".")


def test_swing_not_paced_when_the_residence_differs():
    _, tps = _wave(360.0, noise=200.0)
    t1 = np.arange(1.0, 1201.0)
    s = swing(tps, 10.0, t1, 17e6 * t1, 17e6 * (t1 - 100.0))
    assert s is not None and not s["paced_by_flush_list"]
    assert "does not pace" in swing_text(s)


def test_no_swing_line_for_a_steady_run():
    _, tps = _wave(360.0, depth=100.0)          # 10 s averages within 2% of the median
    t1 = np.arange(1.0, 1201.0)
    assert swing(tps, 10.0, t1, t1, t1 - 1) is None
    assert swing_text(None) == "" and swing_sentence(None) == ""


def test_run_summary_carries_the_verdict_and_prints_its_line():
    doc = {"server": {"innodb_buffer_pool_size": "24M", "innodb_log_file_size": "1M", "innodb_flush_method": "O_DIRECT"},
           "hardware": {"device": "seed-12core-disks-2012", "cpu_cores": 4},
           "workload": {"kind": "oltp", "data_size": "48M", "users": 8}, "run": {"duration": "30s"}}
    res = Server(scenario_from_dict(doc, "t")).run()
    s = summary(res, series_frames(res))
    assert "swing" in s                       # 3 samples at 10 s: too few for a period
    assert s["swing"] is None and "throughput swing" not in summary_text(s)
    _, tps = _wave(360.0, noise=200.0)
    t1 = np.arange(1.0, 1201.0)
    s["swing"] = swing(tps, 10.0, t1, 17e6 * t1, 17e6 * (t1 - 355.0))
    assert swing_text(s["swing"]) in summary_text(s)
