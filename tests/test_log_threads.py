"""MySQL 8.0's redo log threads (models.log_threads): the formulas, and the engine with them."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from models.log_threads import (LOG_FLUSH_EVENTS, LogThreads, flush_event_slot, flusher_notifies_directly,
                                log_threads_spin, spin_share)
from models.user_threads import LogWriter
from sim.config import scenario_from_dict
from sim.engine import Server
from tests.test_engine import assert_engine_invariants, run_checked, version_doc


def test_flush_event_slot_is_the_block_of_lsn_minus_one():
    # log_compute_wait_event_slot: ((lsn - 1) / 512) & (n - 1)
    assert flush_event_slot(1) == 0
    assert flush_event_slot(512) == 0                 # the right end of block 0 belongs to it
    assert flush_event_slot(513) == 1
    assert flush_event_slot(512 * LOG_FLUSH_EVENTS + 1) == 0      # the array wraps
    assert flush_event_slot(1025, n_events=2) == 0


def test_flusher_wakes_the_waiters_itself_within_one_block():
    assert flusher_notifies_directly(1000, 1020)          # 1001..1020: one block
    assert flusher_notifies_directly(1024, 1536)          # 1025..1536: block 2 alone
    assert not flusher_notifies_directly(1000, 1030)      # 1001..1030 crosses 1024
    assert not flusher_notifies_directly(0, 4096)


@given(last=st.integers(0, 1 << 40), gap=st.integers(1, 1 << 20))
def test_direct_notify_only_when_both_ends_share_a_slot(last, gap):
    same_block = last // 512 == (last + gap - 1) // 512
    if same_block:
        assert flusher_notifies_directly(last, last + gap)
    elif gap < 512 * (LOG_FLUSH_EVENTS - 1):
        assert not flusher_notifies_directly(last, last + gap)


def test_log_threads_spin_only_when_busy_and_asked_often():
    assert log_threads_spin(80.0, 1001.0)
    assert not log_threads_spin(79.9, 50_000.0)           # innodb_log_spin_cpu_abs_lwm: under 80 % of a core
    assert not log_threads_spin(800.0, 1000.0)            # once per ms is not frequent (interval < 1 ms)
    assert log_threads_spin(10.0, 2000.0, spin_cpu_abs_lwm_pct=0)


def test_spin_share_is_a_fair_share_of_the_cores():
    assert spin_share(3, 4) == 1.0
    assert spin_share(4, 4) == 1.0
    assert spin_share(8, 4) == 0.5
    with pytest.raises(ValueError):
        spin_share(1, 0)


def _doc(version="mysql-8.0", **over):
    return version_doc(version, **over)


def test_versions_and_the_setting_pick_the_log_path():
    for version, threads in (("mysql-5.6", False), ("mysql-5.7", False), ("mysql-8.0", True),
                             ("mysql-8.0.30", True), ("mysql-8.4", True), ("mariadb-10.11", False)):
        srv = Server(scenario_from_dict(_doc(version), "t"))
        assert isinstance(srv.users.writer, LogThreads if threads else LogWriter), version
    srv = Server(scenario_from_dict(_doc(server__innodb_log_writer_threads=False), "t"))
    assert isinstance(srv.users.writer, LogWriter)


@pytest.mark.parametrize("version", ["mysql-5.7", "mariadb-10.11"])
def test_servers_without_the_threads_refuse_their_settings(version, tmp_path):
    from models.errors import InputError
    for key, value in (("innodb_log_writer_threads", False), ("innodb_log_spin_cpu_abs_lwm", 50)):
        with pytest.raises(InputError, match=key):
            scenario_from_dict(_doc(version, **{f"server__{key}": value}), "t")


def test_writer_writes_and_flusher_fsyncs_apart():
    """With the threads the fsyncs follow the writes back to back (log_flusher), and each write is
    one Innodb_log_writes; without them one committing thread writes and fsyncs, so the counts match."""
    on = Server(scenario_from_dict(_doc(run__duration="3s"), "t"))
    on.run()
    off = Server(scenario_from_dict(_doc(run__duration="3s", server__innodb_log_writer_threads=False), "t"))
    off.run()
    c_on, c_off = on.counters.values, off.counters.values
    # One fsync a write, and one after each checkpoint block (log_checkpointer's write).
    assert c_off["Innodb_os_log_fsyncs"] - c_off["Innodb_log_writes"] == c_off["log_checkpoints"]
    assert c_on["Innodb_log_writes"] >= c_on["Innodb_os_log_fsyncs"] > 0
    assert c_on["commits"] > 0 and c_off["commits"] > 0
    log = on.log
    assert log.flushed_lsn <= log.written_lsn <= log.lsn


def test_o_dsync_log_has_no_fsync_with_the_threads():
    srv = Server(scenario_from_dict(_doc(server__innodb_flush_method="O_DSYNC", run__duration="2s"), "t"))
    srv.run()
    c = srv.counters.values
    assert c["commits"] > 0
    assert c["Innodb_os_log_fsyncs"] == 0                 # log_flush_low: do_flush is false with O_DSYNC
    assert c["Innodb_log_writes"] > 0


def test_trx_commit_2_waits_for_the_write_and_fsyncs_about_once_a_second():
    srv = Server(scenario_from_dict(_doc(server__innodb_flush_log_at_trx_commit=2, run__duration="4s",
                                         server__log_bin=False), "t"))
    srv.run()
    c = srv.counters.values
    assert c["commits"] > 100
    assert c["Innodb_log_writes"] > 100
    # The flusher's timeout (once a second) and the page writes' WAL rule, far from one a commit.
    assert c["Innodb_os_log_fsyncs"] < c["commits"] / 10


def test_writer_writes_what_is_ready_with_no_thread_waiting():
    """log_writer's stop condition is write_lsn < ready_lsn: with innodb_flush_log_at_trx_commit = 0
    no commit asks for the log, yet it is written as it is made (many writes a second, the written
    lsn close behind the current one), and fsynced once per innodb_flush_log_at_timeout."""
    srv = Server(scenario_from_dict(_doc(server__innodb_flush_log_at_trx_commit=0, run__duration="4s",
                                         server__log_bin=False), "t"))
    srv.run()
    c = srv.counters.values
    assert c["commits"] > 1000
    assert c["Innodb_log_writes"] > c["commits"] / 10
    assert c["Innodb_os_log_fsyncs"] < c["Innodb_log_writes"] / 100
    log = srv.log
    assert log.lsn - log.written_lsn < 100 * srv.users.prof.redo_bytes_per_txn
    assert srv.users.writer.requests < c["commits"] / 10      # nobody asked for these writes


def test_only_the_writer_spins_unless_every_commit_is_flushed():
    """With innodb_flush_log_at_trx_commit = 0 or 2 log_flusher sleeps until the flush timeout
    (os_event_wait_time_low), so of the two threads only log_writer spins and takes CPU."""
    def run(trx):
        doc = _doc(hardware__cpu_cores=2, hardware__device="fusionio-2012", workload__users=4,
                   workload__profile="sysbench", workload__data_size="16M", run__duration="3s",
                   server__log_bin=False, server__innodb_flush_log_at_trx_commit=trx)
        srv = Server(scenario_from_dict(doc, "t"))
        srv.run()
        return srv.users.writer
    one, two = run(1), run(2)
    assert one.n_spinners == 2 and one.stats()["spinners"] == "log_writer and log_flusher"
    assert two.n_spinners == 1 and two.stats()["spinners"] == "log_writer"
    assert two.spin_samples > 0 and 0 < two.spin_cpu_s


def test_spinning_log_threads_cost_a_small_box_throughput():
    """The MySQL manual's advice: on few CPUs and low concurrency, innodb_log_writer_threads = OFF
    may perform better; here the spinning writer takes a share of the 2 cores."""
    def commits(threads):
        doc = _doc(hardware__cpu_cores=2, hardware__device="fusionio-2012", workload__users=4,
                   workload__profile="sysbench", workload__data_size="16M", run__duration="4s", server__log_bin=False,
                   server__innodb_log_writer_threads=threads)
        srv = Server(scenario_from_dict(doc, "t"))
        srv.run()
        return srv.counters.values["commits"], srv.users.writer
    on, writer = commits(True)
    off, _ = commits(False)
    assert writer.spin_samples > 0 and writer.spin_cpu_s > 0
    assert on < off


@settings(max_examples=6, deadline=None)
@given(version=st.sampled_from(["mysql-8.0", "mysql-8.0.30", "mysql-8.4"]), trx=st.sampled_from([0, 1, 2]),
       method=st.sampled_from(["fsync", "O_DIRECT", "O_DSYNC"]), cores=st.sampled_from([1, 2, 4, 16]),
       users=st.sampled_from([1, 4, 16]), binlog=st.booleans(), lwm=st.sampled_from([0, 80, 1000]),
       seed=st.integers(0, 1000))
def test_engine_invariants_hold_with_the_log_threads(version, trx, method, cores, users, binlog, lwm, seed):
    doc = _doc(version, server__innodb_flush_log_at_trx_commit=trx, server__innodb_flush_method=method,
               hardware__cpu_cores=cores, workload__users=users, server__log_bin=binlog,
               server__innodb_log_spin_cpu_abs_lwm=lwm, run__seed=seed, run__duration="3s")
    srv, res = run_checked(doc, every=0.1)
    assert_engine_invariants(srv, res)
    assert srv.counters.values["commits"] > 0


def test_same_seed_same_result_with_the_log_threads():
    a = Server(scenario_from_dict(_doc(), "t")).run()
    b = Server(scenario_from_dict(_doc(), "t")).run()
    assert np.array_equal(a.counters, b.counters) and np.array_equal(a.commit_t, b.commit_t)


@pytest.mark.parametrize("release, key, first", [("mysql-8.0.21", "innodb_log_writer_threads", 22),
                                                 ("mysql-8.0.25", "innodb_use_fdatasync", 26)])
def test_a_release_before_the_setting_refuses_it(release, key, first):
    from models.errors import InputError
    with pytest.raises(InputError, match=f"first in 8.0.{first}"):
        scenario_from_dict(_doc(release, **{f"server__{key}": True}), "t")
    later = f"mysql-8.0.{first}"
    assert scenario_from_dict(_doc(later, **{f"server__{key}": True}), "t").server.version == "mysql-8.0"


def test_release_refusal_exits_2_with_one_line(capsys):
    from sim.cli import main
    rc = main(["run", "--set", "server.version=mysql-8.0.19", "--set", "server.innodb_log_writer_threads=false",
               "--set", "run.duration=1s"])
    err = capsys.readouterr().err
    assert rc == 2 and "innodb_log_writer_threads" in err and "Traceback" not in err


def test_the_summary_tells_the_log_threads_spinning_and_their_io():
    from sim.metrics import summary
    from sim.run_output import summary_text
    res = Server(scenario_from_dict(_doc(hardware__cpu_cores=2, hardware__device="fusionio-2012", workload__users=4,
                                         workload__profile="sysbench", workload__data_size="16M",
                                         run__duration="4s", server__log_bin=False), "t")).run()
    s = summary(res)
    lt = s["log_threads"]
    assert lt["cpu_samples"] == 4 and 0 < lt["spin_samples"] <= 4 and lt["spin_cpu_s"] > 0
    assert s["log_writes_per_s"] >= s["log_fsyncs_per_s"] > 0
    assert "redo log threads (MySQL 8.0)" in summary_text(s)
    assert "innodb_log_writer_threads = ON" in summary_text(s)
    off = summary(Server(scenario_from_dict(_doc(server__innodb_log_writer_threads=False), "t")).run())
    assert off["log_threads"] is None and "redo log threads" not in summary_text(off)
