"""Filesystem paths: lock modes per kernel era, the journal, mount-option rules."""

import numpy as np
import pytest
import simpy

from models.device import Device, load_profile, profile_from_dict
from models.errors import InputError
from models.filesystem import Filesystem, FsCosts, Tally, make_spec
from sim.iobench import IobenchCase, run_case


def make_fs(kind, kernel, files=1, opts="noatime,nobarrier", profile=None):
    env = simpy.Environment()
    dev = Device(env, profile or load_profile("fusionio-2012"), np.random.default_rng(1))
    return env, dev, Filesystem(env, dev, make_spec(kind, kernel, "" if kind == "raw" else opts), files)


def volatile_cache_profile(flush_s):
    """A 4K device with a volatile write cache whose flush takes flush_s."""
    doc = {"name": "v", "source": "t", "parallelism": 2, "host_overhead_s": 0.0, "volatile_write_cache": True,
           "flush_s": flush_s, "classes": {op: {"4096": {"capacity_iops": 50_000, "latency_qd1_s": 60e-6}}
                                           for op in ("read", "write")}}
    return profile_from_dict(doc, "t")


def aio_write(fs, inode, size, tally):
    """io_submit of one O_DIRECT write, then the wait for its completion (io_getevents)."""
    done = yield from fs.direct_write(inode, size, tally, submit_only=True)
    yield done


def max_in_flight(kind, kernel, path, n_procs=8, opts="noatime,nobarrier"):
    """Largest number of device I/Os in flight at once from n writers on one file."""
    env, dev, fs = make_fs(kind, kernel, opts=opts)
    peak = [0]
    write = (lambda inode, size, tally: aio_write(fs, inode, size, tally)) if path == "aio_write" \
        else getattr(fs, path)

    def proc():
        for _ in range(20):
            yield from write(fs.files[0], 4096, Tally())
            peak[0] = max(peak[0], dev.outstanding(env.now) + 1)

    def watcher():
        while True:
            yield env.timeout(5e-6)
            peak[0] = max(peak[0], dev.outstanding(env.now))

    for _ in range(n_procs):
        env.process(proc())
    env.process(watcher())
    env.run(until=0.05)
    return peak[0]


def test_ext4_2012_direct_write_one_in_flight_per_file():
    assert max_in_flight("ext4", "2012", "direct_write") == 1


def test_ext4_2012_async_direct_write_holds_i_mutex_only_while_submitting():
    # io_submit: the bios are queued and i_mutex dropped, so one file has many writes in flight.
    assert max_in_flight("ext4", "2012", "aio_write") >= 6
    # ... but the submissions themselves queue on i_mutex: 8 writers x 25 writes of 4 KiB to one
    # file take at least 200 submission steps, and far less than 200 synchronous writes.
    env, dev, fs = make_fs("ext4", "2012")
    c = fs.spec.costs
    submit_s = c.dio_write_submit_base_s + c.dio_write_submit_per_page_s
    done = []

    def writer(aio):
        for _ in range(25):
            if aio:
                yield from aio_write(fs, fs.files[0], 4096, Tally())
            else:
                yield from fs.direct_write(fs.files[0], 4096, Tally())
        done.append(env.now)

    for _ in range(8):
        env.process(writer(True))
    env.run()
    t_aio = max(done)
    assert t_aio >= 200 * submit_s
    env, dev, fs = make_fs("ext4", "2012")
    done.clear()
    for _ in range(8):
        env.process(writer(False))
    env.run()
    p = load_profile("fusionio-2012")
    assert max(done) == pytest.approx(200 * (p.host_overhead_s + p.op_class("write", 4096).latency_qd1_s), rel=0.05)
    assert t_aio < 0.5 * max(done)


def test_xfs_2012_async_submission_counts_only_the_writes_being_submitted():
    # One thread submitting one write after another (InnoDB's flushing thread with native AIO)
    # holds the ILOCK for the uncontended step each time, however many writes are in flight.
    env, dev, fs = make_fs("xfs", "2012")
    c = fs.spec.costs
    inode = fs.files[0]
    started, dones = [], []

    def submitter():
        for _ in range(40):
            started.append(env.now)
            dones.append((yield from fs.direct_write(inode, 16384, Tally(), submit_only=True)))

    env.process(submitter())
    env.run()
    steps = np.diff(started)
    assert steps == pytest.approx(np.full(len(steps), c.ilock_base_s))
    assert all(d.processed for d in dones)
    assert inode.submitting == 0 and inode.writers_in_flight == 0


def test_ext4_modern_and_xfs_allow_parallel_direct_writes():
    assert max_in_flight("ext4", "modern", "direct_write", opts="noatime") > 4
    assert max_in_flight("xfs", "2012", "direct_write") > 1
    assert max_in_flight("xfs", "modern", "direct_write", opts="noatime") > 4


def test_ext4_2012_plateau_is_one_over_host_plus_qd1_latency():
    p = load_profile("fusionio-2012")
    lat = p.host_overhead_s + p.op_class("write", 4096).latency_qd1_s
    for procs in (1, 16):
        r = run_case(IobenchCase(filesystem="ext4", io_mode="direct", pattern="wrnd", block_bytes=4096,
                                 processes=procs))
        assert r.iops == pytest.approx(1 / lat, rel=0.02)


def test_xfs_2012_collapse_floor_is_one_over_capped_handoff():
    c = FsCosts()
    floor = 1 / (c.ilock_base_s + c.ilock_per_waiter_s * c.ilock_max_waiters)
    r = run_case(IobenchCase(filesystem="xfs", io_mode="direct", pattern="wrnd", block_bytes=4096, processes=64))
    assert r.iops == pytest.approx(floor, rel=0.02)
    assert r.lock_wait_share > 0.9


def test_ext4_dioread_nolock_removes_read_serialization():
    base = run_case(IobenchCase(filesystem="ext4", pattern="rrnd", block_bytes=4096, processes=64))
    nolock = run_case(IobenchCase(filesystem="ext4", pattern="rrnd", block_bytes=4096, processes=64,
                                  mount_options="noatime,nobarrier,dioread_nolock"))
    assert base.iops == pytest.approx(70_000, rel=0.03)
    assert nolock.iops > 1.3 * base.iops
    assert nolock.lock_wait_share == 0.0


def test_one_commit_covers_every_inode_of_the_transaction():
    env, dev, fs = make_fs("ext4", "2012", files=4)
    done = []

    def writer(i):
        yield from fs.write_fsync(fs.files[i], 4096, Tally())
        done.append(i)

    for i in range(4):
        env.process(writer(i))
    env.run()
    assert sorted(done) == [0, 1, 2, 3]
    # All four inodes were dirtied in transaction 1; fewer commits than fsyncs.
    assert 1 <= fs.journal.commits < 4
    assert fs.journal.committed_tid >= 1


def test_concurrent_fsync_on_one_file_never_deadlocks():
    env, dev, fs = make_fs("ext4", "2012")
    count = [0]

    def writer():
        for _ in range(50):
            yield from fs.write_fsync(fs.files[0], 4096, Tally())
            count[0] += 1

    for _ in range(8):
        env.process(writer())
    env.run(until=1.0)
    assert count[0] == 400


def test_barriers_flush_a_volatile_cache_on_fsync():
    prof = volatile_cache_profile(500e-6)
    for opts, flushes in (("noatime", True), ("noatime,nobarrier", False)):
        env, dev, fs = make_fs("ext4", "modern", opts=opts, profile=prof)
        env.process(fs.write_fsync(fs.files[0], 4096, Tally()))
        env.run()
        assert (dev.stats.flushes > 0) == flushes


@pytest.mark.parametrize("kind,kernel,opts,match", [
    ("zfs", "2012", "", "not known"),
    ("xfs", "1999", "", "kernel era"),
    ("ext4", "2012", "noatime,turbo", "turbo"),
    ("raw", "2012", "noatime", "no mount options"),
    ("xfs", "2012", "dioread_nolock", "ext4 option"),
    ("xfs", "modern", "nobarrier", "removed"),
])
def test_bad_filesystem_choices(kind, kernel, opts, match):
    with pytest.raises(InputError, match=match):
        make_spec(kind, kernel, opts)


def test_fsync_flushes_once_whether_or_not_it_commits():
    """A commit carries the cache flush; an fsync that needs no commit sends its own flush."""
    env, dev, fs = make_fs("ext4", "modern", opts="noatime", profile=volatile_cache_profile(100e-6))

    def two_fsyncs():
        yield from fs.write_fsync(fs.files[0], 4096, Tally())   # dirties the inode: commit
        yield from fs.write_fsync(fs.files[0], 4096, Tally())   # same tick: no commit, own flush

    env.process(two_fsyncs())
    env.run()
    assert env.now < 1e-3
    assert fs.journal.commits == 1
    assert dev.stats.flushes == 2


@pytest.mark.parametrize("kind", ["ext4", "xfs"])
@pytest.mark.parametrize("datasync,commits", [(False, 1), (True, 0)])
def test_an_o_direct_write_dirties_the_timestamps_for_fsync_but_not_fdatasync(kind, datasync, commits):
    """O_DIRECT writes update mtime (file_update_time); fsync() then commits it, fdatasync() does not."""
    env, dev, fs = make_fs(kind, "2012")

    def write_then_sync():
        yield from fs.direct_write(fs.files[0], 16384, Tally())
        yield from fs.fsync(fs.files[0], Tally(), datasync)

    env.process(write_then_sync())
    env.run()
    assert fs.journal.commits == commits


def test_fdatasync_of_an_overwrite_still_flushes_a_volatile_cache():
    env, dev, fs = make_fs("ext4", "modern", opts="noatime", profile=volatile_cache_profile(100e-6))

    def write_then_fdatasync():
        yield from fs.buffered_write(fs.files[0], 4096, Tally())
        yield from fs.fsync(fs.files[0], Tally(), datasync=True)

    env.process(write_then_fdatasync())
    env.run()
    assert fs.journal.commits == 0
    assert dev.stats.flushes == 1


def test_a_computed_commit_costs_its_cpu_and_journal_writes():
    env, dev, fs = make_fs("xfs", "2012")
    c = fs.spec.costs
    done = fs.journal.commit_done_s(0.0)
    # Two dependent 4K writes on an idle device, each at least its QD1 service time.
    assert done >= c.commit_cpu_s + c.commit_writes * 0.5 * dev.profile.op_class("write", 4096).latency_qd1_s
    assert fs.journal.commits == 1


@pytest.mark.parametrize("kind", ["ext4", "xfs"])
def test_fsync_commits_a_change_made_while_it_waited_for_the_inode_lock(kind):
    """The transaction to wait for is read once the lock is held: a write that dirtied the
    timestamps while the fsync queued (ext4 2012: i_mutex; XFS: ILOCK) is committed too."""
    from models.locks import EXCL
    env, dev, fs = make_fs(kind, "2012")
    inode = fs.files[0]
    lock = inode.lock if kind == "ext4" else inode.ilock

    def holder():
        assert lock.acquire(EXCL) is None
        yield env.timeout(2e-3)                   # a new tick: the write dirties the inode
        fs._touch_timestamps(inode)
        lock.release(EXCL)

    env.process(holder())
    env.process(fs.fsync(inode, Tally()))
    env.run()
    assert fs.journal.commits == 1
