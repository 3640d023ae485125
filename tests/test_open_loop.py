"""workload.rate: the open loop (transactions arrive at exponential gaps and queue for the users,
as sysbench --rate offers them), against the closed loop it leaves as it was."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.errors import InputError
from sim.config import scenario_from_dict
from sim.engine import GAUGES
from sim.metrics import summary
from tests.test_engine import assert_engine_invariants, run_checked, small_doc, version_doc


def test_rate_and_think_time_exclude_each_other():
    with pytest.raises(InputError, match="rate or think_time"):
        scenario_from_dict(small_doc(workload__rate=100.0, workload__think_time="10ms"), "s.toml")


def test_rate_is_an_oltp_key():
    doc = {"workload": {"kind": "iobench", "rate": 100.0}}
    with pytest.raises(InputError):
        scenario_from_dict(doc, "s.toml")


def test_below_capacity_the_offered_rate_is_served_with_no_queue():
    srv, res = run_checked(small_doc(workload__rate=300.0, run__duration="8s"))
    assert_engine_invariants(srv, res)
    s = summary(res)
    # 2,400 Poisson arrivals: the count is within 4 standard deviations of the mean (sd 49).
    assert abs(s["commits"] - 300.0 * 8) < 4 * np.sqrt(300.0 * 8)
    assert s["offered_tps"] == 300.0
    # A third of the closed loop's rate (868/s): arrivals rarely find all 8 users busy.
    assert s["trx_queue_mean"] < 0.5 and s["trx_queue_max"] < 50
    assert s["latency_ms"]["p99"] < 100.0


def test_above_capacity_the_queue_and_the_latency_grow():
    closed = summary(run_checked(small_doc(run__duration="4s"))[1])
    srv, res = run_checked(small_doc(workload__rate=3.0 * closed["tps_mean"], run__duration="4s"))
    assert_engine_invariants(srv, res)
    s = summary(res)
    assert s["tps_mean"] < 1.2 * closed["tps_mean"]           # the users serve what they can
    q = res.gauges[:, GAUGES.index("trx_queue")]
    assert q[len(q) // 2] < q[-1]                               # and the rest waits, longer and longer
    assert s["trx_queue_max"] > 1.5 * closed["tps_mean"]
    assert s["latency_ms"]["max"] > 1000.0


def test_the_closed_loop_draws_nothing_more():
    """A run without rate gives the commit times it gave before the open loop existed (its random
    stream is untouched): same as a run with rate 0 given explicitly."""
    a = run_checked(small_doc(run__duration="2s"))[1]
    b = run_checked(small_doc(workload__rate=0.0, run__duration="2s"))[1]
    assert np.array_equal(a.commit_t, b.commit_t)


@settings(max_examples=8, deadline=None)
@given(version=st.sampled_from(["mysql-5.6", "mysql-5.7", "mysql-8.0.30", "mariadb-10.11"]),
       rate=st.sampled_from([50.0, 400.0, 3000.0]), users=st.sampled_from([1, 4, 16]),
       conc=st.sampled_from([0, 2]), binlog=st.booleans(), seed=st.integers(0, 50))
def test_every_arrival_commits_runs_or_waits(version, rate, users, conc, binlog, seed):
    """Nothing lost: arrivals = commits + transactions running + queued (Server.end_violations),
    with the other invariants, for any version, load, seat limit and binary log."""
    over = {"workload__rate": rate, "workload__users": users, "run__duration": "2s", "run__seed": seed}
    doc = version_doc(version, **over)
    if not version.startswith("mariadb") and conc:
        doc["server"]["innodb_thread_concurrency"] = conc
    if binlog:
        doc["server"]["log_bin"] = True
        doc["server"]["sync_binlog"] = 1
    srv, res = run_checked(doc)
    assert_engine_invariants(srv, res)
    u = srv.users
    assert u.arrivals == srv.counters.values["commits"] + (u.n - len(u.idle)) + u.queued


def test_a_queue_sysbench_could_not_hold_is_named():
    from sim.run_output import SYSBENCH_MAX_QUEUE, summary_text

    srv, res = run_checked(small_doc(workload__rate=100000.0, run__duration="2s"), every=0.5)
    s = summary(res)
    assert s["trx_queue_max"] >= SYSBENCH_MAX_QUEUE
    assert "sysbench --rate would have stopped" in summary_text(s)
    assert "would have stopped" not in summary_text(summary(run_checked(small_doc(workload__rate=100.0))[1]))
