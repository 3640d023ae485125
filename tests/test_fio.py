"""fio readers: the real data sets in shared/data/fio and hand-made files for each format variant."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from models.errors import InputError
from sim.fio import read_fio_json, read_fio_log

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "fio"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared/data/fio is not beside the project")


@needs_data
@pytest.mark.parametrize("pattern,files,clones", [
    ("fioplot-intel-d3-s4610/*.json", 98, "grouped"),
    ("fioplot-samsung-pm883/*.json", 98, "grouped"),
    ("samyaple-sabrent-rocket4plus-nvme/4k/*.json", 70, "per-clone"),
    ("samyaple-sabrent-rocket4plus-nvme/randrw50/*.json", 28, "per-clone"),
    ("rpi-hothanh7-nvme/*.json", 31, "grouped"),
])
def test_real_data_sets_parse_and_obey_littles_law(pattern, files, clones):
    paths = sorted(DATA.glob(pattern))
    assert len(paths) == files
    errors = []
    for p in paths:
        (job,) = read_fio_json(p)
        if clones == "per-clone":
            assert job.clones == job.numjobs
        else:
            assert job.clones == 1
        d = job.read or job.write
        assert d.clat.percentile_s(99.0) >= d.clat.percentile_s(50.0) > 0
        in_flight = sum(x.iops * x.lat.mean_s for x in (job.read, job.write) if x)
        errors.append(abs(in_flight / job.outstanding - 1))
    # Little's law N = X * R: the parse sanity check of fs-device.md 2.5 (host think time aside).
    assert float(np.median(errors)) < 0.03


@needs_data
def test_known_values_of_real_files():
    (j,) = read_fio_json(DATA / "fioplot-intel-d3-s4610" / "randread-1-1.json")
    assert j.fio_version == "fio-3.1" and j.rw == "randread" and j.block_bytes == 4096
    assert j.read.iops == pytest.approx(7816, rel=1e-3)
    assert j.read.lat.mean_s == pytest.approx(125.4e-6, rel=0.01)
    # slat's stddev (the host path's spread, models.block_layer): 1.00 us about a 10.12 us mean
    assert j.read.slat.mean_s == pytest.approx(10.12e-6, rel=0.01)
    assert j.read.slat.stddev_s == pytest.approx(1.00e-6, rel=0.02)
    (j,) = read_fio_json(DATA / "samyaple-sabrent-rocket4plus-nvme" / "randrw50" / "randrw-4-2.json")
    assert j.read_share == 0.5 and j.clones == 2 and j.outstanding == 8
    assert j.read.iops == pytest.approx(j.write.iops, rel=0.05)
    # two clones pooled: the spread covers both clones' samples and the gap between their means
    assert j.read.slat is not None and j.read.slat.stddev_s >= 0


@needs_data
def test_real_logs():
    lat = read_fio_log(DATA / "samyaple-sabrent-rocket4plus-nvme" / "4k" / "randread-iodepth-16-numjobs-1_lat.1.log")
    assert lat.kind == "lat" and lat.columns == 5 and lat.priority is not None and lat.offset_bytes is None
    assert 50e-6 < float(np.median(lat.value)) < 500e-6                  # ns converted to seconds
    iops = read_fio_log(DATA / "fioplot-intel-d3-s4610" / "randread-iodepth-1-numjobs-1_iops.1.log")
    assert iops.kind == "iops" and iops.columns == 4
    assert float(np.median(iops.value)) == pytest.approx(7816, rel=0.05)
    assert iops.time_s[1] - iops.time_s[0] == pytest.approx(0.25)


def fio3_job(name="job", iops=1000.0, mean_ns=100_000, rw="randread", clone_opts=None, bins=None, ios=60_000):
    lat = {"min": 1, "max": 2, "mean": mean_ns, "stddev": 1,
           "percentile": {"50.000000": mean_ns, "99.000000": 3 * mean_ns, "0.00": 0}}
    if bins:
        lat["bins"] = bins
    active = {"iops": iops, "total_ios": ios, "bw_bytes": iops * 4096, "io_bytes": ios * 4096, "runtime": 60000,
              "slat_ns": {"mean": 1000}, "clat_ns": lat, "lat_ns": dict(lat, mean=mean_ns + 1000)}
    idle = {"iops": 0.0, "total_ios": 0, "io_bytes": 0, "runtime": 0,
            "clat_ns": {"mean": 0}, "lat_ns": {"mean": 0}, "slat_ns": {"mean": 0}}
    opts = {"rw": rw, "bs": "4k", "iodepth": "4"}
    opts.update(clone_opts or {})
    is_read = rw == "randread"
    return {"jobname": name, "groupid": 0, "job options": opts,
            "read": active if is_read else idle, "write": idle if is_read else active}


def write_json(tmp_path, doc, name="r.json", prefix=""):
    p = tmp_path / name
    p.write_text(prefix + json.dumps(doc))
    return p


def test_fio3_defaults_global_options_and_clones(tmp_path):
    doc = {"fio version": "fio-3.33", "global options": {"numjobs": "2"},
           "jobs": [fio3_job(iops=1000), fio3_job(iops=3000, mean_ns=300_000)]}
    (j,) = read_fio_json(write_json(tmp_path, doc))
    assert j.clones == 2 and j.numjobs == 2 and j.iodepth == 4 and not j.direct
    assert j.read.iops == 4000
    # Means weighted by I/O count (equal here).
    assert j.read.clat.mean_s == pytest.approx(200e-6)
    assert j.read.clat.percentile_s(50.0) == pytest.approx(200e-6)


def test_fio2_microseconds(tmp_path):
    job = {"jobname": "old", "groupid": 0, "job options": {"rw": "randwrite", "bs": "16k", "iodepth": "8"},
           "read": {"iops": 0, "total_ios": 0, "clat": {"mean": 0}, "lat": {"mean": 0}},
           "write": {"iops": 500.0, "total_ios": 30000, "bw": 8000, "slat": {"mean": 2.0},
                     "clat": {"mean": 100.0, "percentile": {"50.00": 90, "99.00": 300}},
                     "lat": {"mean": 102.0}}}
    (j,) = read_fio_json(write_json(tmp_path, {"fio version": "fio-2.21", "jobs": [job]}))
    assert j.block_bytes == 16384 and j.write.clat.mean_s == pytest.approx(100e-6)
    assert j.write.clat.percentile_s(99.0) == pytest.approx(300e-6)
    assert j.write.bw_bytes_s == 8000 * 1024


def test_fio2_without_total_ios_pools_clones_by_rate(tmp_path):
    """fio 2.x before total_ios: the clones' latencies are pooled by their rates, not to 0."""
    def clone(iops, mean_us):
        return {"jobname": "old", "groupid": 0, "job options": {"rw": "randread", "bs": "4k", "iodepth": "2"},
                "read": {"iops": iops, "bw": iops * 4, "runtime": 60000,
                         "clat": {"mean": mean_us}, "lat": {"mean": mean_us + 2.0}},
                "write": {"iops": 0, "bw": 0, "runtime": 0, "clat": {"mean": 0}, "lat": {"mean": 0}}}
    (j,) = read_fio_json(write_json(tmp_path, {"fio version": "fio-2.1.3", "jobs": [clone(1000.0, 100.0),
                                                                                     clone(3000.0, 200.0)]}))
    assert j.clones == 2 and j.read.ios == 0 and j.read.iops == 4000.0
    assert j.read.clat.mean_s == pytest.approx((1000 * 100e-6 + 3000 * 200e-6) / 4000)
    assert j.read.lat.mean_s == pytest.approx((1000 * 102e-6 + 3000 * 202e-6) / 4000)


def test_rate_beyond_littles_law_is_refused(tmp_path):
    """A rate that, at the job's mean latency, would keep more I/Os in flight than iodepth x numjobs
    allow (here 1e300 a second) is one clear error naming the key, not a fit that fails later."""
    job = fio3_job(iops=1e300)
    with pytest.raises(InputError) as err:
        read_fio_json(write_json(tmp_path, {"fio version": "fio-3.33", "jobs": [job]}))
    assert "jobs[job].read.iops" in str(err.value) and "iodepth x numjobs = 4" in str(err.value)
    # At the limit of the slack it is still taken: 4 in flight x 2.
    ok = fio3_job(iops=2 * 4 / 101e-6 * 0.999, mean_ns=100_000)
    (j,) = read_fio_json(write_json(tmp_path, {"fio version": "fio-3.33", "jobs": [ok]}, name="ok.json"))
    assert j.read.iops > 79_000


def test_json_plus_bins_give_percentiles(tmp_path):
    bins = {str(v): 1 for v in range(1000, 101_000, 1000)}   # 100 equal buckets, 1..100 us
    doc = {"fio version": "fio-3.20", "jobs": [fio3_job(bins=bins)]}
    (j,) = read_fio_json(write_json(tmp_path, doc))
    assert j.read.clat.percentile_s(50.0) == pytest.approx(50e-6)
    assert j.read.clat.percentile_s(99.0) == pytest.approx(99e-6)


def test_several_documents_text_before_and_gzip(tmp_path):
    doc1 = {"fio version": "fio-3.33", "jobs": [fio3_job("a")]}
    doc2 = {"fio version": "fio-3.33", "jobs": [fio3_job("b", rw="randwrite")]}
    text = "note: both iodepth >= 1 and synchronous I/O engine are selected\n" + json.dumps(doc1) + "\n" + json.dumps(doc2)
    p = tmp_path / "multi.json.gz"
    p.write_bytes(gzip.compress(text.encode()))
    jobs = read_fio_json(p)
    assert [j.name for j in jobs] == ["a", "b"]
    assert jobs[1].write is not None and jobs[1].read is None


@pytest.mark.parametrize("content,match", [
    ("not json at all", "no JSON object"),
    ('{"jobs": [', "invalid JSON"),
    ('{"foo": 1}', "no fio result"),
    (json.dumps({"jobs": [{"jobname": "m", "mixed": {}}]}), "unified_rw_reporting"),
    (json.dumps({"jobs": [fio3_job(rw="trim")]}), "not a read/write workload"),
])
def test_bad_json_files(tmp_path, content, match):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(InputError, match=match) as err:
        read_fio_json(p)
    assert err.value.source == str(p)


@pytest.mark.parametrize("lines,columns,has_offset,has_prio", [
    (["1000, 50000, 0, 4096"], 4, False, False),
    (["1000, 50000, 0, 4096, 0"], 5, False, True),
    (["1000, 50000, 0, 4096, 0x2004"], 5, False, True),
    (["1000, 50000, 0, 4096, 123456789"], 5, True, False),
    (["1000, 50000, 0, 4096, 8192, 1"], 6, True, True),
])
def test_log_column_variants(tmp_path, lines, columns, has_offset, has_prio):
    p = tmp_path / "x_clat.1.log"
    p.write_text("\n".join(lines) + "\n")
    log = read_fio_log(p)
    assert log.columns == columns
    assert (log.offset_bytes is not None) == has_offset
    assert (log.priority is not None) == has_prio
    assert log.value[0] == pytest.approx(50e-6)
    assert read_fio_log(p, fio_major=2).value[0] == pytest.approx(50e-3)


def test_log_gzip_and_errors(tmp_path):
    p = tmp_path / "y_bw.1.log.gz"
    p.write_bytes(gzip.compress(b"250, 100, 1, 0\n500, 200, 1, 0\n"))
    log = read_fio_log(p)
    assert log.kind == "bw" and list(log.value) == [102400.0, 204800.0]
    bad = tmp_path / "z_lat.1.log"
    bad.write_text("1, 2, 0, 4096\n1, 2\n")
    with pytest.raises(InputError, match="line 2"):
        read_fio_log(bad)
    with pytest.raises(InputError, match="log kind"):
        read_fio_log(tmp_path / "noname.log")
    empty = tmp_path / "e_iops.1.log"
    empty.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_fio_log(empty)


def fdatasync_job(sync_mean_ns=500_000, calls=1000, total_ios=0, opts=None):
    """A fio 3.x job of sequential O_DIRECT writes each followed by fdatasync (fio 3.33 leaves the
    sync section's total_ios at 0 and counts the calls in lat_ns.N)."""
    job = fio3_job(rw="write", iops=1500.0, mean_ns=60_000, ios=calls,
                   clone_opts={"rw": "write", "iodepth": "1", "direct": "1", "ioengine": "psync", "fdatasync": "1",
                               **(opts or {})})
    job["sync"] = {"total_ios": total_ios, "lat_ns": {"min": 1, "max": 2, "mean": sync_mean_ns, "stddev": 1.0,
                                                      "N": calls, "percentile": {"50.000000": sync_mean_ns,
                                                                                 "99.000000": 2 * sync_mean_ns}}}
    return job


def test_sync_latency_of_fdatasync_jobs(tmp_path):
    (j,) = read_fio_json(write_json(tmp_path, {"fio version": "fio-3.33", "jobs": [fdatasync_job()]}))
    assert j.sync_call == "fdatasync" and j.sync_every == 1 and j.direct and j.rw == "write"
    assert j.sync_calls == 1000 and j.sync.mean_s == pytest.approx(500e-6)
    assert j.sync.percentile_s(99.0) == pytest.approx(1e-3)
    # Clones pooled by call count (total_ios where fio fills it in).
    doc = {"fio version": "fio-3.36", "jobs": [fdatasync_job(400_000, 3000, total_ios=3000),
                                                fdatasync_job(800_000, 1000, total_ios=1000)]}
    (j,) = read_fio_json(write_json(tmp_path, doc))
    assert j.clones == 2 and j.sync_calls == 4000 and j.sync.mean_s == pytest.approx(500e-6)
    # Jobs without sync calls have none; fsync=4 is a sync every fourth write.
    (plain,) = read_fio_json(write_json(tmp_path, {"fio version": "fio-3.33", "jobs": [fio3_job()]}))
    assert plain.sync is None and plain.sync_call is None and plain.sync_every == 0
    (every4,) = read_fio_json(write_json(tmp_path, {"fio version": "fio-3.33", "jobs": [
        fdatasync_job(opts={"fdatasync": "0", "fsync": "4"})]}))
    assert every4.sync_call == "fsync" and every4.sync_every == 4


@pytest.mark.parametrize("job,where,match", [
    (fdatasync_job(opts={"fdatasync": "often"}), "jobs[job].job options.fdatasync", "not a whole number"),
    (fdatasync_job(sync_mean_ns=0), "jobs[job].sync.lat", "mean latency is 0 for 1000 sync calls"),
    ({**fdatasync_job(), "sync": [1, 2]}, "jobs[job].sync", "is not an object"),
    ({**fdatasync_job(), "sync": {"total_ios": 0, "lat_ns": {"mean": 5, "N": -3}}}, "jobs[job].sync.lat.N",
     "out of range"),
])
def test_bad_sync_sections(tmp_path, job, where, match):
    p = write_json(tmp_path, {"fio version": "fio-3.33", "jobs": [job]})
    with pytest.raises(InputError, match=match) as err:
        read_fio_json(p)
    assert err.value.field == where


def _with(job: dict, path: tuple, value) -> dict:
    """A copy of a fio3_job with one field (by key path) replaced; None as the value deletes it."""
    job = json.loads(json.dumps(job))
    node = job
    for k in path[:-1]:
        node = node[k]
    if value is None:
        node.pop(path[-1])
    else:
        node[path[-1]] = value
    return job


@pytest.mark.parametrize("doc,where,match", [
    # Found by mutating the real data sets (each raised TypeError / ValueError / AttributeError).
    ({"jobs": {"a": 1}}, "jobs", "is not a list"),
    ({"global options": True, "jobs": [fio3_job()]}, "global options", "is not an object"),
    ({"jobs": [_with(fio3_job(), ("job options",), 7)]}, "jobs[job].job options", "is not an object"),
    ({"jobs": [_with(fio3_job(), ("read", "clat_ns", "percentile"), 1.5)]}, "jobs[job].read.clat.percentile",
     "is not an object"),
    ({"jobs": [_with(fio3_job(), ("read", "iops"), {"x": 1})]}, "jobs[job].read.iops", "is not a number"),
    ({"jobs": [_with(fio3_job(), ("read", "total_ios"), "x")]}, "jobs[job].read.total_ios", "is not a number"),
    ({"jobs": [_with(fio3_job(), ("read", "clat_ns", "mean"), [1])]}, "jobs[job].read.clat.mean", "is not a number"),
    ({"jobs": [_with(fio3_job(bins={"1000": 1}), ("read", "clat_ns", "bins", "1000"), "x")]},
     "jobs[job].read.clat.bins.1000", "is not a number"),
    ({"jobs": [_with(fio3_job(), ("read", "bw_bytes"), -5)]}, "jobs[job].read.bw_bytes", "out of range"),
    ({"jobs": [_with(fio3_job(), ("read", "iops"), 0)]}, "jobs[job].read.iops", "total_ios is 60000"),
    ({"jobs": [_with(fio3_job(), ("read", "clat_ns", "mean"), 0)]}, "jobs[job].read.clat", "mean latency is 0"),
    ({"jobs": [fio3_job(clone_opts={"iodepth": "0"})]}, "jobs[job].job options", "iodepth >= 1"),
    ({"jobs": [fio3_job(clone_opts={"iodepth": "1024", "numjobs": "128"})]}, "jobs[job].job options", "65,536"),
    ({"jobs": [fio3_job(clone_opts={"rw": "randrw", "rwmixread": "x"})]}, "jobs[job].job options.rwmixread",
     "not a percentage"),
    ({"jobs": [fio3_job(clone_opts={"rw": "randrw", "rwmixread": "250"})]}, "jobs[job].job options.rwmixread",
     "0 to 100"),
    ({"jobs": [fio3_job(rw="randwrite", clone_opts={"rw": "randread"})]}, "jobs[job]", "did no reads"),
    # Found by validation/fuzz_inputs.py on 2026-11-27 (the pooled spread of clones overflowed).
    ({"jobs": [_with(fio3_job(), ("read", "clat_ns", "stddev"), 1e300)]}, "jobs[job].read.clat.stddev",
     "2\\^64 ns"),
    ({"jobs": [_with(fio3_job(), ("read", "clat_ns", "mean"), 1e30)]}, "jobs[job].read.clat.mean", "out of range"),
])
def test_malformed_fields_get_one_error_naming_them(tmp_path, doc, where, match):
    p = write_json(tmp_path, {"fio version": "fio-3.33", **doc})
    with pytest.raises(InputError, match=match) as err:
        read_fio_json(p)
    assert err.value.field == where and err.value.source == str(p)


def test_log_with_a_bad_offset_or_priority_column(tmp_path):
    p = tmp_path / "o_clat.1.log"
    p.write_text("1000, 50000, 0, 4096, 8192, 1\n2000, 50000, 0, 4096, 8x92, 1\n")
    with pytest.raises(InputError, match="offset and priority columns"):
        read_fio_log(p)


def test_a_directory_stands_for_its_fio_files(tmp_path):
    """`calibrate fio DIR` reads the *.json and *.json.gz files in it, in name order, and nothing
    else; a file named is read whatever its name; a directory without fio files is refused."""
    from sim.fio import fio_files

    for name in ("b.json", "a.json.gz", "SOURCE.md", "c.log"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "sub.json").mkdir()
    assert [p.name for p in fio_files([tmp_path])] == ["a.json.gz", "b.json"]
    assert fio_files([tmp_path / "c.log", str(tmp_path)])[0] == tmp_path / "c.log"
    real = DATA / "fioplot-samsung-pm883"
    if real.is_dir():
        assert len(fio_files([real])) == len(list(real.glob("*.json")))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no fio output") as err:
        fio_files([empty])
    assert err.value.source == str(empty)


def test_calibrate_fio_on_an_empty_directory_is_one_line_and_exit_2(tmp_path, capsys):
    from sim.cli import main

    (tmp_path / "d").mkdir()
    assert main(["calibrate", "fio", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no fio output" in err
