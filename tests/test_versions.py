"""Server versions: the worked threshold numbers, defaults and refusals, each version's flushing
arithmetic, and the engine's invariants under every version."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from models.adaptive_flushing import (AdaptiveState57, averages_57, log_sync_flush_lsn_80, pct_for_dirty_57,
                                      recommendation_57, recommendation_mariadb)
from models.errors import InputError
from models.redo import (LIMIT_FIELDS, log_calc_max_ages_56, log_calc_max_ages_80, log_checkpoint_margin_56,
                         log_checkpoint_margin_57, log_files_capacity_8030, log_set_capacity_mariadb)
from models.server import ServerSettings
from models.versions import VERSION_NAMES
from sim.cli import main
from sim.config import load_scenario, scenario_from_dict
from sim.engine import Server
from sim.metrics import summary
from sim.run_output import resolved_toml
from tests.test_engine import assert_engine_invariants, run_checked, small_doc, version_doc

M = 1 << 20


def pcts(lim):
    return [None if getattr(lim, f) is None else round(100 * getattr(lim, f) / lim.configured_bytes, 1)
            for f in LIMIT_FIELDS]


# Section 2.5 of shared/research/innodb-flushing.md: adaptive ref, sync flush, checkpoint async, user stop.
@pytest.mark.parametrize("limits, want", [
    (lambda: log_calc_max_ages_56(48 * M, 2, 16384), [70.3, 75.3, 77.8, 80.3]),
    (lambda: log_calc_max_ages_56(1 << 30, 2, 16384), [70.8, 75.9, 78.4, 81.0]),
    (lambda: log_calc_max_ages_80(48 * M, 2, 16384)[0], [69.5, 74.9, 77.5, 80.2]),
    (lambda: log_calc_max_ages_80(1 << 30, 2, 16384)[0], [77.5, 83.4, 86.3, 89.3]),
    (lambda: log_files_capacity_8030(100 * M, 16384)[0], [72.5, 78.0, 80.8, 83.5]),
    (lambda: log_files_capacity_8030(2 << 30, 16384)[0], [73.2, 78.7, 81.5, 84.3]),
    (lambda: log_set_capacity_mariadb(96 * M, 16384), [70.3, None, None, 80.3]),
    (lambda: log_set_capacity_mariadb(2 << 30, 16384), [70.8, None, None, 81.0]),
])
def test_worked_numbers_per_version(limits, want):
    got = pcts(limits())
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            assert g == pytest.approx(w, abs=0.1)


def test_worked_numbers_in_mib():
    lim, _ = log_calc_max_ages_80(48 * M, 2, 16384)
    assert lim.max_modified_age_async / M == pytest.approx(66.7, abs=0.1)
    assert lim.max_modified_age_sync / M == pytest.approx(71.9, abs=0.05)
    assert lim.max_checkpoint_age_async / M == pytest.approx(74.4, abs=0.05)
    assert lim.max_checkpoint_age / M == pytest.approx(77.0, abs=0.05)
    md = log_set_capacity_mariadb(96 * M, 16384)
    assert md.max_modified_age_async / M == pytest.approx(67.4, abs=0.05)
    assert md.max_checkpoint_age / M == pytest.approx(77.1, abs=0.05)


def test_margin_57_flushes_the_overshoot_once_where_56_flushes_it_twice():
    lim = log_calc_max_ages_56(48 * M, 2, 16384)
    lsn, oldest = 10 * lim.capacity_bytes, 10 * lim.capacity_bytes - lim.max_modified_age_sync - 1000
    a56 = log_checkpoint_margin_56(lsn, oldest - 5, oldest, lim)
    a57 = log_checkpoint_margin_57(lsn, oldest - 5, oldest, lim)
    assert a56.preflush_to_lsn == oldest + 2000 and a57.preflush_to_lsn == oldest + 1000
    assert a56.checkpoint == a57.checkpoint


def test_pct_for_dirty_57_takes_fractional_thresholds():
    """5.7+ declare both percentages doubles: a threshold of 1.5 % is compared as 1.5."""
    assert pct_for_dirty_57(1.4, 1.5, 0) == 0 and pct_for_dirty_57(1.5, 1.5, 0) == 100
    assert pct_for_dirty_57(0.4, 1.5, 0.5) == 0
    assert pct_for_dirty_57(1.0, 1.5, 0.5) == 40          # int(1.0 x 100 / 2.5); with 1 and 0: 50


def test_pct_for_dirty_57_uses_greater_or_equal():
    assert pct_for_dirty_57(75.0, 75, 0) == 100          # 5.6 needs > 75
    assert pct_for_dirty_57(74.9, 75, 0) == 0
    assert pct_for_dirty_57(10.0, 90, 10) == int(10 * 100 / 91)
    assert pct_for_dirty_57(0.0, 0, 0) == 0


def test_recommendation_57_splits_by_age_only_under_redo_pressure():
    s = ServerSettings(io_capacity=200, io_capacity_max=2000)
    below = [0, 0, 0, 3000]                      # the old pages sit in the last instance
    calm = recommendation_57(below, 0, 10, 300, s)
    assert calm.n_pages == (200 * 10 // 100 + 300 + 1000) // 3
    assert calm.per_slot == (calm.n_pages // 4,) * 4          # even split
    warm = recommendation_57(below, 0, 200, 300, s)
    assert warm.n_pages == (400 + 300 + 1000) // 3
    hot = recommendation_57(below, 0, 5000, 300, s)
    assert hot.n_pages == 2000                                  # capped at io_capacity_max
    assert hot.per_slot[3] > 10 * max(hot.per_slot[:3])         # proportional: WL6642's fix
    even80 = recommendation_57(below, 0, 10, 300, s, per_slot_plus_one=True)
    assert even80.per_slot == (calm.n_pages // 4 + 1,) * 4
    sync = recommendation_57([10, 10, 10, 10], 0, 500, 0, s, sync=True)
    assert sync.n_pages == 200                                  # at least innodb_io_capacity


def test_averages_57_refresh_by_time_or_iterations():
    st0, go = averages_57(AdaptiveState57(), 1000, 0.0, 0, 30)
    assert not go and st0.prev_lsn == 1000
    st1, go = averages_57(st0, 31000, 30.0, 600, 30)       # 30 s elapsed after one iteration
    assert go and st1.lsn_avg_rate == 1000 // 2 and st1.avg_page_rate == 10 and st1.n_iterations == 0


def test_log_sync_flush_lsn_80():
    lim, _ = log_calc_max_ages_80(1 << 30, 2, 16384)
    lsn = 10 * lim.capacity_bytes
    assert log_sync_flush_lsn_80(lsn, lsn - lim.max_modified_age_sync + 10, lim) == 0
    over = lsn - lim.max_modified_age_sync - 4096
    assert log_sync_flush_lsn_80(lsn, over, lim, flush_order_lag=2 * M) == lsn - lim.max_modified_age_sync + 2 * M
    # A pending checkpoint request raises the target even below the sync age.
    assert log_sync_flush_lsn_80(lsn, lsn - 100, lim, requested_checkpoint_lsn=lsn - 50) == lsn - 50


def test_recommendation_mariadb():
    s = ServerSettings(io_capacity=200, io_capacity_max=2000, max_dirty_pages_pct=90, max_dirty_pages_pct_lwm=0)
    assert recommendation_mariadb(AdaptiveState57(), 0, 0, 5.0, 150, s, first=False) == 150
    assert recommendation_mariadb(AdaptiveState57(), 0, 0, 5.0, 5000, s, first=False) == 200
    # dirty % / innodb_max_dirty_pages_pct x io_capacity (95 / 90 x 200 = 211): io_capacity below the
    # dirty pages, else the dirty pages up to io_capacity_max (as 10.11.18 reads).
    assert recommendation_mariadb(AdaptiveState57(), 0, 0, 95.0, 5000, s, first=False) == 200
    assert recommendation_mariadb(AdaptiveState57(), 0, 0, 95.0, 210, s, first=False) == 210
    st_ = AdaptiveState57(avg_page_rate=900)
    assert recommendation_mariadb(st_, 150, 3000, 20.0, 5000, s, first=False) == (200 + 900 + 2000 // 3) // 3


# -- configuration ------------------------------------------------------------------------------

def oltp(version, **server):
    return {"server": {"version": version, **server}, "workload": {"kind": "oltp", "warehouses": 1}}


def test_defaults_follow_the_version():
    s56 = scenario_from_dict(oltp("mysql-5.6"), "t").server
    s80 = scenario_from_dict(oltp("mysql-8.0"), "t").server
    s84 = scenario_from_dict(oltp("mysql-8.4", innodb_buffer_pool_size="16G"), "t").server
    md = scenario_from_dict(oltp("mariadb-10.11"), "t").server
    assert (s56.innodb_max_dirty_pages_pct, s56.innodb_flush_neighbors, s56.innodb_io_capacity_max) == (75, 1, 2000)
    assert (s80.innodb_max_dirty_pages_pct, s80.innodb_max_dirty_pages_pct_lwm, s80.innodb_flush_neighbors) == (90, 10, 0)
    assert (s84.innodb_io_capacity, s84.innodb_io_capacity_max, s84.innodb_flush_method) == (10000, 20000, "O_DIRECT")
    assert s84.innodb_buffer_pool_instances == 2 and s84.innodb_page_cleaners == 2   # min(16G/128M/2, 8 cores/4)
    assert (md.innodb_log_file_size_bytes, md.innodb_lru_scan_depth, md.innodb_buffer_pool_instances) == (96 * M, 1536, 1)
    # io_capacity_max follows io_capacity when it is not set.
    assert scenario_from_dict(oltp("mysql-5.7", innodb_io_capacity=5000), "t").server.innodb_io_capacity_max == 10000


def test_settings_a_version_lacks_are_refused_or_ignored_as_the_server_does():
    with pytest.raises(InputError) as err:
        scenario_from_dict(oltp("mysql-5.6", innodb_page_cleaners=4), "t")
    assert "unknown variable" in err.value.problem and err.value.field == "server.innodb_page_cleaners"
    with pytest.raises(InputError):
        scenario_from_dict(oltp("mysql-8.0", innodb_redo_log_capacity="2G"), "t")
    with pytest.raises(InputError):
        scenario_from_dict(oltp("mariadb-10.11", innodb_doublewrite_pages=64), "t")
    md = scenario_from_dict(oltp("mariadb-10.11", innodb_buffer_pool_instances=8, innodb_log_files_in_group=2,
                                 innodb_log_file_size="1G"), "t")
    assert md.server.innodb_buffer_pool_instances == 1 and md.server.innodb_log_files_in_group == 1
    assert any("'innodb_buffer_pool_instances' was removed" in n for n in md.notes)
    mapped = scenario_from_dict(oltp("mysql-8.0.30", innodb_log_file_size="1G", innodb_log_files_in_group=3), "t")
    assert mapped.server.innodb_redo_log_capacity_bytes == 3 << 30 and "deprecated" in mapped.notes[0]
    both = scenario_from_dict(oltp("mysql-8.0.30", innodb_log_file_size="1G", innodb_redo_log_capacity="2G"), "t")
    assert both.server.innodb_redo_log_capacity_bytes == 2 << 30 and "ignored" in both.notes[0]


def test_a_scenario_for_one_version_run_on_another(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text('[server]\nversion = "mysql-8.0.30"\ninnodb_redo_log_capacity = "2G"\n'
                 '[workload]\nkind = "oltp"\nwarehouses = 1\n')
    assert main(["run", str(p), "--set", "server.version=mysql-5.7"]) == 2
    err = capsys.readouterr().err
    assert "server.innodb_redo_log_capacity" in err and "MySQL 5.7" in err and "Traceback" not in err


@pytest.mark.parametrize("version", VERSION_NAMES)
def test_resolved_scenario_loads_back_for_every_version(version, tmp_path):
    scn = scenario_from_dict(small_doc(server__version=version) if version != "mariadb-10.11" else
                             {**small_doc(server__version=version),
                              "server": {k: v for k, v in small_doc(server__version=version)["server"].items()
                                         if k not in ("innodb_buffer_pool_instances", "innodb_log_files_in_group")}},
                             "t")
    p = tmp_path / "r.toml"
    p.write_text(resolved_toml(scn))
    again = load_scenario(p)
    assert again.server == scn.server


# -- the engine under every version -------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(version=st.sampled_from(VERSION_NAMES), trx=st.sampled_from([0, 1, 2]),
       dblwr=st.sampled_from([True, False, "DETECT_ONLY"]),
       method=st.sampled_from(["fsync", "O_DIRECT"]), log=st.sampled_from(["8M", "16M"]),
       cap_max=st.sampled_from([200, 400, 2000]), seed=st.integers(0, 1000))
def test_invariants_hold_for_every_version(version, trx, dblwr, method, log, cap_max, seed):
    if dblwr == "DETECT_ONLY" and version not in ("mysql-8.0.30", "mysql-8.4"):
        dblwr = True                                # a boolean before 8.0.30 and in MariaDB
    doc = version_doc(version, server__innodb_flush_log_at_trx_commit=trx, server__innodb_doublewrite=dblwr,
                      server__innodb_flush_method=method, server__innodb_log_file_size=log,
                      server__innodb_io_capacity_max=cap_max, run__seed=seed, run__duration="3s")
    srv, res = run_checked(doc, every=0.1)
    assert_engine_invariants(srv, res)
    assert summary(res)["commits"] > 0


@pytest.mark.parametrize("version", VERSION_NAMES)
def test_a_small_log_makes_every_version_reach_its_limits(version):
    """2 x 4M of redo (MariaDB: one 4M file) at the small scenario's load: each version flushes for
    redo space in its own way and keeps the invariants."""
    srv, res = run_checked(version_doc(version, run__duration="4s"), every=0.1)
    assert_engine_invariants(srv, res)
    s = summary(res)
    assert s["checkpoint_age_max_pct"] > 50
    assert s["commits"] > 0


@pytest.mark.parametrize("version", VERSION_NAMES)
def test_same_seed_same_result_for_every_version(version):
    a = Server(scenario_from_dict(version_doc(version), "t")).run()
    b = Server(scenario_from_dict(version_doc(version), "t")).run()
    assert np.array_equal(a.counters, b.counters) and np.array_equal(a.gauges, b.gauges)
    assert np.array_equal(a.commit_t, b.commit_t)


def test_instances_and_page_cleaners_in_57():
    doc = small_doc(server__version="mysql-5.7", server__innodb_buffer_pool_size="1G",
                    server__innodb_buffer_pool_instances=4, server__innodb_page_cleaners=2,
                    workload__data_size="64M", run__duration="2s")
    srv, res = run_checked(doc, every=0.25)
    assert res.n_instances == 4 and srv.cleaner.n_threads == 2
    assert_engine_invariants(srv, res)
