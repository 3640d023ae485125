"""The plain formulas, without SimPy."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models import queueing as q


def test_littles_law():
    assert q.littles_law_population(10_000, 0.002) == pytest.approx(20.0)


def test_closed_loop_bounds():
    # Below the knee N / (R0 + Z), above it the capacity.
    assert q.closed_loop_throughput_bound(1, 100e-6, 0.0, 100_000) == pytest.approx(10_000)
    assert q.closed_loop_throughput_bound(64, 100e-6, 0.0, 100_000) == pytest.approx(100_000)
    assert q.closed_loop_throughput_bound(0, 100e-6, 0.0, 100_000) == 0.0
    assert q.closed_loop_response_bound(64, 100e-6, 0.0, 100_000) == pytest.approx(640e-6)
    assert q.closed_loop_response_bound(1, 100e-6, 0.0, 100_000) == pytest.approx(100e-6)


def test_lock_handoff_grows_then_caps():
    # fs-device.md 5.2: s0 = 5 us, s1 = 4.6 us, n_max = 15 -> 74 us at the cap.
    assert q.lock_handoff_s(5e-6, 4.6e-6, 0, 15) == pytest.approx(5e-6)
    assert q.lock_handoff_s(5e-6, 4.6e-6, 3, 15) == pytest.approx(18.8e-6)
    assert q.lock_handoff_s(5e-6, 4.6e-6, 15, 15) == pytest.approx(74e-6)
    assert q.lock_handoff_s(5e-6, 4.6e-6, 200, 15) == pytest.approx(74e-6)
    with pytest.raises(ValueError):
        q.lock_handoff_s(5e-6, 4.6e-6, -1, 15)


def test_mix_multiplier_reproduces_measured_mixed_capacity():
    # Seed raw maxima: 4K r 100K, w 100K, 50/50 78K; 16K r 35K, w 60K, 50/50 60K.
    for r, w, mix in ((100_000, 100_000, 78_000), (35_000, 60_000, 60_000)):
        m50 = q.mix_multiplier_at_half(r, w, mix)
        assert q.mixed_capacity_iops(0.5, r, w, m50) == pytest.approx(mix)
        assert q.mixed_capacity_iops(1.0, r, w, m50) == pytest.approx(r)
        assert q.mixed_capacity_iops(0.0, r, w, m50) == pytest.approx(w)


@given(st.floats(0, 1), st.floats(0.2, 3.0))
def test_mix_multiplier_bounded_by_endpoints(p, m50):
    m = q.mix_multiplier(p, m50)
    assert min(1.0, m50) - 1e-12 <= m <= max(1.0, m50) + 1e-12


@given(st.floats(-1.0, 0.0) | st.floats(1.0, 2.0), st.floats(0.2, 3.0))
def test_mix_multiplier_of_a_pure_stream_is_exactly_one(p, m50):
    # models.device skips the call when the read share is outside (0, 1): the same bits either way.
    assert q.mix_multiplier(p, m50) == 1.0


def test_depth_factor_curve():
    curve = [[64, 1.0], [128, 0.8], [256, 0.8]]
    assert q.depth_factor(1, curve) == 1.0
    assert q.depth_factor(64, curve) == 1.0
    assert q.depth_factor(128, curve) == pytest.approx(0.8)
    assert q.depth_factor(1000, curve) == pytest.approx(0.8)
    assert q.depth_factor(int(64 * math.sqrt(2)), curve) == pytest.approx(0.9, abs=0.01)
    assert q.depth_factor(5, []) == 1.0


def test_interpolate_log2_hits_points_and_is_monotone_between():
    pts = [(4096, 100_000.0), (16384, 35_000.0)]
    assert q.interpolate_log2(4096, pts) == pytest.approx(100_000)
    assert q.interpolate_log2(16384, pts) == pytest.approx(35_000)
    mid = q.interpolate_log2(8192, pts)
    assert 35_000 < mid < 100_000
    assert mid == pytest.approx(math.sqrt(100_000 * 35_000))
    assert q.interpolate_log2(8192, [(4096, 5.0)]) == 5.0


def test_erlang_c_known_values():
    # M/M/1: P_wait = rho; M/M/2 with a = 1: P_wait = 1/3.
    assert q.erlang_c_wait_probability(1, 0.5) == pytest.approx(0.5)
    assert q.erlang_c_wait_probability(2, 1.0) == pytest.approx(1 / 3)
    assert q.erlang_c_wait_probability(2, 2.0) == 1.0
    assert q.mmk_response_s(1, 1.0, 0.5) == pytest.approx(2.0)
    assert q.mmk_response_s(1, 1.0, 1.0) == math.inf


def test_percentile_nearest_rank():
    vals = list(range(1, 101))
    assert q.percentile(vals, 50) == 50
    assert q.percentile(vals, 99) == 99
    assert q.percentile(vals, 100) == 100
    assert math.isnan(q.percentile([], 50))
