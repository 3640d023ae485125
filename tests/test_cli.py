"""The command line: tables, JSON, files, and one-line errors with exit code 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_iobench_table_and_json(capsys):
    code, out, err = run_cli(capsys, "iobench", "--fs", "xfs", "--kernel", "2012", "--mode", "direct",
                             "--bs", "4K", "--procs", "1,4", "--workload", "wrnd", "--duration", "50ms",
                             "--jobs", "1")
    assert code == 0, err
    assert "IOPS" in out and "lock wait %" in out and out.count("xfs") == 2
    code, out, _ = run_cli(capsys, "iobench", "--fs", "raw", "--bs", "4K", "--procs", "4", "--duration", "50ms",
                           "--json", "--jobs", "1")
    doc = json.loads(out)
    r = doc["results"][0]
    assert code == 0 and r["case"]["filesystem"] == "raw"
    for key in ("iops", "mib_s", "lat_mean_s", "lat_p99_s", "lock_wait_share"):
        assert key in r


def test_iobench_modern_kernel_runs_without_mount_options(capsys):
    """Left out, the mount options follow the kernel era, so modern XFS (which refuses nobarrier)
    runs as named; nobarrier named on it is refused on --mount-options."""
    code, out, err = run_cli(capsys, "iobench", "--fs", "xfs,ext4", "--kernel", "2012,modern", "--bs", "4K",
                             "--procs", "16", "--duration", "50ms", "--json", "--jobs", "1")
    assert code == 0, err
    cases = [r["case"] for r in json.loads(out)["results"]]
    assert {(c["filesystem"], c["kernel"], c["mount_options"]) for c in cases} == {
        ("xfs", "2012", "noatime,nodiratime,nobarrier"), ("xfs", "modern", "noatime,nodiratime"),
        ("ext4", "2012", "noatime,nodiratime,nobarrier"), ("ext4", "modern", "noatime,nodiratime")}
    code, _, err = run_cli(capsys, "iobench", "--fs", "xfs", "--kernel", "modern", "--mount-options", "nobarrier")
    assert code == 2 and err.startswith("innosim: --mount-options:") and "removed" in err


@pytest.mark.parametrize("args,needle", [
    (["iobench", "--procs", "4,x"], "--procs"),
    (["iobench", "--procs", ""], "--procs"),
    (["iobench", "--fs", "zfs"], "--fs"),
    (["iobench", "--bs", "huge"], "--bs"),
    (["iobench", "--bs", "2M"], "--bs"),
    (["iobench", "--fs", "raw", "--mode", "fsync"], "--mode"),
    (["iobench", "--workload", "seqread"], "--workload"),
    (["iobench", "--kernel", "modern", "--mount-options", "noatime,nobarrier"], "--mount-options"),
    (["iobench", "--duration", "forever"], "--duration"),
    (["iobench", "--seed", "-3"], "--seed"),
    (["iobench", "--device", "/nonexistent.json"], "--device"),
    (["iobench", "--jobs", "-1"], "--jobs"),
    (["validate", "nosuch"], "nosuch"),
    (["run", "/nonexistent.toml"], "/nonexistent.toml"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
])
def test_bad_arguments_one_line_exit_2(capsys, args, needle):
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert out == ""


def test_run_writes_results_and_keeps_old_files_on_bad_input(capsys, tmp_path):
    scen = ROOT / "scenarios" / "seed-iobench-raw.toml"
    out_dir = tmp_path / "out"
    code, out, err = run_cli(capsys, "run", str(scen), "--set", "workload.processes=[4]",
                             "--set", "workload.pattern=wrnd", "--set", "run.duration=50ms", "-o", str(out_dir),
                             "--jobs", "1")
    assert code == 0, err
    results = json.loads((out_dir / "results.json").read_text())["results"]
    assert len(results) == 2  # 4K and 16K
    assert (out_dir / "series.csv").read_text().startswith("case,t_s,iops")
    before = (out_dir / "results.json").read_text()
    code, _, err = run_cli(capsys, "run", str(scen), "--set", "workload.processes=[0]", "-o", str(out_dir))
    assert code == 2 and "workload.processes" in err
    assert (out_dir / "results.json").read_text() == before


def test_run_bad_scenario_file(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[workload]\nprocesses = \"many\"\n")
    code, _, err = run_cli(capsys, "run", str(bad))
    assert code == 2
    assert str(bad) in err and "workload.processes" in err and "allowed" in err


def test_console_script_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[run]\nseed = \"x\"\n")
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(bad)], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "run.seed" in proc.stderr


def test_profiles_lists_builtin(capsys):
    code, out, _ = run_cli(capsys, "profiles")
    assert code == 0 and "fusionio-2012" in out


def _unwritable_dir() -> Path:
    """A folder nothing can be created in, even by root (procfs)."""
    if not Path("/proc/self").is_dir():
        pytest.skip("needs Linux /proc")
    return Path("/proc")


@pytest.mark.parametrize("make_args,needle", [
    (lambda tmp, ro: ["run", "--set", "run.duration=1s", "-o", str(tmp / "afile" / "sub")], "cannot be created"),
    (lambda tmp, ro: ["run", "--set", "run.duration=1s", "-o", str(ro / "innosim-out")], "cannot be created"),
    (lambda tmp, ro: ["sweep", str(ROOT / "scenarios" / "default.toml"), "--grid", "run.duration=1s",
                      "--no-cache", "-o", str(ro / "s.parquet")], "cannot be written"),
    (lambda tmp, ro: ["calibrate", "fio", str(ROOT / "tests" / "data" / "none.json"), "-o",
                      str(ro / "p.json")], "cannot be written"),
    (lambda tmp, ro: ["calibrate", "trace", str(tmp / "t.txt"), "--scenario", str(ROOT / "scenarios" / "default.toml"),
                      "--plot", str(ro / "o.png")], "cannot be written"),
])
def test_unwritable_outputs_refused_before_the_work(capsys, tmp_path, make_args, needle):
    (tmp_path / "afile").write_text("")
    code, out, err = run_cli(capsys, *make_args(tmp_path, _unwritable_dir()))
    assert code == 2, err
    assert needle in err and "allowed" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert out == ""


def test_closed_stdout_keeps_the_output_files(tmp_path):
    out_dir = tmp_path / "out"
    proc = subprocess.run(f"{sys.executable} -m sim.cli run --set run.duration=2s -o {out_dir} | head -1",
                          shell=True, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0
    assert proc.stdout.startswith("scenario default")
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert (out_dir / "summary.json").is_file() and (out_dir / "series_1s.csv").is_file()


def test_config_shows_settings_origins_and_limits(tmp_path):
    root = Path(__file__).resolve().parent.parent
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld]\ninnodb_io_capacity = 700\n")
    r = subprocess.run([sys.executable, "-m", "sim.cli", "config", str(root / "scenarios" / "seed-dbt2-8inst-3g.toml"),
                 "--my-cnf", str(cnf), "--json"], capture_output=True, text=True, cwd=root)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = {x["setting"]: x for x in doc["settings"]}
    assert rows["server.innodb_io_capacity"] == {"setting": "server.innodb_io_capacity", "value": "700",
                                                 "from": f"{cnf} line 2"}
    assert rows["server.innodb_log_file_size"]["value"] == "1536M"
    names = [x["limit"] for x in doc["limits"]]
    assert names[1] == "max_modified_age_sync (sync flush)"
    assert doc["limits"][-1]["bytes"] == 3 << 30
    # 5.6 with 2 x 1536M: max_modified_age_sync is 75.9% of the configured redo (docs/ENGINE.md, Server versions).
    assert round(doc["limits"][1]["pct_of_redo"], 1) == 75.9
    r = subprocess.run([sys.executable, "-m", "sim.cli", "config", "--set", "server.innodb_io_capacity=5"],
                capture_output=True, text=True, cwd=root)
    assert r.returncode == 2 and "innodb_io_capacity" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "sim.cli", "config"], capture_output=True, text=True, cwd=root)
    assert r.returncode == 0 and "server.innodb_io_capacity" in r.stdout and "limits" in r.stdout


def test_config_writes_the_resolved_scenario_with_origins(tmp_path):
    from sim.config import load_scenario

    root = Path(__file__).resolve().parent.parent
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld]\ninnodb_io_capacity = 700\n")
    out = tmp_path / "resolved.toml"
    assert main(["config", str(root / "scenarios" / "seed-dbt2-8inst-3g.toml"), "--my-cnf", str(cnf),
                 "--set", "workload.users=20", "-o", str(out)]) == 0
    text = out.read_text()
    assert f"innodb_io_capacity = 700" in text and f"# {cnf} line 2" in text
    assert "users = 20" in text and "# --set" in text
    a = load_scenario(out)
    b = load_scenario(root / "scenarios" / "seed-dbt2-8inst-3g.toml", ["workload.users=20"], [str(cnf)])
    import dataclasses

    # The resolved file gives the data size the warehouses make, not the warehouses.
    assert (a.server, a.hardware, a.run) == (b.server, b.hardware, b.run)
    assert a.workload == dataclasses.replace(b.workload, warehouses=None)
    assert main(["config", "-o", str(tmp_path / "x.json")]) == 2


def test_jobs_and_workers_are_one_option_everywhere():
    from sim.cli import build_parser
    p = build_parser()
    assert p.parse_args(["run", "--workers", "3"]).jobs == 3
    assert p.parse_args(["iobench", "--workers", "3"]).jobs == 3
    assert p.parse_args(["validate", "flushing", "--workers", "3"]).jobs == 3
    assert p.parse_args(["sweep", "s.toml", "--jobs", "3"]).workers == 3


def test_output_files_get_the_mode_a_plain_write_gives(tmp_path):
    """write_atomic's temporary file is 0o600 (mkstemp); the file it becomes is 0o666 less the
    umask, as open() would make it, and a file written over keeps its own mode."""
    import os
    import stat

    from sim.report import write_atomic

    old = os.umask(0o027)
    try:
        import sim.report as report
        report._UMASK = None                      # read again under this umask
        new = tmp_path / "new.json"
        write_atomic(new, "{}")
        assert stat.S_IMODE(new.stat().st_mode) == 0o640
        kept = tmp_path / "kept.csv"
        kept.write_text("a")
        kept.chmod(0o604)
        write_atomic(kept, b"b")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o604 and kept.read_bytes() == b"b"
    finally:
        os.umask(old)
        report._UMASK = None
