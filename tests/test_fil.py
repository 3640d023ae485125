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
