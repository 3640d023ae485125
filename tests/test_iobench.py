"""Invariants of the I/O layer under IObench load (Hypothesis) and the result's bookkeeping."""

import numpy as np
import pytest
import simpy
from hypothesis import given
from hypothesis import strategies as st

from models.device import READ, WRITE, Device, load_profile
from models.filesystem import Filesystem, Tally, make_spec
from models.iobench import DataFiles
from sim.iobench import IobenchCase, run_case

fs_choice = st.sampled_from([("raw", "2012"), ("ext4", "2012"), ("ext4", "modern"), ("xfs", "2012"),
                             ("xfs", "modern")])


@given(fs=fs_choice, fsync=st.booleans(), read_share=st.sampled_from([0.0, 0.5, 1.0]),
       files=st.integers(1, 8), procs=st.integers(1, 40), per_proc=st.integers(1, 30),
       bs=st.sampled_from([4096, 16384]), seed=st.integers(0, 2**31))
def test_every_submitted_io_completes_exactly_once(fs, fsync, read_share, files, procs, per_proc, bs, seed):
    kind, kernel = fs
    mode_fsync = fsync and kind != "raw"
    env = simpy.Environment()
    dev = Device(env, load_profile("fusionio-2012"), np.random.default_rng(seed))
    opts = "" if kind == "raw" else ("noatime,nobarrier" if kernel == "2012" or kind == "ext4" else "noatime")
    fsm = Filesystem(env, dev, make_spec(kind, kernel, opts), files)
    layout = DataFiles(files, 1 << 30)
    rng = np.random.default_rng(seed)
    completions: dict[int, int] = {}
    submitted = []

    def proc(p):
        for j in range(per_proc):
            io_id = p * 1000 + j
            submitted.append(io_id)
            offset = int(rng.integers(0, (1 << 30) // bs)) * bs
            inode = fsm.files[int(layout.files_of_offsets(np.array([offset]))[0])]
            if rng.random() < read_share:
                gen = fsm.buffered_read(inode, bs, Tally(), False) if mode_fsync else fsm.direct_read(inode, bs, Tally())
            else:
                gen = fsm.write_fsync(inode, bs, Tally()) if mode_fsync else fsm.direct_write(inode, bs, Tally())
            yield from gen
            completions[io_id] = completions.get(io_id, 0) + 1

    for p in range(procs):
        env.process(proc(p))
    env.run()
    assert len(submitted) == procs * per_proc
    assert set(completions) == set(submitted)
    assert all(n == 1 for n in completions.values())
    # Device-level: every data I/O reached the device once (journal writes come on top).
    data_ios = dev.stats.ops[READ] + dev.stats.ops[WRITE] - fsm.journal.commits * fsm.spec.costs.commit_writes
    assert data_ios == procs * per_proc
    assert dev.outstanding(env.now) == 0
    for inode in fsm.files:
        assert not inode.lock.held and inode.lock.waiters == 0
        assert inode.writers_in_flight == 0


@given(fs=fs_choice, pattern=st.sampled_from(["rrnd", "wrnd", "rwrnd"]), bs=st.sampled_from([4096, 16384]),
       procs=st.sampled_from([1, 4, 16, 64, 256]), files=st.sampled_from([1, 2, 8]))
def test_throughput_never_exceeds_device_capacity(fs, pattern, bs, procs, files):
    kind, kernel = fs
    case = IobenchCase(filesystem=kind, kernel=kernel, pattern=pattern, block_bytes=bs, processes=procs,
                       data_files=files, duration_s=0.05, warmup_s=0.02,
                       mount_options="" if kind == "raw" else "noatime")
    r = run_case(case)
    p = load_profile("fusionio-2012")
    read_share = {"rrnd": 1.0, "wrnd": 0.0, "rwrnd": 0.5}[pattern]
    # Capacity at the realized mix; 3% for the service-time noise over a short window.
    realized = r.read_iops / r.iops if r.iops else read_share
    assert r.iops <= p.capacity_iops(realized, bs) * 1.03
    assert r.device_util <= 1.0 + 1e-9


@given(fs=fs_choice, pattern=st.sampled_from(["rrnd", "wrnd", "rwrnd"]), procs=st.sampled_from([1, 4, 16, 64]),
       files=st.sampled_from([1, 4]), fsync=st.booleans())
def test_littles_law_in_steady_state(fs, pattern, procs, files, fsync):
    """Closed loop without think time: processes = throughput x mean latency, within 5%."""
    kind, kernel = fs
    mode = "fsync" if fsync and kind != "raw" else "direct"
    r = run_case(IobenchCase(filesystem=kind, kernel=kernel, pattern=pattern, processes=procs,
                             data_files=files, io_mode=mode, duration_s=0.3, warmup_s=0.05,
                             mount_options="" if kind == "raw" else "noatime"))
    assert r.iops * r.lat_mean_s == pytest.approx(procs, rel=0.05)


@given(fs=fs_choice, seed=st.integers(0, 2**31), procs=st.sampled_from([1, 8, 32]))
def test_same_seed_same_result(fs, seed, procs):
    kind, kernel = fs
    case = IobenchCase(filesystem=kind, kernel=kernel, pattern="rwrnd", processes=procs, seed=seed,
                       duration_s=0.03, warmup_s=0.01, mount_options="" if kind == "raw" else "noatime")
    a, b = run_case(case), run_case(case)
    assert a == b
    assert a.iops_series == b.iops_series


def test_different_seeds_differ():
    a = run_case(IobenchCase(pattern="rwrnd", processes=8, seed=1, duration_s=0.05))
    b = run_case(IobenchCase(pattern="rwrnd", processes=8, seed=2, duration_s=0.05))
    assert a.lat_p99_s != b.lat_p99_s


def test_result_bookkeeping():
    r = run_case(IobenchCase(filesystem="raw", mount_options="", pattern="rwrnd", processes=16,
                             duration_s=0.1, warmup_s=0.02, resolution_s=0.01))
    assert r.ios_measured == pytest.approx(r.iops * 0.1)
    assert r.read_iops + r.write_iops == pytest.approx(r.iops)
    assert 0.4 < r.read_iops / r.iops < 0.6
    assert len(r.iops_series) == 10
    assert np.mean(r.iops_series) == pytest.approx(r.iops, rel=0.01)
    assert r.lat_p50_s <= r.lat_p99_s
    assert r.mib_s == pytest.approx(r.iops * 4096 / 2**20)
    assert r.ios_submitted - r.ios_completed <= 16


def test_data_files_spread_offsets_in_order():
    f = DataFiles(4, 4 << 30)
    assert f.files_of_offsets(np.array([0, (1 << 30) - 1, 1 << 30, (4 << 30) - 1])).tolist() == [0, 0, 1, 3]


@given(n_files=st.integers(1, 8), total=st.integers(1 << 20, 1 << 40),
       offsets=st.lists(st.integers(0, (1 << 40) - 1), min_size=1, max_size=50))
def test_data_files_vectorised_lookup_matches_one_at_a_time(n_files, total, offsets):
    # iobench_process looks files up a batch at a time; each offset as Python integers would.
    f = DataFiles(n_files, total)
    offsets = [o % total for o in offsets]
    one_at_a_time = [min(o // (total // n_files), n_files - 1) for o in offsets]
    assert f.files_of_offsets(np.asarray(offsets, dtype=np.int64)).tolist() == one_at_a_time


@pytest.mark.parametrize("cores", [1, 8, 24])
def test_page_cache_reads_are_bounded_by_the_cores(cores):
    """A cached read is a copy on a core: N processes read at most cores / copy time per second,
    not N / copy time (256 processes once read 51M pages a second here)."""
    case = IobenchCase(filesystem="xfs", kernel="modern", mount_options="noatime", io_mode="fsync",
                       pattern="rrnd", block_bytes=4096, processes=256, data_bytes=64 << 20,
                       page_cache_bytes=1 << 30, cpu_cores=cores, duration_s=0.02, warmup_s=0.005)
    res = run_case(case)
    copy_s = 3e-6 + 2e-6            # FsCosts copy_base_s + copy_per_page_s, one 4K page
    assert res.iops == pytest.approx(cores / copy_s, rel=0.02)
    assert res.lat_mean_s == pytest.approx(256 / res.iops, rel=0.05)      # Little's law
