"""How InnoDB opens and syncs its files: innodb_flush_method, MariaDB 11.0+'s four Booleans and
innodb_doublewrite = fast (models/file_access.py), their release checks (sim.config) and what the
file layer does with them (models.fil)."""

from dataclasses import replace

import numpy as np
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from models.device import Device, load_profile
from models.errors import InputError
from models.fil import FilIO
from models.file_access import FAST, file_access, translate_flush_method_110
from models.filesystem import Filesystem, make_spec
from models.server import Counters
from sim.config import load_scenario, scenario_from_dict
from sim.run_output import resolved_toml
from tests.test_engine import assert_engine_invariants, run_checked, version_doc


# -- the plain functions -------------------------------------------------------------------------

@pytest.mark.parametrize("method,direct,data_fsync,dblwr_fsync,log_wt", [
    ("fsync", False, True, True, False),
    ("O_DIRECT", True, True, True, False),
    ("O_DIRECT_NO_FSYNC", True, False, False, False),
    ("nosync", False, True, True, False),          # buffered: written back at its fsync (models.filesystem)
    ("O_DSYNC", False, True, True, True),
])
def test_the_flush_method_alone_gives_what_it_always_did(method, direct, data_fsync, dblwr_fsync, log_wt):
    a = file_access(method)
    assert (a.data_direct, a.data_fsync, a.dblwr_fsync, a.log_write_through) == (direct, data_fsync, dblwr_fsync,
                                                                                  log_wt)
    assert not a.data_write_through and not a.doublewrite_fast and not a.log_direct


def test_fast_fsyncs_the_doublewrite_area_and_never_the_data_files():
    a = file_access("O_DIRECT", doublewrite_fast=True)
    assert a.data_direct and not a.data_fsync and a.dblwr_fsync


def test_write_through_data_files_are_never_fsynced():
    a = file_access("O_DIRECT", data_write_through=True)
    assert a.data_write_through and not a.data_fsync and not a.dblwr_fsync
    assert not file_access("O_DIRECT", data_write_through=True, doublewrite_fast=True).dblwr_fsync


def test_data_file_buffering_turns_o_direct_into_the_page_cache():
    a = file_access("O_DIRECT", data_buffered=True)
    assert not a.data_direct and a.data_fsync
    assert file_access("O_DIRECT", log_write_through=True).log_write_through


def test_the_110_translation_of_innodb_flush_method():
    """MariaDB's innodb_flush_method documentation (11.0+): O_DSYNC and fsync/littlesync/nosync as
    the Booleans; O_DIRECT_NO_FSYNC as fast where the release has it, itself before."""
    assert translate_flush_method_110("O_DSYNC", True, True) == {
        "innodb_log_file_write_through": True, "innodb_data_file_write_through": True,
        "innodb_data_file_buffering": False, "innodb_log_file_buffering": False, "innodb_flush_method": "O_DIRECT"}
    for method in ("fsync", "littlesync", "nosync"):
        assert translate_flush_method_110(method, True, True)["innodb_data_file_buffering"] is True
    assert translate_flush_method_110("O_DIRECT", True, True) == {"innodb_flush_method": "O_DIRECT"}
    assert translate_flush_method_110("O_DIRECT_NO_FSYNC", True, True) == {
        "innodb_flush_method": "O_DIRECT", "innodb_doublewrite": FAST}
    assert translate_flush_method_110("O_DIRECT_NO_FSYNC", False, True) == {"innodb_flush_method": "O_DIRECT"}
    assert translate_flush_method_110("O_DIRECT_NO_FSYNC", True, False) == {"innodb_flush_method": "O_DIRECT_NO_FSYNC"}


# -- what each release takes (sim.config) --------------------------------------------------------

def mariadb(version, **server):
    """A small scenario of `version` (any release) with these [server] settings."""
    return scenario_from_dict(version_doc(version, **{f"server__{k}": v for k, v in server.items()}), "t.toml")


@pytest.mark.parametrize("version,key,value,needle", [
    ("mariadb-10.11", "innodb_data_file_buffering", True, "MariaDB 10.11 has no such variable (MDEV-30136"),
    ("mariadb-10.11.9", "innodb_log_file_write_through", True, "MariaDB 10.11.9 has no such variable"),
    ("mariadb-10.6", "innodb_log_file_buffering", True, "MariaDB 10.6 has no such variable (MDEV-28766"),
    ("mariadb-10.8.3", "innodb_log_file_buffering", False, "MariaDB 10.8.3 has no such variable"),
    ("mariadb-10.11", "innodb_doublewrite", "fast", "fast is not a value MariaDB 10.11 accepts (MDEV-33545"),
    ("mariadb-11.0.5", "innodb_doublewrite", "FAST", "fast is not a value MariaDB 11.0.5 accepts"),
    ("mariadb-11.4.1", "innodb_doublewrite", "fast", "first in MariaDB 11.0.6, 11.1.5, 11.2.4, 11.4.2"),
    ("mysql-8.0.36", "innodb_doublewrite", "fast", "fast is not a value MySQL 8.0.30+ accepts"),
    ("mysql-8.4", "innodb_data_file_buffering", True, "MySQL 8.4 LTS has no such variable"),
])
def test_a_release_refuses_what_came_after_it(version, key, value, needle):
    with pytest.raises(InputError) as err:
        mariadb(version, **{key: value})
    assert needle in str(err.value) and f"server.{key}" in str(err.value)


def test_releases_that_have_them_take_them():
    scn = mariadb("mariadb-11.4.2", innodb_doublewrite="fast", innodb_data_file_write_through=True)
    assert scn.server.innodb_doublewrite == FAST and scn.server.innodb_data_file_write_through
    assert mariadb("mariadb-10.8.4", innodb_log_file_buffering=True).server.innodb_log_file_buffering
    assert mariadb("mariadb-11.4", innodb_doublewrite="fast").server.innodb_doublewrite == FAST   # 11.4.2+
    unknown = mariadb("mariadb-11.3.2", innodb_doublewrite="fast")
    assert any("whether MariaDB 11.3.2 takes innodb_doublewrite = fast is not known" in n for n in unknown.notes)


def test_110_translates_a_given_flush_method_and_it_wins():
    scn = mariadb("mariadb-11.4", innodb_flush_method="fsync", innodb_data_file_buffering=False)
    assert scn.server.innodb_data_file_buffering and scn.server.innodb_flush_method == "O_DIRECT"
    assert any("innodb_flush_method = fsync (t.toml) overrides innodb_data_file_buffering = false" in n
               for n in scn.notes)
    assert any("innodb_flush_method is deprecated" in n for n in scn.notes)
    fast = mariadb("mariadb-11.4.3", innodb_flush_method="O_DIRECT_NO_FSYNC")
    assert fast.server.innodb_doublewrite == FAST and fast.server.innodb_flush_method == "O_DIRECT"
    before = mariadb("mariadb-11.0.2", innodb_flush_method="O_DIRECT_NO_FSYNC")
    assert before.server.innodb_doublewrite is True and before.server.innodb_flush_method == "O_DIRECT_NO_FSYNC"
    # 10.11 keeps innodb_flush_method as it is.
    old = mariadb("mariadb-10.11", innodb_flush_method="O_DSYNC")
    assert old.server.innodb_flush_method == "O_DSYNC" and not old.server.innodb_log_file_write_through


def test_log_file_buffering_is_on_with_trx_commit_2():
    scn = mariadb("mariadb-11.4", innodb_flush_log_at_trx_commit=2, innodb_log_file_buffering=False)
    assert scn.server.innodb_log_file_buffering
    assert any("changed to ON at startup with innodb_flush_log_at_trx_commit = 2" in n for n in scn.notes)
    assert not mariadb("mariadb-10.11").server.innodb_log_file_buffering


def test_a_resolved_scenario_keeps_its_release_and_only_its_keys(tmp_path):
    scn = mariadb("mariadb-11.4.3", innodb_data_file_buffering=True)
    text = resolved_toml(scn)
    assert 'version = "mariadb-11.4.3"' in text and "innodb_data_file_buffering = true" in text
    p = tmp_path / "r.toml"
    p.write_text(text)
    again = load_scenario(p)
    assert again.server == scn.server and again.release == "mariadb-11.4.3"
    old = resolved_toml(mariadb("mariadb-10.11"))
    assert "innodb_log_file_buffering" in old and "innodb_data_file_buffering" not in old


def test_the_option_file_reader_takes_fast_and_the_booleans(tmp_path):
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mariadbd]\ninnodb_doublewrite = fast\ninnodb-data-file-write-through\n"
                   "skip-innodb-log-file-buffering\n")
    scn = scenario_from_dict(version_doc("mariadb-11.4.2"), "t.toml", option_files=[str(cnf)])
    assert scn.server.innodb_doublewrite == FAST and scn.server.innodb_data_file_write_through
    assert not scn.server.innodb_log_file_buffering
    cnf.write_text("[mariadbd]\ninnodb_doublewrite = quick\n")
    with pytest.raises(InputError) as err:
        scenario_from_dict(version_doc("mariadb-11.4.2"), "t.toml", option_files=[str(cnf)])
    assert "line 2" in str(err.value) and "from MariaDB 11.0.6 also fast" in str(err.value)


# -- the file layer (models.fil) ---------------------------------------------------------------

def fil_with(access_kw, flush_s=0.0):
    env = simpy.Environment()
    profile = load_profile("fusionio-2012")
    if flush_s:
        profile = replace(profile, volatile_write_cache=True, flush_s=flush_s)
    dev = Device(env, profile, np.random.default_rng(1))
    fs = Filesystem(env, dev, make_spec("xfs", "modern", "noatime"), 3)
    counters = Counters()
    fil = FilIO(env, fs, 1, 16384, "O_DIRECT", counters, datasync=True, access=file_access("O_DIRECT", **access_kw))
    return env, fil, counters


def test_fast_fil_fsyncs_ibdata_and_skips_the_data_files():
    env, fil, counters = fil_with({"doublewrite_fast": True})

    def run():
        yield from fil.fsync_ibdata()
        yield from fil.fsync_data_files()

    env.process(run())
    env.run()
    assert counters.values["Innodb_data_fsyncs"] == 1            # the doublewrite area's alone


def test_a_write_through_page_write_ends_after_the_cache_flush_and_nothing_is_fsynced():
    times = {}
    for wt in (False, True):
        env, fil, counters = fil_with({"data_write_through": wt}, flush_s=2e-3)

        def write():
            done = yield from fil.submit_page(1)
            yield done
            times[wt] = env.now
            yield from fil.fsync_data_files()
            yield from fil.fsync_ibdata()

        env.process(write())
        env.run()
        assert counters.values["Innodb_data_fsyncs"] == (0 if wt else 2)
    assert times[True] - times[False] == pytest.approx(2e-3, abs=2e-4)    # the device's cache flush


def test_the_engine_runs_fast_and_write_through_and_counts_their_fsyncs():
    """MariaDB 11.4: with fast the data files are never fsynced, so each data fsync is the log's or
    the doublewrite area's; with write-through there are none but the log's."""
    from sim.engine import Server

    def fsyncs(**server):
        srv = Server(mariadb("mariadb-11.4.2", **server))
        res = srv.run()
        assert srv.end_violations(res) == []
        c = srv.counters.values
        return c["Innodb_data_fsyncs"], c["Innodb_os_log_fsyncs"], c["Innodb_dblwr_writes"], c["Innodb_pages_written"]

    on, on_log, on_batches, on_pages = fsyncs()
    fast, fast_log, fast_batches, fast_pages = fsyncs(innodb_doublewrite="fast")
    wt, wt_log, _, wt_pages = fsyncs(innodb_data_file_write_through=True)
    assert on_pages > 0 and fast_pages > 0 and wt_pages > 0
    assert fast == fast_log + fast_batches                 # one fsync of ibdata1 a batch, none of the data files
    assert on > on_log + on_batches                        # ON also fsyncs the data files
    assert wt == wt_log


@settings(max_examples=8, deadline=None)
@given(dblwr=st.sampled_from([True, False, "fast"]), data_buf=st.booleans(), data_wt=st.booleans(),
       log_buf=st.booleans(), log_wt=st.booleans(), method=st.sampled_from(["O_DIRECT", "fsync", "O_DSYNC"]),
       trx=st.sampled_from([0, 1, 2]), seed=st.integers(0, 1000))
def test_the_engine_invariants_hold_for_every_file_setting_of_mariadb_11(dblwr, data_buf, data_wt, log_buf, log_wt,
                                                                         method, trx, seed):
    """Every page write completes once, the checkpoint never passes the oldest dirty page, and the
    redo log is never overwritten, whatever MariaDB 11.4 does with its files."""
    doc = version_doc("mariadb-11.4.2", server__innodb_doublewrite=dblwr, server__innodb_data_file_buffering=data_buf,
                      server__innodb_data_file_write_through=data_wt, server__innodb_log_file_buffering=log_buf,
                      server__innodb_log_file_write_through=log_wt, server__innodb_flush_method=method,
                      server__innodb_flush_log_at_trx_commit=trx, server__innodb_log_file_size="8M",
                      run__seed=seed, run__duration="3s")
    srv, res = run_checked(doc, every=0.1)
    assert_engine_invariants(srv, res)
