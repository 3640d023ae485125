"""innodb_thread_concurrency (models/srv_conc.py): the srv_conc_enter_innodb_with_atomics rules,
without SimPy, and in the engine."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from models.srv_conc import OS_SLEEP_SLACK_S, SrvConc
from sim.config import scenario_from_dict
from sim.engine import Server
from sim.metrics import frame, summary
from tests.test_engine import assert_engine_invariants, run_checked, small_doc


def test_a_free_seat_is_taken_at_once_and_halves_the_delay_when_nobody_waits():
    q = SrvConc(2, sleep_delay_us=10000)
    assert q.try_enter(0) and q.n_active == 1 and q.sleep_delay_us == 5000
    assert q.try_enter(1) and q.n_active == 2 and q.sleep_delay_us == 2500


def test_a_full_house_makes_the_thread_wait_and_sleep():
    q = SrvConc(1, sleep_delay_us=10000, adaptive_max_sleep_delay_us=0)
    assert q.try_enter(0)
    assert not q.try_enter(1)
    assert q.n_waiting == 1
    assert q.sleep_s() == pytest.approx(10000e-6 + OS_SLEEP_SLACK_S)
    q.woke(1)
    assert not q.try_enter(1)
    assert q.n_waiting == 1                      # counted once per attempt to enter
    q.woke(1)
    assert q.sleep_delay_us == 10000             # not adaptive: the delay stays
    q.exit()
    assert q.try_enter(1) and q.n_waiting == 0 and q.sleep_delay_us == 10000


def test_adaptive_delay_grows_after_the_second_sleep_and_shrinks_after_one():
    q = SrvConc(1, sleep_delay_us=1000, adaptive_max_sleep_delay_us=150000)
    q.n_active = 1                               # someone is inside
    assert not q.try_enter(1) and not q.try_enter(2)
    q.woke(1)                                    # first sleep: no change
    assert q.sleep_delay_us == 1000
    q.woke(2)
    q.woke(2)                                    # thread 2's second sleep: +1
    assert q.sleep_delay_us == 1001
    q.exit()
    assert q.try_enter(1)                        # in after one sleep: -1; thread 2 still waits: no halving
    assert q.sleep_delay_us == 1000 and q.n_waiting == 1
    q.exit()
    assert q.try_enter(2)                        # in after two sleeps, nobody waits: halved
    assert q.sleep_delay_us == 500 and q.n_waiting == 0


def test_sleep_is_cut_to_the_adaptive_maximum():
    q = SrvConc(1, sleep_delay_us=400000, adaptive_max_sleep_delay_us=150000)
    assert q.sleep_s() == pytest.approx(150000e-6 + OS_SLEEP_SLACK_S)
    assert q.sleep_delay_us == 150000
    q = SrvConc(1, sleep_delay_us=400000, adaptive_max_sleep_delay_us=0)
    assert q.sleep_s() == pytest.approx(400000e-6 + OS_SLEEP_SLACK_S)


@settings(max_examples=200, deadline=None)
@given(conc=st.integers(1, 6), adaptive=st.sampled_from([0, 150000]), delay=st.integers(0, 20000),
       ops=st.lists(st.tuples(st.sampled_from(["enter", "sleep", "exit"]), st.integers(0, 9)), max_size=200))
def test_seats_are_never_overbooked_and_waiters_are_counted_once(conc, adaptive, delay, ops):
    q = SrvConc(conc, sleep_delay_us=delay, adaptive_max_sleep_delay_us=adaptive)
    inside: set[int] = set()
    for op, th in ops:
        if op == "enter" and th not in inside:
            if q.try_enter(th):
                inside.add(th)
        elif op == "sleep" and th in q.n_sleeps:
            assert q.sleep_s() >= OS_SLEEP_SLACK_S
            q.woke(th)
        elif op == "exit" and th in inside:
            inside.remove(th)
            q.exit()
        assert q.n_active == len(inside) <= conc
        assert q.n_waiting == len(q.n_sleeps)
        assert not inside & set(q.n_sleeps)
        assert q.sleep_delay_us >= 0
        if adaptive:
            assert q.sleep_delay_us <= max(delay, adaptive) + len(ops)


def test_a_limit_nobody_reaches_changes_nothing():
    """8 seats for 8 users. The limit also enlarges log_calc_max_ages's margin, so the redo is made
    large enough that checkpoint age never reaches a threshold in the run."""
    a = Server(scenario_from_dict(small_doc(server__innodb_log_file_size="64M"), "t")).run()
    b = Server(scenario_from_dict(small_doc(server__innodb_log_file_size="64M",
                                            server__innodb_thread_concurrency=8), "t")).run()
    assert np.array_equal(a.commit_t, b.commit_t)


def test_a_low_limit_queues_threads_and_caps_throughput():
    """8 users on 4 cores, 2 seats: the threads queue ("innodb queue"), fewer commit, and those
    that commit waited longer; nothing is lost."""
    free = summary(run_checked(small_doc(run__duration="2s"))[1])
    srv, res = run_checked(small_doc(server__innodb_thread_concurrency=2, run__duration="2s"))
    assert_engine_invariants(srv, res)
    s = summary(res)
    assert frame(res)["threads_innodb_queue"].sum() > 0
    assert s["commits"] < free["commits"]
    assert s["latency_ms"]["p50"] > free["latency_ms"]["p50"]
    assert srv.users.conc.n_active <= 2
