"""Device model: profile validation, the pure scheduling step, capacity, Little's law, GC."""

import json

import numpy as np
import pytest
import simpy
from hypothesis import example, given
from hypothesis import strategies as st

from models.device import (_GAP_KEEP_S, READ, WRITE, Device, Draws, IdleTime, builtin_profile_names, load_profile,
                           profile_from_dict)
from models.errors import InputError


def simple_profile(k=2, cap=50_000, lat=100e-6, cv=0.0, assignment="pooled", **extra):
    doc = {"name": "t", "source": "test", "parallelism": k, "host_overhead_s": 0.0,
           "unit_assignment": assignment,
           "classes": {"read": {"4096": {"capacity_iops": cap, "latency_qd1_s": lat, "service_cv": cv}},
                       "write": {"4096": {"capacity_iops": cap, "latency_qd1_s": lat, "service_cv": cv}}}}
    doc.update(extra)
    return profile_from_dict(doc, "test")


def test_builtin_fusionio_profile_matches_seed_maxima():
    p = load_profile("fusionio-2012")
    assert "fusionio-2012" in builtin_profile_names()
    assert p.op_class(READ, 4096).capacity_iops == 100_000
    assert p.op_class(READ, 16384).capacity_iops == 35_000
    assert p.op_class(WRITE, 4096).capacity_iops == 100_000
    assert p.op_class(WRITE, 16384).capacity_iops == 60_000
    assert p.capacity_iops(0.5, 4096) == pytest.approx(78_000)
    assert p.capacity_iops(0.5, 16384) == pytest.approx(60_000)
    assert "Kravtchuk" in p.source


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d.pop("parallelism"), "parallelism"),
    (lambda d: d.update(parallelism=0), "parallelism"),
    (lambda d: d.update(bogus=1), "bogus"),
    (lambda d: d["classes"]["read"]["4096"].update(capacity_iops="fast"), "classes.read.4096.capacity_iops"),
    (lambda d: d["classes"]["read"]["4096"].update(latency_qd1_s=1e-6), "classes.read.4096"),
    (lambda d: d["classes"].pop("write"), "classes"),
    (lambda d: d["classes"]["read"].update({"4k": {"capacity_iops": 1, "latency_qd1_s": 1}}), "classes.read.4k"),
    (lambda d: d.update(unit_assignment="random"), "unit_assignment"),
    (lambda d: d.update(mixed_capacity_iops=5.0), "mixed_capacity_iops"),     # was an AttributeError
    (lambda d: d.update(merge_adjacent_writes="yes"), "merge_adjacent_writes"),
    (lambda d: d.update(rotational=1), "rotational"),
])
def test_profile_errors_name_the_field(mutate, field):
    doc = json.loads((__import__("importlib").resources.files("models") / "profiles" / "fusionio-2012.json").read_text())
    mutate(doc)
    with pytest.raises(InputError) as err:
        profile_from_dict(doc, "p.json")
    assert err.value.source == "p.json"
    assert err.value.field == field


def test_profile_file_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="line 1"):
        load_profile(str(bad))
    with pytest.raises(InputError, match="no such device profile"):
        load_profile(str(tmp_path / "missing.json"))


def test_unloaded_latency_is_qd1_latency():
    p = simple_profile(k=4, cap=40_000, lat=100e-6)
    dev = Device(simpy.Environment(), p, np.random.default_rng(1))
    assert dev.schedule(0.0, READ, 4096) == pytest.approx(100e-6)
    # A second I/O long after: the device is idle again.
    assert dev.schedule(1.0, WRITE, 4096) == pytest.approx(1.0 + 100e-6)


def test_pooled_is_fcfs_k_server():
    # k = 2, service 2/50K = 40 us, pipeline 60 us: the third simultaneous I/O waits 40 us.
    p = simple_profile(k=2, cap=50_000, lat=100e-6)
    dev = Device(simpy.Environment(), p, np.random.default_rng(1))
    done = [dev.schedule(0.0, READ, 4096) for _ in range(3)]
    assert done[0] == pytest.approx(100e-6)
    assert done[1] == pytest.approx(100e-6)
    assert done[2] == pytest.approx(140e-6)
    assert dev.stats.queue_wait_sum_s == pytest.approx(40e-6)


@given(k=st.integers(1, 8), n=st.integers(1, 400), cv=st.sampled_from([0.0, 0.3, 1.0]),
       assignment=st.sampled_from(["pooled", "striped"]), seed=st.integers(0, 2**32 - 1))
def test_throughput_never_exceeds_capacity(k, n, cv, assignment, seed):
    """A burst of n I/Os at t=0 cannot finish faster than capacity allows (up to service noise)."""
    cap = 50_000.0
    p = simple_profile(k=k, cap=cap, lat=k / cap + 20e-6, cv=cv, assignment=assignment)
    dev = Device(simpy.Environment(), p, np.random.default_rng(seed))
    ends = [dev.schedule(0.0, WRITE, 4096) for _ in range(n)]
    busy = dev.stats.busy_sum_s
    # The servers together did `busy` seconds of work; with k of them the last start is at
    # least busy/k - one service after zero, so the rate n/makespan is bounded by k*n/busy.
    makespan = max(ends)
    assert n / makespan <= k * n / busy * (1 + 1e-9) + 1e-9
    if cv == 0.0:
        assert n / makespan <= cap * (1 + 1e-9)


def closed_loop(profile, n, seconds, op=READ, seed=1, size=4096):
    env = simpy.Environment()
    dev = Device(env, profile, np.random.default_rng(seed))
    lat, samples = [], []
    warm = seconds / 5

    def user():
        while True:
            t0 = env.now
            yield dev.submit(op, size)
            if env.now >= warm:
                lat.append(env.now - t0)

    def sampler():
        rng = np.random.default_rng(seed + 1)
        yield env.timeout(warm)
        while True:
            yield env.timeout(float(rng.exponential(seconds / 2000)))
            samples.append(dev.outstanding(env.now))

    for _ in range(n):
        env.process(user())
    env.process(sampler())
    env.run(until=seconds)
    return len(lat) / (seconds - warm), float(np.mean(lat)), float(np.mean(samples))


@given(n=st.integers(1, 48), assignment=st.sampled_from(["pooled", "striped"]),
       cv=st.sampled_from([0.0, 0.3, 1.0]))
def test_littles_law_holds_at_the_device(n, assignment, cv):
    """Time-average outstanding I/Os (sampled at random times) = throughput x mean latency."""
    p = simple_profile(k=3, cap=60_000, lat=100e-6, cv=cv, assignment=assignment)
    x, r, l_sampled = closed_loop(p, n, 0.25)
    assert x * r == pytest.approx(n, rel=0.05)
    assert l_sampled == pytest.approx(n, rel=0.05)


def test_striped_units_reproduce_measured_soft_knee():
    """Intel D3-S4610 4K randread (shared/data/fio, fioplot, fio-3.1): R0 125 us, max 63.9K;
    measured share of max at QD 1..64: 12, 24, 46, 77, 95, 99, 100 %. Three striped units give
    the same knee; pooled servers saturate by QD 8."""
    measured = {1: 0.12, 2: 0.24, 4: 0.46, 8: 0.77, 16: 0.95, 32: 0.99, 64: 1.0}
    striped = simple_profile(k=3, cap=63_862, lat=125e-6, cv=0.3, assignment="striped")
    pooled = simple_profile(k=3, cap=63_862, lat=125e-6, cv=0.3, assignment="pooled")
    for qd, share in measured.items():
        x, _, _ = closed_loop(striped, qd, 0.3)
        assert x / 63_862 == pytest.approx(share, abs=0.06), qd
    x8, _, _ = closed_loop(pooled, 8, 0.3)
    assert x8 / 63_862 > 0.9


def test_depth_curve_lowers_deep_queue_reads_only_for_pure_streams():
    p = load_profile("fusionio-2012")
    x64, _, _ = closed_loop(p, 64, 0.2, READ)
    x256, _, _ = closed_loop(p, 256, 0.2, READ)
    assert x64 == pytest.approx(100_000, rel=0.05)
    assert x256 == pytest.approx(80_000, rel=0.05)


def write_latencies(profile, users, until_s, warm_s=0.0):
    """Latencies of `users` closed-loop 4K writers after warm_s, and the device."""
    env = simpy.Environment()
    dev = Device(env, profile, np.random.default_rng(3))
    lat = []

    def user():
        while True:
            t0 = env.now
            yield dev.submit(WRITE, 4096)
            if env.now > warm_s:
                lat.append(env.now - t0)

    for _ in range(users):
        env.process(user())
    env.run(until=until_s)
    return lat, dev


def test_gc_stalls_raise_the_tail():
    base = simple_profile(k=4, cap=80_000, lat=80e-6, cv=0.2)
    gc = simple_profile(k=4, cap=80_000, lat=80e-6, cv=0.2, gc={"erases_per_write": 0.01, "stall_s": 0.002})

    def p99(profile):
        lat, dev = write_latencies(profile, 8, 0.3)
        return float(np.percentile(lat, 99)), dev.stats.gc_stalls

    t_base, n0 = p99(base)
    t_gc, n1 = p99(gc)
    assert n0 == 0 and n1 > 50
    assert t_gc > 3 * t_base


def test_flush_costs_only_with_a_volatile_cache():
    p = simple_profile(volatile_write_cache=True, flush_s=1e-3)
    dev = Device(simpy.Environment(), p, np.random.default_rng(1))
    assert dev.schedule_flush(0.0) == pytest.approx(1e-3)
    q = simple_profile(volatile_write_cache=False, flush_s=1e-3)
    dev2 = Device(simpy.Environment(), q, np.random.default_rng(1))
    assert dev2.schedule_flush(0.5) == 0.5


def test_utilisation_counts_only_work_inside_the_window():
    # k = 1, service 20 us (cap 50K), no pipeline: 10 I/Os at t=0 keep the unit busy until 200 us.
    p = simple_profile(k=1, cap=50_000, lat=20e-6)
    dev = Device(simpy.Environment(), p, np.random.default_rng(1))
    for _ in range(10):
        dev.schedule(0.0, WRITE, 4096)
    assert dev.busy_s(100e-6) == pytest.approx(100e-6)
    dev.reset_stats(100e-6)
    assert dev.stats.carry_in_s == pytest.approx(100e-6)
    assert dev.busy_s(150e-6) == pytest.approx(50e-6)
    assert dev.busy_s(1.0) == pytest.approx(100e-6)


def test_unit_assignment_per_operation():
    doc = {"name": "t", "source": "t", "parallelism": 3, "host_overhead_s": 0.0,
           "unit_assignment": {"read": "striped", "write": "pooled"},
           "classes": {op: {"4096": {"capacity_iops": 63_862, "latency_qd1_s": 125e-6, "service_cv": 0.3}}
                       for op in ("read", "write")}}
    p = profile_from_dict(doc, "t")
    assert p.unit_assignment == {"read": "striped", "write": "pooled"}
    xr, _, _ = closed_loop(p, 8, 0.3, READ)
    xw, _, _ = closed_loop(p, 8, 0.3, WRITE)
    assert xr / 63_862 == pytest.approx(0.77, abs=0.06)   # address-bound reads collide
    assert xw / 63_862 > 0.9                              # writes go where a unit is free
    doc["unit_assignment"] = {"read": "random"}
    with pytest.raises(InputError) as err:
        profile_from_dict(doc, "t")
    assert err.value.field == "unit_assignment.read"


def test_in_flight_bookkeeping_stays_bounded():
    p = simple_profile(k=2, cap=50_000, lat=100e-6)
    env = simpy.Environment()
    dev = Device(env, p, np.random.default_rng(1))
    for i in range(10_000):
        if i:
            env.run(until=i * 1e-3)
        dev.schedule(env.now, WRITE, 4096)    # one at a time, each long finished before the next
    assert len(dev._inflight) <= 2
    assert not dev._has_gaps


def _cached(cache_pages, k=1, cap=1000, lat=1e-3):
    return simple_profile(k=k, cap=cap, lat=lat, write_cache={"bytes": cache_pages * 4096, "latency_s": 1e-4})


def test_write_cache_acknowledges_at_cache_latency_while_it_has_room():
    dev = Device(simpy.Environment(), _cached(10), np.random.default_rng(1))
    acks = [dev.schedule(0.0, WRITE, 4096) for _ in range(10)]
    assert acks == pytest.approx([1e-4] * 10)                 # destage takes 1 ms each, 10 ms in all
    # The 11th waits for the first write to leave the cache (destaged at 1 ms), the 12th for the second.
    assert dev.schedule(0.0, WRITE, 4096) == pytest.approx(1e-3 + 1e-4)
    assert dev.schedule(0.0, WRITE, 4096) == pytest.approx(2e-3 + 1e-4)
    # Reads are not cached: they queue behind the destage backlog of 12 ms.
    assert dev.schedule(0.0, READ, 4096) == pytest.approx(13e-3)


def test_host_queue_depth_leaves_out_writes_the_cache_acknowledged():
    """iostat's view (submitted, not acknowledged) against the destage backlog behind the cache."""
    env = simpy.Environment()
    dev = Device(env, _cached(10), np.random.default_rng(1))
    for _ in range(12):
        dev.schedule(0.0, WRITE, 4096)          # 10 acknowledged at 0.1 ms, 2 wait for room (1, 2 ms)
    dev.schedule(0.0, READ, 4096)               # not cached: done after the 12 ms of destage
    env.run(until=5e-4)
    assert dev.outstanding(env.now) == 13       # every one still to reach the media
    assert dev.host_outstanding(env.now) == 3   # the two waiting for room and the read
    env.run(until=2.5e-3)
    assert dev.host_outstanding(env.now) == 1
    assert dev.outstanding(env.now) - dev.host_outstanding(env.now) == 10
    assert dev.queue_depths(env.now) == (1, 10)
    env.run(until=20e-3)
    assert dev.outstanding(env.now) == dev.host_outstanding(env.now) == 0


def test_host_queue_depth_is_the_queue_depth_without_a_cache():
    env = simpy.Environment()
    dev = Device(env, simple_profile(k=2, cap=1000, lat=2e-3), np.random.default_rng(1))
    for op in (WRITE, READ, WRITE, WRITE):
        dev.schedule(0.0, op, 4096)
    for t in (0.0, 1e-3, 2.5e-3, 4.5e-3):
        env.run(until=t) if t else None
        assert dev.host_outstanding(env.now) == dev.outstanding(env.now)
        assert dev.queue_depths(env.now) == (dev.outstanding(env.now), 0)


def test_host_queue_bookkeeping_stays_bounded():
    env = simpy.Environment()
    dev = Device(env, _cached(100, cap=50_000, lat=1e-4), np.random.default_rng(1))
    for i in range(10_000):
        if i:
            env.run(until=i * 1e-3)
        dev.schedule(env.now, WRITE, 4096)
    assert len(dev._acked) <= 4097


def test_write_cache_drains_at_the_destage_rate():
    dev = Device(simpy.Environment(), _cached(100), np.random.default_rng(1))
    # 2000 writes/s offered to a 1000/s device: the cache fills in 0.1 s, then writers are held to 1000/s.
    acks = [dev.schedule(i / 2000, WRITE, 4096) for i in range(2000)]
    waits = np.array(acks) - np.arange(2000) / 2000
    assert waits[:150].max() < 1e-3
    assert waits[-1] > 0.5
    assert 1 / np.diff(acks[-500:]).mean() == pytest.approx(1000, rel=0.01)


def test_cached_append_costs_its_bytes_at_the_largest_write_bandwidth():
    # 4K at 1000/s and 1 MiB at 100/s on one unit: the 1 MiB class destages 1 MiB in 10 ms, so a
    # gathered 4K append takes 10 ms / 256 of the unit, against 1 ms as a random 4K write.
    doc = {"bytes": 64 << 20, "latency_s": 1e-4}
    classes = {"4096": {"capacity_iops": 1000, "latency_qd1_s": 1e-3, "service_cv": 0.0},
               "1048576": {"capacity_iops": 100, "latency_qd1_s": 1.2e-2, "service_cv": 0.0}}
    p = profile_from_dict({"name": "t", "source": "test", "parallelism": 1, "host_overhead_s": 0.0,
                           "write_cache": doc, "classes": {"read": classes, "write": classes}}, "test")
    dev = Device(simpy.Environment(), p, np.random.default_rng(1))
    acks = [dev.schedule_append(0.0, 4096) for _ in range(256)]
    assert acks == pytest.approx([1e-4] * 256)
    assert dev.busy_s(1.0) == pytest.approx(1e-2)
    assert dev.stats.appends == 256
    # A random 4K write after them starts once the unit has destaged the 256 appends.
    dev2 = Device(simpy.Environment(), p, np.random.default_rng(1))
    for _ in range(256):
        dev2.schedule(0.0, WRITE, 4096)
    assert dev2.busy_s(1.0) == pytest.approx(256e-3)


def test_append_without_a_write_cache_is_an_ordinary_write():
    a = Device(simpy.Environment(), simple_profile(k=2, cv=0.3), np.random.default_rng(3))
    b = Device(simpy.Environment(), simple_profile(k=2, cv=0.3), np.random.default_rng(3))
    times = [i * 1e-5 for i in range(200)]
    assert [a.schedule_append(t, 4096) for t in times] == [b.schedule_sized(t, WRITE, 4096) for t in times]
    assert a.stats.appends == 0


def test_write_larger_than_the_cache_is_written_through():
    dev = Device(simpy.Environment(), _cached(2), np.random.default_rng(1))
    assert dev.schedule_sized(0.0, WRITE, 4 * 4096) == pytest.approx(4e-3)


@pytest.mark.parametrize("wc,field", [
    ({"bytes": 1 << 20}, "write_cache"),
    ({"bytes": -1, "latency_s": 1e-4}, "write_cache.bytes"),
    ({"bytes": 1.5, "latency_s": 1e-4}, "write_cache.bytes"),
    ({"bytes": 1 << 20, "latency_s": "fast"}, "write_cache.latency_s"),
])
def test_write_cache_errors_name_the_field(wc, field):
    with pytest.raises(InputError) as err:
        simple_profile(write_cache=wc)
    assert err.value.field == field


@pytest.mark.parametrize("prefill", [False, True])
def test_draws_give_the_blocks_in_order_across_refills(prefill):
    """Draws hands out its blocks value by value, drawing the next block only when one runs out:
    the same stream as the generator's blocks taken one after another."""
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    d = Draws(lambda n: rng_a.random(n), block=5, prefill=prefill)
    if not prefill:
        assert rng_a.random() == rng_b.random()        # nothing drawn at construction
        rng_b = np.random.default_rng(7)
        rng_a.bit_generator.state = np.random.default_rng(7).bit_generator.state
    got = [d.next() for _ in range(5)]
    # A block used up draws nothing yet: the next one comes with the next value asked for.
    drawn_one = np.random.default_rng(7)
    drawn_one.random(5)
    assert rng_a.bit_generator.state == drawn_one.bit_generator.state
    got += [d.next() for _ in range(8)]
    want = np.concatenate([rng_b.random(5) for _ in range(3)])[:13].tolist()
    assert got == want


def test_input_error_survives_a_process_boundary():
    """Worker processes (sweeps, iobench grids) send errors back pickled: the fields and the
    message come back whole."""
    import pickle

    err = InputError("s.toml", "server.innodb_log_file_size", "'1X' is not a size", "e.g. 48M, 2G")
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, InputError)
    assert (back.source, back.field, back.problem, back.allowed) == (err.source, err.field, err.problem, err.allowed)
    assert str(back) == str(err)


@given(ios=st.lists(st.tuples(st.floats(0.0, 0.02), st.floats(1e-5, 5e-3)), min_size=1, max_size=60),
       present=st.floats(0.0, 0.01))
def test_one_unit_never_serves_two_ios_at_once(ios, present):
    """Admitted in any time order, ahead of the present or not: every I/O starts at or after its
    admission time, and the unit's busy intervals never overlap."""
    free, gaps, busy = 0.0, IdleTime(), []
    for now, service in ios:
        start, idx = gaps.earliest_start(free, now, service)
        assert start >= now
        free = gaps.book(free, start, service, idx, present)
        busy.append((start, start + service))
        assert gaps.ends == sorted(gaps.ends) and all(a < b for a, b in zip(gaps.starts, gaps.ends))
    busy.sort()
    for (a0, a1), (b0, b1) in zip(busy, busy[1:]):
        assert b0 >= a1 - 1e-12
    for g0, g1 in zip(gaps.starts, gaps.ends):
        assert g1 <= free + 1e-12
        assert not any(b0 < g1 - 1e-12 and b1 > g0 + 1e-12 for b0, b1 in busy)   # idle means idle


def test_an_io_sent_earlier_does_not_queue_behind_one_the_host_has_not_sent():
    """A transaction's later read, computed first, is admitted at its future time; a read another
    thread sends now is served now, not after it (the device sees requests in time order)."""
    p = simple_profile(k=1, cap=1_000, lat=2e-3)               # service 1 ms, pipeline 1 ms
    dev = Device(simpy.Environment(), p, np.random.default_rng(1))
    assert dev.schedule(0.010, READ, 4096) == pytest.approx(0.012)
    assert dev.schedule(0.0, READ, 4096) == pytest.approx(0.002)      # fits before it
    assert dev.schedule(0.0085, READ, 4096) == pytest.approx(0.0105)  # fits before it too
    assert dev.schedule(0.0095, READ, 4096) == pytest.approx(0.013)   # 0.5 ms left: after it
    assert dev.outstanding(0.0) == 4
    assert dev.outstanding(0.0106) == 2            # counted ahead of the present, nothing forgotten
    assert dev.outstanding(0.0) == 4


@given(times=st.lists(st.floats(0.0, 0.05), min_size=1, max_size=80), k=st.integers(1, 4),
       assignment=st.sampled_from(["pooled", "striped"]), seed=st.integers(0, 1000))
def test_time_ordered_admissions_ahead_of_the_present_are_plain_fcfs(times, k, assignment, seed):
    """Admitted in time order, the I/Os complete when they would if each were admitted at the
    present: idle time before an I/O admitted ahead is never taken by a later one."""
    times = sorted(times)
    p = simple_profile(k=k, cap=20_000, lat=k / 20_000 + 50e-6, cv=0.3, assignment=assignment)
    ahead = Device(simpy.Environment(), p, np.random.default_rng(seed))
    env = simpy.Environment()
    live = Device(env, p, np.random.default_rng(seed))
    a, b = [], []
    for t in times:
        a.append(ahead.schedule(t, WRITE, 4096))
        if t > env.now:
            env.run(until=t)
        b.append(live.schedule(env.now, WRITE, 4096))
    assert a == pytest.approx(b, abs=1e-12)


def front_profile(k=8, cap=60_000, lat=110e-6, unit=60e-6, cv=0.0, assignment="striped"):
    doc = {"name": "t", "source": "test", "parallelism": k, "host_overhead_s": 0.0, "front_end": True,
           "unit_assignment": assignment,
           "classes": {op: {"4096": {"capacity_iops": cap, "latency_qd1_s": lat, "service_cv": cv,
                                     "unit_service_s": unit}} for op in ("read", "write")}}
    return profile_from_dict(doc, "test")


def test_front_end_serves_one_io_at_a_time_then_the_units():
    # front end 1/50K = 20 us, unit 40 us, pipeline 40 us; two pooled units
    p = front_profile(k=2, cap=50_000, lat=100e-6, unit=40e-6, assignment="pooled")
    dev = Device(simpy.Environment(), p, np.random.default_rng(1))
    done = [dev.schedule(0.0, READ, 4096) for _ in range(3)]
    assert done[0] == pytest.approx(100e-6)          # 0-20 front end, 20-60 unit 0, + 40
    assert done[1] == pytest.approx(120e-6)          # 20-40 front end, 40-80 unit 1, + 40
    assert done[2] == pytest.approx(140e-6)          # 40-60 front end, unit 0 frees at 60: 60-100
    assert dev.busy_s(1.0) == pytest.approx(3 * 20e-6 * 2)   # the front end's time, once per unit


@given(n=st.integers(1, 48), assignment=st.sampled_from(["pooled", "striped"]),
       cv=st.sampled_from([0.0, 0.3, 1.0]))
def test_littles_law_holds_behind_a_front_end(n, assignment, cv):
    p = front_profile(cv=cv, assignment=assignment)
    x, r, l_sampled = closed_loop(p, n, 0.25)
    assert x * r == pytest.approx(n, rel=0.05)
    assert l_sampled == pytest.approx(n, rel=0.05)
    assert x <= 60_000 * (1.1 if cv else 1.01)      # completions counted in the window: edge effects


def test_front_end_keeps_deep_queues_regular():
    """Intel D3-S4610 4K randwrite at 32 outstanding (shared/data/fio): p99 / p50 = 1.26. Units
    alone (2 striped, the fit without a front end) spread the waits over uneven unit queues; a
    front end with the same capacity queues them in one line."""
    def spread(profile):
        lat, _ = write_latencies(profile, 32, 0.5, warm_s=0.05)
        return float(np.percentile(lat, 99) / np.percentile(lat, 50))

    alone = simple_profile(k=2, cap=58_500, lat=48e-6, cv=0.4, assignment="striped")
    front = front_profile(k=2, cap=58_500, lat=48e-6, unit=16e-6, cv=0.4, assignment="pooled")
    assert spread(alone) > 1.6
    assert spread(front) < 1.4


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.update(front_end="yes"), "front_end"),
    (lambda d: d["classes"]["read"]["4096"].pop("unit_service_s"), "classes.read.4096.unit_service_s"),
    (lambda d: d["classes"]["read"]["4096"].update(unit_service_s=100e-6), "classes.read.4096"),
    (lambda d: d["classes"]["read"]["4096"].update(unit_service_s=-1.0), "classes.read.4096.unit_service_s"),
    (lambda d: d.update(parallelism=1), "classes.read.4096.unit_service_s"),
    (lambda d: d.pop("front_end"), "classes.read.4096.unit_service_s"),
])
def test_front_end_errors_name_the_field(mutate, field):
    doc = {"name": "t", "source": "test", "parallelism": 8, "host_overhead_s": 0.0, "front_end": True,
           "classes": {op: {"4096": {"capacity_iops": 60_000, "latency_qd1_s": 110e-6, "unit_service_s": 60e-6}}
                       for op in ("read", "write")}}
    mutate(doc)
    with pytest.raises(InputError) as err:
        profile_from_dict(doc, "p.json")
    assert err.value.field == field


def test_front_end_large_ios_and_appends_pass_it():
    p = front_profile(k=4, cap=50_000, lat=100e-6, unit=40e-6, assignment="pooled")
    dev = Device(simpy.Environment(), p, np.random.default_rng(1))
    # 8 chunks of 4K: the front end passes them one after another (8 x 20 us), the last chunk's
    # unit time and the pipeline follow
    assert dev.schedule_sized(0.0, WRITE, 8 * 4096) == pytest.approx(8 * 20e-6 + 40e-6 + 40e-6)
    assert dev.busy_s(1.0) == pytest.approx(8 * 20e-6 * 4)
    later = dev.schedule_append(1.0, 4096)
    assert later == pytest.approx(1.0 + 100e-6)


@given(st.lists(st.tuples(st.sampled_from([0.0, 1e-5, 1e-4, 5e-4, 2e-3]),
                          st.sampled_from([READ, WRITE, WRITE, "append", "64K write"])),
                min_size=1, max_size=120),
       st.integers(1, 4), st.sampled_from(["pooled", "striped"]), st.integers(1, 8), st.integers(0, 2**16))
@example([(0.0, WRITE)] * 4, 2, "pooled", 1, 1)
def test_a_write_reaches_the_media_no_earlier_than_the_cache_takes_it(steps, k, assignment, cache_pages, seed):
    """A write that waits for room in a full write cache is acknowledged when room frees; it cannot
    be on the media before then, so the destage backlog (acknowledged, not yet on the media) is
    never negative, whatever unit the write's destage was booked on: random writes, appends
    (schedule_append) and writes larger than the largest class (schedule_sized, spread)."""
    env = simpy.Environment()
    p = simple_profile(k=k, cap=4000, lat=1e-3, cv=0.3, assignment=assignment,
                       write_cache={"bytes": cache_pages * 4096, "latency_s": 1e-4})
    dev = Device(env, p, np.random.default_rng(seed))
    for dt, op in steps:
        if env.now + dt > env.now:
            env.run(until=env.now + dt)
        if op == "append":
            ack = dev.schedule_append(env.now, 4096)
        elif op == "64K write":
            ack = dev.schedule_sized(env.now, WRITE, 65536)
        else:
            ack = dev.schedule(env.now, op, 4096)
        # The counts ahead of the present, up to just past this I/O's acknowledgement.
        for t in np.linspace(env.now, ack + 1e-4, 40):
            host, backlog = dev.queue_depths(float(t))
            assert host >= 0 and backlog >= 0



class _PlainBooking(Device):
    """Device._book as it was before its speed measures: idle pieces forgotten at every admission,
    and whether any unit has idle pieces asked of the pieces themselves each time."""

    def _book(self, now, service, u):
        units, gaps, present = self._units, self._gaps, self.env.now
        if any(gaps) or now > present:
            for g in gaps:
                g.forget_before(present - _GAP_KEEP_S)
            if u < 0:
                best = None
                for v in range(len(units)):
                    st_v, idx_v = gaps[v].earliest_start(units[v], now, service)
                    if best is None or (st_v, units[v]) < best:
                        best, u, start, idx = (st_v, units[v]), v, st_v, idx_v
            else:
                start, idx = gaps[u].earliest_start(units[u], now, service)
            units[u] = gaps[u].book(units[u], start, service, idx, present)
            return start
        if u < 0:
            u = units.index(min(units))
        start = max(now, units[u])
        units[u] = start + service
        return start


@given(st.lists(st.tuples(st.sampled_from([0.0, 0.0, 1e-4, 2e-3]),
                          st.lists(st.tuples(st.floats(-2e-3, 0.01), st.sampled_from([READ, WRITE, "append"])),
                                   min_size=1, max_size=6)),
                min_size=1, max_size=60),
       st.integers(1, 4), st.sampled_from(["pooled", "striped"]), st.booleans(), st.integers(0, 2**16))
def test_booking_shortcuts_change_no_completion(steps, k, assignment, cached, seed):
    """Several admissions at one simulated instant, some ahead of it and some up to a drain step
    (2 ms) late, as the user threads make them: Device._book's shortcuts (old idle pieces
    forgotten once per instant, a kept flag for whether any unit has idle pieces) give every I/O
    the completion time the plain booking gives."""
    extra = {"write_cache": {"bytes": 8 * 4096, "latency_s": 1e-4}} if cached else {}
    p = simple_profile(k=k, cap=20_000, lat=k / 20_000 + 50e-6, cv=0.3, assignment=assignment, **extra)
    env_a, env_b = simpy.Environment(), simpy.Environment()
    a = Device(env_a, p, np.random.default_rng(seed))
    b = _PlainBooking(env_b, p, np.random.default_rng(seed))
    for dt, ios in steps:
        if dt > 0.0:
            env_a.run(until=env_a.now + dt)
            env_b.run(until=env_b.now + dt)
        for offset, op in ios:
            now = max(0.0, env_a.now + offset)
            if op == "append":
                assert a.schedule_append(now, 4096) == b.schedule_append(now, 4096)
            else:
                assert a.schedule(now, op, 4096) == b.schedule(now, op, 4096)
