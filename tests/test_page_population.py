"""models.page_population (NURand, TPC-C's page rates, the steady flush rate) and the tpcc sampler."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from models.oltp import PageSampler, WeightedPageSampler
from models.page_population import (nurand_pmf, per_page, rows_per_page, steady_flush_rate, tpcc_page_weights,
                                    tpcc_rates, two_tier_rates)
from sim.config import scenario_from_dict
from sim.errors import InputError


def _nurand_by_enumeration(a, x, y, c):
    n = y - x + 1
    counts = np.zeros(n)
    for r1 in range(a + 1):
        for r2 in range(x, y + 1):
            counts[((r1 | r2) + c) % n] += 1
    return counts / counts.sum()


@pytest.mark.parametrize("a,x,y,c", [(15, 1, 100, 0), (15, 1, 100, 7), (31, 0, 999, 123), (7, 5, 17, 3)])
def test_nurand_pmf_is_exact(a, x, y, c):
    assert np.allclose(nurand_pmf(a, x, y, c), _nurand_by_enumeration(a, x, y, c), atol=1e-15)


def test_nurand_pmf_refuses_an_a_that_is_not_all_ones():
    with pytest.raises(ValueError):
        nurand_pmf(1000, 1, 3000)


def test_nurand_of_tpcc_is_skewed_and_sums_to_one():
    p = nurand_pmf(8191, 1, 100000)
    assert abs(p.sum() - 1.0) < 1e-12 and len(p) == 100000
    q = np.sort(per_page(p, rows_per_page(306)))[::-1]
    assert q[: len(q) // 20].sum() > 0.3          # the hottest 5 % of stock pages: over 30 % of the updates
    assert q[-1] < 0.1 * q.mean()                 # and some pages are rarely touched


def test_per_page_keeps_the_total_and_pads_the_last_page():
    p = np.full(10, 0.1)
    q = per_page(p, 4)
    assert np.allclose(q, [0.4, 0.4, 0.2])


def test_rows_per_page_from_the_row_sizes():
    assert rows_per_page(306) == 47 and rows_per_page(655) == 22
    assert rows_per_page(306, 4096) < rows_per_page(306) / 3


def test_tpcc_rates_count_the_mix():
    rates, appended = tpcc_rates(50, 1000.0)
    # stock 0.45 x 10 + customer 0.43 + 0.04 x 10 + district 0.45 + 0.43 (not delivery) + warehouse 0.43
    assert rates.sum() == pytest.approx(1000.0 * 6.64)
    assert 0.02 < appended / 1000.0 < 0.03


def test_steady_flush_rate_limits():
    lam = np.array([100.0, 1e-9, 0.0])
    assert steady_flush_rate(10.0, lam) == pytest.approx(1 / (10 + 0.01), rel=1e-6)   # hot: once a residence
    assert steady_flush_rate(0.0, np.array([2.0, 3.0]), 5.0) == pytest.approx(10.0)   # W = 0: every change
    assert steady_flush_rate(100.0, np.array([1.0]), 0.0) < steady_flush_rate(50.0, np.array([1.0]), 0.0)


@settings(max_examples=30, deadline=None)
@given(hot=st.floats(0.5, 50.0), acc=st.floats(50.0, 99.0), w=st.floats(1.0, 1000.0))
def test_two_tier_rates_carry_the_total(hot, acc, w):
    r = two_tier_rates(10_000, hot, acc, 500.0)
    assert r.sum() == pytest.approx(500.0)
    assert 0 < steady_flush_rate(w, r) <= 500.0


def test_tpcc_page_weights_layout_and_fit():
    w = tpcc_page_weights(2, 12_800)
    n_stock = 2 * len(per_page(np.ones(100000), 47))
    assert w.sum() == pytest.approx(1.0)
    assert np.all(w[: n_stock] > 0) and np.all(w[n_stock + 2 * 10 * 137 + 2:] == 0)
    with pytest.raises(ValueError):
        tpcc_page_weights(2, 1000)


def test_weighted_sampler_draws_in_proportion_and_never_a_zero_page():
    w = np.array([0.0, 1.0, 3.0, 0.0, 6.0, 0.0])
    s = WeightedPageSampler(w, np.random.default_rng(5), block=10_000)
    pages = np.concatenate([s.draw(7_000) for _ in range(30)])
    freq = np.bincount(pages, minlength=6) / len(pages)
    assert freq[0] == freq[3] == freq[5] == 0
    assert np.allclose(freq[[1, 2, 4]], [0.1, 0.3, 0.6], atol=0.01)
    assert s.most_popular(2).tolist() == [4, 2]
    with pytest.raises(ValueError):
        WeightedPageSampler(np.zeros(4), np.random.default_rng(1))


def test_same_seed_same_pages():
    w = tpcc_page_weights(3, 19_200)
    a = WeightedPageSampler(w, np.random.default_rng(9)).draw(5000)
    b = WeightedPageSampler(w, np.random.default_rng(9)).draw(5000)
    assert np.array_equal(a, b)


def _doc(**wl):
    return {"server": {"innodb_buffer_pool_size": "64M"}, "hardware": {"device": "fusionio-2012"},
            "workload": {"kind": "oltp", **wl}, "run": {"duration": "2s"}}


def test_config_access_tpcc_needs_warehouses_and_refuses_the_two_tier_keys():
    scn = scenario_from_dict(_doc(warehouses=2, access="tpcc"), "t")
    assert scn.workload.access == "tpcc"
    assert scenario_from_dict(_doc(warehouses=2), "t").workload.access == "two-tier"
    with pytest.raises(InputError, match="warehouses"):
        scenario_from_dict(_doc(data_size="200M", access="tpcc"), "t")
    with pytest.raises(InputError, match="two-tier"):
        scenario_from_dict(_doc(warehouses=2, access="tpcc", hot_data_pct=5), "t")
    with pytest.raises(InputError):
        scenario_from_dict(_doc(warehouses=2, access="zipf"), "t")


def test_engine_runs_with_the_tpcc_population():
    from sim.engine import Server
    res = Server(scenario_from_dict(_doc(warehouses=2, access="tpcc", users=4), "t")).run()
    assert res.counters[-1].sum() > 0
    assert isinstance(Server(scenario_from_dict(_doc(warehouses=2, users=4), "t")).sampler, PageSampler)


def test_resolved_scenario_of_a_tpcc_population_runs_again(tmp_path):
    from sim.config import read_scenario_doc
    from sim.run_output import resolved_toml

    scn = scenario_from_dict(_doc(warehouses=3, access="tpcc"), "t")
    text = resolved_toml(scn)
    assert "warehouses = 3" in text and "hot_data_pct" not in text and "data_size" not in text
    p = tmp_path / "r.toml"
    p.write_text(text)
    again = scenario_from_dict(read_scenario_doc(p), str(p))
    assert again.workload == scn.workload
