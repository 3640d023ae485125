"""The live capture kit's fio grid (validation/live/capture.py) with a stand-in fio on PATH."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.calibrate import flush_job
from sim.fio import read_fio_json

KIT = Path(__file__).resolve().parent.parent / "validation" / "live" / "capture.py"

# Writes what fio --output-format=json would for the options it was given: every option in
# "job options", one I/O direction measured, and a sync section when it was asked to sync.
FAKE_FIO = r'''#!PYTHON
import json, sys
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
if "--version" in sys.argv:
    print("fio-3.33"); sys.exit(0)
lat = {"mean": 100000.0, "stddev": 1.0, "N": 1000, "percentile": {"50.000000": 90000, "99.000000": 300000}}
busy = {"iops": 1000.0, "total_ios": 4000, "bw_bytes": 4096000, "io_bytes": 16384000, "runtime": 4000,
        "slat_ns": {"mean": 1000}, "clat_ns": lat, "lat_ns": lat}
idle = {"iops": 0.0, "total_ios": 0, "io_bytes": 0, "runtime": 0, "clat_ns": {"mean": 0}, "lat_ns": {"mean": 0}}
reads = "read" in args["rw"]
opts = {k: v for k, v in args.items() if k not in ("output", "output-format")}
job = {"jobname": args["name"], "groupid": 0, "job options": opts,
       "read": busy if reads else idle, "write": idle if reads else busy}
if "fdatasync" in args:
    job["sync"] = {"total_ios": 0, "lat_ns": dict(lat, mean=250000.0)}
open(args["output"], "w").write(json.dumps({"fio version": "fio-3.33", "jobs": [job]}))
'''


def fake_fio_env(tmp_path: Path) -> dict:
    """An environment whose PATH finds FAKE_FIO as `fio` first."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fio = bindir / "fio"
    fio.write_text(FAKE_FIO.replace("PYTHON", sys.executable))
    fio.chmod(0o755)
    return dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")


def test_fio_grid_alone_ends_with_the_fdatasync_job(tmp_path):
    env = fake_fio_env(tmp_path)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(KIT), str(out), "--skip-db", "--fio-depths", "1,4"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "capture.json").read_text())
    assert "database" not in meta and meta["versions"] == {"fio": "fio-3.33"}
    assert meta["fio_files"][-1] == "fdatasync-4k-qd1-nj1.json" and len(meta["fio_files"]) == 4 * (2 + 2) + 1
    (job,) = read_fio_json(out / "fio" / "fdatasync-4k-qd1-nj1.json")
    assert job.options["direct"] == "1" and job.options["ioengine"] == "psync" and job.rw == "write"
    assert flush_job(job) and job.sync.mean_s == 250e-6
    # Nothing left to do is one clear error.
    r = subprocess.run([sys.executable, str(KIT), str(tmp_path / "none"), "--skip-db", "--skip-fio"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == "capture: --skip-fio and --skip-db leave nothing to capture"


def test_fdatasync_under_load_runs_the_job_beside_spinning_processes(tmp_path):
    env = fake_fio_env(tmp_path)
    script = KIT.parent / "fdatasync_under_load.py"
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(script), str(out), "--busy", "0,1", "--seconds", "1"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert [row["busy"] for row in summary["rows"]] == [0, 1]
    assert all(row["sync_mean_us"] == 250.0 and row["sync_calls"] == 1000 for row in summary["rows"])
    (job,) = read_fio_json(out / "busy-1.json")
    assert job.name == "fdatasync-4k-qd1-nj1-busy1" and flush_job(job)
    assert not (out / "fdatasync.dat").exists()
    r = subprocess.run([sys.executable, str(script), str(out), "--busy", "two"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "comma-separated whole numbers" in r.stderr and "Traceback" not in r.stderr


def test_group_commit_compares_a_capture_with_the_engine(tmp_path):
    """validation/live/group_commit.py on the shipped 2-thread capture, with a short simulation."""
    script = KIT.parent / "group_commit.py"
    t2 = KIT.parent / "threads-2026-11-29" / "t2"
    r = subprocess.run([sys.executable, str(script), str(t2), "--seconds", "4", "--warmup", "1"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (row,) = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("t2")]
    assert row[1] == "2" and row[4] == "1.000"       # measured: every commit its own redo write
    assert 0.9 < float(row[5]) <= 1.1                 # the engine with 2 users alike
    assert row[-2] == "0"                             # 2 users on 2 cores: the redo writer never waits for one
    (tmp_path / "capture.json").write_text(json.dumps({"settings": {"threads": 2}}))
    r = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "samples.csv" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, str(script), str(tmp_path / "nowhere")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "settings.threads" in r.stderr and "Traceback" not in r.stderr


def test_schedstat_sums_a_process_threads():
    """The kit's scheduling counters: this process's threads summed, None for a process that is gone."""
    sys.path.insert(0, str(KIT.parent))
    try:
        import capture
    finally:
        sys.path.remove(str(KIT.parent))
    first = capture.schedstat(os.getpid())
    if first is None:
        pytest.skip("this kernel has no /proc/PID/task/TID/schedstat")
    import time
    end = time.perf_counter() + 0.05
    while time.perf_counter() < end:                  # 50 ms on a CPU ...
        pass
    time.sleep(0.02)                                  # ... then a switch, which updates the counters
    second = capture.schedstat(os.getpid())
    assert second[0] > first[0] and second[2] >= first[2] and second[1] >= first[1]
    assert capture.schedstat(2 ** 22 + 12345) is None


def test_group_commit_reads_the_run_queue_wait(tmp_path):
    import csv
    import gzip
    sys.path.insert(0, str(KIT.parent))
    try:
        import group_commit
    finally:
        sys.path.remove(str(KIT.parent))
    rows = [{"time_s": str(t), "server_runq_wait_ns": str(t * 3_000_000_000), "server_runs": str(t * 10_000)}
            for t in range(30)]
    path = tmp_path / "samples.csv.gz"
    with gzip.open(path, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert group_commit.runq_wait_us(path, 15.0) == 300.0        # 3 s of waits over 10,000 runs a second
    plain = tmp_path / "plain.csv"
    plain.write_text("time_s,Com_commit\n1,5\n2,9\n")
    assert group_commit.runq_wait_us(plain, 0.0) != group_commit.runq_wait_us(plain, 0.0)   # NaN


def test_group_commit_renewal_groups_by_regularity_and_busy_time():
    """validation/live/group_commit_renewal.py: a longer-busy writer and a more random stream of
    commits both put more commits in a write; bad arguments exit 2 without a traceback."""
    sys.path.insert(0, str(KIT.parent))
    try:
        import group_commit_renewal as gr
    finally:
        sys.path.remove(str(KIT.parent))
    alone = gr.writes_per_commit(1000.0, 1e-6, 0.0, 2, 1.0, n_commits=20_000)
    busy = gr.writes_per_commit(1000.0, 175e-6, 300e-6, 2, 1.0, n_commits=20_000)
    regular = gr.writes_per_commit(1000.0, 175e-6, 300e-6, 2, 0.3, n_commits=20_000)
    assert alone > 0.99 and busy < 0.8 and regular > busy
    r = subprocess.run([sys.executable, str(KIT.parent / "group_commit_renewal.py"), "--rate", "0", "--wait-us", "5"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--rate must be > 0" in r.stderr and "Traceback" not in r.stderr
