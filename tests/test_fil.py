"""InnoDB's file layer: how data-page writes reach the filesystem with and without native AIO."""

import numpy as np
import pytest
import simpy

from models.device import Device, load_profile
from models.fil import FilIO
from models.filesystem import Filesystem, make_spec
from models.server import Counters
from sim.config import load_scenario
from sim.engine import Server


def page_writes(kind, n_files, native_aio, threads=2, n_writes=12):
    """n_writes page writes posted at once over n_files files; returns (completion times, peak of
    device writes in flight)."""
    env = simpy.Environment()
    dev = Device(env, load_profile("fusionio-2012"), np.random.default_rng(1))
    fs = Filesystem(env, dev, make_spec(kind, "2012", "noatime,nobarrier"), n_files + 2)
    fil = FilIO(env, fs, n_files, 16384, "O_DIRECT", Counters(), native_aio=native_aio, write_io_threads=threads)
    done, peak = [], [0]

    def write(space_id):
        completion = yield from fil.submit_page(space_id)
        yield completion
        done.append(env.now)

    def watcher():
        while True:
            peak[0] = max(peak[0], dev.outstanding(env.now))
            yield env.timeout(2e-6)

    for k in range(n_writes):
        env.process(write(1 + k % n_files))
    env.process(watcher())
    env.run(until=0.05)
    return done, peak[0]


@pytest.mark.parametrize("kind", ["xfs", "ext4"])
def test_without_native_aio_the_write_io_threads_bound_writes_in_flight(kind):
    done, peak = page_writes(kind, n_files=12, native_aio=False, threads=2)
    assert len(done) == 12                     # every write completes once
    assert peak == 2
    done, peak = page_writes(kind, n_files=12, native_aio=True)
    assert len(done) == 12
    assert peak > 2


def test_native_aio_lets_one_ext4_2012_file_have_many_writes_in_flight():
    done, peak = page_writes("ext4", n_files=1, native_aio=True)
    assert len(done) == 12 and peak >= 3           # 16 KiB: ~27 us to submit, ~100 us to complete
    done_sync, peak_sync = page_writes("ext4", n_files=1, native_aio=False, threads=4)
    assert len(done_sync) == 12 and peak_sync == 1    # each I/O thread holds i_mutex to completion
    assert max(done) < max(done_sync)


def test_engine_takes_the_aio_settings_from_the_scenario():
    off = Server(load_scenario("scenarios/default.toml", ["server.innodb_use_native_aio=false",
                                                          "server.innodb_write_io_threads=3"]))
    assert off.fil.io_threads.capacity == 3
    assert Server(load_scenario("scenarios/default.toml")).fil.io_threads is None


def test_contiguous_runs_group_adjacent_pages_of_one_tablespace():
    from models.fil import contiguous_runs
    space_of = np.array([1] * 10 + [2] * 10)
    entries = [(12, "a"), (3, "b"), (9, "c"), (10, "d"), (4, "e"), (5, "f"), (2, "g")]
    runs = contiguous_runs(entries, space_of, max_pages=32)
    assert [[e[0] for e in r] for r in runs] == [[2, 3, 4, 5], [9], [10], [12]]   # 9|10: two files
    capped = contiguous_runs(entries, space_of, max_pages=3)
    assert [[e[0] for e in r] for r in capped] == [[2, 3, 4], [5], [9], [10], [12]]
    assert sorted(e for r in capped for e in r) == sorted(entries)               # nothing lost
    assert contiguous_runs(entries, space_of, max_pages=1) == [[e] for e in entries]   # order kept


@pytest.mark.parametrize("merge", [False, True])
def test_a_doublewrite_batch_reaches_the_device_merged_only_when_the_profile_says_so(merge):
    import dataclasses
    from models.doublewrite import Doublewrite56
    from models.device import WRITE
    env = simpy.Environment()
    profile = dataclasses.replace(load_profile("seed-12core-disks-2012"), merge_adjacent_writes=merge)
    dev = Device(env, profile, np.random.default_rng(1))
    fs = Filesystem(env, dev, make_spec("xfs", "2012", "noatime,nobarrier"), 3)
    fil = FilIO(env, fs, 1, 16384, "O_DIRECT", Counters())
    done = []
    dblwr = Doublewrite56(env, fil, np.ones(64, dtype=np.int32), Counters(), lambda page, t, k: done.append(page))
    pages = [5, 6, 20, 7, 8, 40]          # a victim and its neighbours, in the order they were flushed

    def flush():
        for p in pages:
            yield from dblwr.add(p, 0, "adaptive")
        yield from dblwr.flush_buffered()
        yield from dblwr.wait_idle()

    env.process(flush())
    env.run(until=5.0)
    assert sorted(done) == sorted(pages)                 # every page completes once
    journal_writes = fs.journal.commits * fs.spec.costs.commit_writes   # the fsyncs' commits
    assert fs.journal.commits >= 1
    data_writes = dev.stats.ops[WRITE] - 1 - journal_writes   # less the one doublewrite-block write
    assert data_writes == (3 if merge else 6)            # 5-8, 20, 40 as three requests


def _fil_noting_ibdata_writes(page_size: int, flush_method: str):
    """(env, fil, sizes): a FilIO on the Fusion-io card whose doublewrite writes (write_ibdata)
    append their byte counts to `sizes`."""
    env = simpy.Environment()
    dev = Device(env, load_profile("fusionio-2012"), np.random.default_rng(1))
    fs = Filesystem(env, dev, make_spec("xfs", "2012", "noatime,nobarrier"), 3)
    fil = FilIO(env, fs, 1, page_size, flush_method, Counters())
    sizes = []
    real = fil.write_ibdata

    def noted(nbytes):
        sizes.append(nbytes)
        return (yield from real(nbytes))

    fil.write_ibdata = noted
    return env, fil, sizes


@pytest.mark.parametrize("page_size,dblwr_writes", [(4096, 1), (8192, 1), (16384, 2), (65536, 2)])
def test_a_full_doublewrite_batch_takes_one_write_per_extent_it_spans(page_size, dblwr_writes):
    """buf_dblwr_flush_buffered_writes writes block 1, then block 2 if the 120-page batch is longer
    than a block; a block is one extent (FSP_EXTENT_SIZE): 256 pages of 4K, 128 of 8K, 64 above."""
    from models.doublewrite import DOUBLEWRITE_BATCH_PAGES, Doublewrite56, fsp_extent_size_pages
    assert [fsp_extent_size_pages(p) for p in (4096, 8192, 16384, 32768, 65536)] == [256, 128, 64, 64, 64]
    env, fil, ibdata_writes = _fil_noting_ibdata_writes(page_size, "O_DIRECT")
    done = []
    dblwr = Doublewrite56(env, fil, np.ones(4096, dtype=np.int32), Counters(), lambda page, t, k: done.append(page))

    def flush():
        for p in range(0, 2 * DOUBLEWRITE_BATCH_PAGES, 2):        # 120 pages, none adjacent
            yield from dblwr.add(p, 0, "adaptive")
        yield from dblwr.flush_buffered()
        yield from dblwr.wait_idle()

    env.process(flush())
    env.run(until=5.0)
    assert len(done) == DOUBLEWRITE_BATCH_PAGES
    assert len(ibdata_writes) == dblwr_writes
    assert sum(ibdata_writes) == DOUBLEWRITE_BATCH_PAGES * page_size


@pytest.mark.parametrize("reduced, batch_bytes", [(False, 4 * 16384), (True, 8192)])
def test_detect_only_writes_one_8k_page_of_entries_a_batch(reduced, batch_bytes):
    """8.0.30+ innodb_doublewrite = DETECT_ONLY: Reduced_double_write::write_dblwr_pages writes one
    REDUCED_BATCH_PAGE_SIZE page for a batch instead of its pages; the pages, the fsyncs and the
    counters are as with ON."""
    from models.doublewrite import Doublewrite80
    env, fil, ibdata_writes = _fil_noting_ibdata_writes(16384, "fsync")
    done, counters = [], Counters()
    dblwr = Doublewrite80(env, fil, np.ones(4096, dtype=np.int32), counters, lambda page, t, k: done.append(page),
                          True, np.zeros(4096, dtype=np.int32), 4, "fsync", reduced=reduced)

    def flush():
        for p in range(0, 16, 2):                                 # 8 pages: two full batches of 4
            yield from dblwr.add(p, 0, "adaptive")
        yield from dblwr.flush_buffered()
        yield from dblwr.wait_idle()

    env.process(flush())
    env.run(until=5.0)
    assert sorted(done) == list(range(0, 16, 2))
    assert ibdata_writes == [batch_bytes, batch_bytes]
    assert counters["Innodb_dblwr_writes"] == 2 and counters["Innodb_dblwr_pages_written"] == 8


@pytest.mark.parametrize("version, shared", [("mysql-5.6", True), ("mysql-5.7", True), ("mariadb-10.11", True),
                                             ("mysql-8.0", False), ("mysql-8.4", False)])
def test_without_file_per_table_the_doublewrite_shares_the_data_file(version, shared):
    """innodb_file_per_table = OFF: the tables are in ibdata1, where 5.6/5.7 and MariaDB keep the
    doublewrite area; 8.0.20+ writes its doublewrite to files of its own."""
    from sim.config import scenario_from_dict
    from sim.engine import Server
    from tests.test_engine import version_doc
    on = Server(scenario_from_dict(version_doc(version), "t"))
    off = Server(scenario_from_dict(version_doc(version, server__innodb_file_per_table=False), "t"))
    assert on.fil.ibdata is not on.fs.files[0]
    assert (off.fil.ibdata is off.fs.files[0]) == shared
    res = off.run()
    assert off.end_violations(res) == []


def log_fil(kind="xfs", flush_method="O_DIRECT", datasync=False, log_o_sync=True, device="fusionio-2012"):
    env = simpy.Environment()
    dev = Device(env, load_profile(device), np.random.default_rng(1))
    spec = make_spec(kind, "2012", "" if kind == "raw" else "noatime,nobarrier")
    fs = Filesystem(env, dev, spec, 3)
    counters = Counters()
    fil = FilIO(env, fs, 1, 16384, flush_method, counters, datasync=datasync, log_o_sync=log_o_sync)
    return fil, fs, counters


def test_a_log_flush_commits_the_journal_once_per_timestamp_tick():
    fil, fs, _ = log_fil()
    tick = fs.spec.costs.timestamp_granularity_s
    first = fil.log_flush_done_s(0.0, 4096)
    assert fs.journal.commits == 1
    again = fil.log_flush_done_s(first, 4096) - first         # same tick: the write and fsync only
    assert fs.journal.commits == 1 and again < first
    fil.log_flush_done_s(tick * 1.5, 4096)                    # next tick: commits again
    assert fs.journal.commits == 2


def test_log_and_journal_writes_are_gathered_by_a_write_cache_and_the_checkpoint_block_is_not():
    """On the cached 12-core array a 4 KiB log write and its journal commit cost their bytes at the
    1 MiB write's bandwidth (13.3 ms of a unit per MiB), not a random write's 1.33 ms each."""
    fil, fs, _ = log_fil(device="seed-12core-disks-2012")
    dev = fs.device
    fil.log_flush_done_s(0.0, 4096)                 # log write + two journal writes, all appended
    assert dev.stats.appends == 3
    assert dev.stats.busy_sum_s < 3 * 4096 / (1 << 20) * 4 / 300 * 2     # within noise of 3 x 52 us
    before = dev.stats.busy_sum_s
    fil.log_flush_done_s(0.0005, 512, append=False)  # the checkpoint block: a random write
    assert dev.stats.appends == 3
    assert dev.stats.busy_sum_s - before > 0.3e-3


@pytest.mark.parametrize("kind,flush_method,datasync,log_o_sync,commits,log_fsyncs", [
    ("xfs", "O_DIRECT", True, True, 0, 2),      # innodb_use_fdatasync / MariaDB: fdatasync()
    ("raw", "O_DIRECT", False, True, 0, 2),     # a raw device has no journal
    ("ext4", "O_DSYNC", False, True, 2, 0),     # MySQL opens the log O_SYNC: no fsync call, still a commit
    ("ext4", "O_DSYNC", False, False, 0, 0),    # MariaDB's O_DSYNC
    ("ext4", "fsync", False, True, 2, 2),
])
def test_which_log_syncs_commit_the_journal(kind, flush_method, datasync, log_o_sync, commits, log_fsyncs):
    fil, fs, counters = log_fil(kind, flush_method, datasync, log_o_sync)
    fil.log_flush_done_s(0.0, 512)
    fil.log_flush_done_s(0.0025, 512)
    assert fs.journal.commits == commits
    assert counters["Innodb_os_log_fsyncs"] == log_fsyncs


def test_the_engine_uses_fdatasync_where_the_server_does():
    def fil_of(*sets):
        return Server(load_scenario("scenarios/default.toml", list(sets))).fil
    assert not fil_of().datasync                                               # 5.6: fsync()
    assert not fil_of("server.version=mysql-8.0").datasync                     # 8.0 default OFF
    assert fil_of("server.version=mysql-8.0", "server.innodb_use_fdatasync=true").datasync
    assert fil_of("server.version=mysql-8.4").datasync                         # 8.4 default ON
    assert fil_of("server.version=mariadb-10.11").datasync                     # always
    assert fil_of("server.version=mariadb-10.11", "server.innodb_flush_method=O_DSYNC").log_o_sync is False
