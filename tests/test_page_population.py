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


# -- sysbench oltp_read_write (access = "sysbench") -------------------------------------------------

def _sb_rand_special(rng, n_values, size, pct=1.0, res=75.0, iters=12):
    """sysbench 1.0.20's sb_rand_special(1, n_values), restated: one uniform picks the branch; the
    gaussian branch is the mean of `iters` uniforms stretched over the range, the other a uniform
    over the central pct % band, entered at the same uniform's position."""
    t = n_values - 1
    rnd = rng.random(size)
    gauss = rnd * t * (100.0 / (100.0 - res)) < t
    mean = rng.random((size, iters)).mean(axis=1)
    d = t * pct / 100.0
    special = rnd * (d + 1.0) + t / 2.0 - t * pct / 200.0
    return 1 + np.floor(np.where(gauss, mean * t, special)).astype(np.int64)


def test_irwin_hall_cdf_edges_symmetry_and_sampling():
    from models.page_population import irwin_hall_cdf
    assert np.allclose(irwin_hall_cdf(np.array([0.0, 0.3, 1.0]), 1), [0.0, 0.3, 1.0])
    x = np.linspace(0, 12, 97)
    cdf = irwin_hall_cdf(x, 12)
    assert cdf[0] == 0.0 and cdf[-1] == 1.0 and np.all(np.diff(cdf) >= 0)
    assert np.allclose(cdf + irwin_hall_cdf(12 - x, 12), 1.0, atol=1e-12)
    sums = np.random.default_rng(3).random((200_000, 12)).sum(axis=1)
    assert np.max(np.abs(np.searchsorted(np.sort(sums), x) / len(sums) - cdf)) < 0.005


@pytest.mark.parametrize("n_values", [400_000, 10_000])
def test_special_cdf_matches_sysbench_draws(n_values):
    from models.page_population import special_cdf
    draws = _sb_rand_special(np.random.default_rng(7), n_values, 400_000)
    edges = np.linspace(0, n_values, 401)
    empirical = np.searchsorted(np.sort(draws - 1), edges, side="left") / len(draws)
    assert np.max(np.abs(empirical - special_cdf(edges, n_values))) < 0.005
    # Three quarters of the values fall in the central 1 % band.
    band = special_cdf(np.array([0.495 * n_values, 0.505 * n_values + 1]), n_values)
    assert band[1] - band[0] > 0.75


def test_sysbench_page_weights_layout_and_shares():
    from models.page_population import (SBTEST_K_ENTRY_BYTES, SBTEST_ROW_BYTES, SYSBENCH_K_MODS,
                                        SYSBENCH_PK_MODS, sysbench_layout, sysbench_page_weights)
    pk, kp = sysbench_layout(8, 400_000)
    assert (pk, kp) == (-(-400_000 // rows_per_page(SBTEST_ROW_BYTES)), -(-400_000 // rows_per_page(SBTEST_K_ENTRY_BYTES)))
    assert kp < pk / 10                                # 8-byte entries against 188-byte rows
    n_pages = 8 * 5960
    read, modify = sysbench_page_weights(8, 400_000, n_pages)
    assert read.sum() == pytest.approx(1.0) and modify.sum() == pytest.approx(1.0)
    per = n_pages // 8
    for t in range(8):
        base = t * per
        # Reads only on clustered leaves, peaked at the middle of the table.
        assert read[base + pk: base + per].sum() == 0.0
        mid = base + pk // 2
        assert read[mid] > 100 * read[base] and read[mid] > 100 * read[base + pk - 1]
        # Modifications: the k index's leaves alike, with their share of the transaction's changes.
        k = modify[base + pk: base + pk + kp]
        assert np.allclose(k, k[0])
        assert k.sum() == pytest.approx(SYSBENCH_K_MODS / (SYSBENCH_PK_MODS + SYSBENCH_K_MODS) / 8)
    with pytest.raises(ValueError, match="leaf pages"):
        sysbench_page_weights(8, 400_000, 8 * (pk + kp) - 1)


def test_sysbench_access_in_a_scenario():
    from models.page_population import sysbench_layout
    doc = {"hardware": {"device": "fusionio-2012"},
           "workload": {"kind": "oltp", "profile": "sysbench", "access": "sysbench", "tables": 2,
                        "table_size": 10_000}}
    scn = scenario_from_dict(doc, "t")
    pk, kp = sysbench_layout(2, 10_000)
    assert scn.workload.data_bytes == 2 * (pk + kp) * 16384          # the leaf pages, when data_size is left out
    bad = [({"tables": None}, "workload.access"),
           ({"hot_data_pct": 2.0}, "workload.hot_data_pct"),
           ({"warehouses": 10}, "workload.warehouses"),
           ({"data_size": "1M"}, "workload.data_size")]
    for change, field in bad:
        wl = {k: v for k, v in {**doc["workload"], **change}.items() if v is not None}
        with pytest.raises(InputError) as e:
            scenario_from_dict({**doc, "workload": wl}, "t")
        assert e.value.field == field
    with pytest.raises(InputError) as e:
        scenario_from_dict({**doc, "workload": {"kind": "oltp", "profile": "sysbench", "tables": 2}}, "t")
    assert e.value.field == "workload.tables"
