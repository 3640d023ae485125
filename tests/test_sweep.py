"""innosim sweep: expansion, caching and resumption, tables, figures, Dask identity, bad input."""

import math

import numpy as np
import pandas as pd
import pytest

import sim.sweep as sweep
from models.errors import InputError
from sim.cli import main

TINY = """
[server]
innodb_buffer_pool_size = "64M"
innodb_log_file_size = "8M"
[hardware]
device = "seed-12core-disks-2012"
filesystem = "xfs"
cpu_cores = 4
[workload]
kind = "oltp"
profile = "dbt2"
warehouses = 1
users = 8
[run]
duration = "3s"
seed = 7
"""

BASE = {"server": {"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "8M"},
        "hardware": {"device": "seed-12core-disks-2012", "filesystem": "xfs", "cpu_cores": 4},
        "workload": {"kind": "oltp", "profile": "dbt2", "warehouses": 1, "users": 8},
        "run": {"duration": "3s", "seed": 7}}


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


def test_grid_and_replicates_expand_with_consecutive_seeds():
    spec = sweep.SweepSpec(grid=(sweep.parse_grid("server.innodb_log_file_size=8M,16M"),
                                 sweep.parse_grid("server.innodb_io_capacity=200,400")), replicates=3)
    pts = sweep.expand(BASE, "b.toml", "b", spec, [])
    assert len(pts) == 12
    assert sorted({p.seed for p in pts}) == [7, 8, 9]
    assert {p.overrides for p in pts} == {("server.innodb_log_file_size=8M", "server.innodb_io_capacity=200"),
                                          ("server.innodb_log_file_size=8M", "server.innodb_io_capacity=400"),
                                          ("server.innodb_log_file_size=16M", "server.innodb_io_capacity=200"),
                                          ("server.innodb_log_file_size=16M", "server.innodb_io_capacity=400")}
    assert all(p.scenario.run.seed == p.seed for p in pts)


def test_random_points_are_reproducible_and_inside_the_range():
    rng = sweep.parse_range("server.innodb_log_file_size=8M:64M", BASE, "b.toml")
    assert rng == ("server.innodb_log_file_size", 8 << 20, 64 << 20, True)
    spec = sweep.SweepSpec(ranges=(rng, sweep.parse_range("server.innodb_max_dirty_pages_pct=50:90", BASE, "b")),
                           random_n=5)
    a = sweep.expand(BASE, "b.toml", "b", spec, [])
    b = sweep.expand(BASE, "b.toml", "b", spec, [])
    assert [p.overrides for p in a] == [p.overrides for p in b]
    assert len({p.overrides for p in a}) == 5
    for p in a:
        assert 8 << 20 <= p.scenario.server.innodb_log_file_size_bytes <= 64 << 20
        assert 50 <= p.scenario.server.innodb_max_dirty_pages_pct <= 90


@pytest.mark.parametrize("text,field", [
    ("server.innodb_log_file_size", "server.innodb_log_file_size"),
    ("server.nope=1,2", "server.nope"),
    ("server.innodb_io_capacity=1,,2", "server.innodb_io_capacity"),
    ("server.innodb_io_capacity=1,1", "server.innodb_io_capacity"),
])
def test_bad_grid_names_the_key(text, field):
    with pytest.raises(InputError) as err:
        sweep.parse_grid(text)
    assert err.value.field == field


def test_grid_values_that_are_one_value_are_refused():
    """1G and 1024M are one log size: two identical runs under two labels would look like a result."""
    with pytest.raises(InputError) as err:
        sweep.parse_grid("server.innodb_log_file_size=512M,1G,1024M")
    assert err.value.problem == "'1G' and '1024M' are the same value"
    with pytest.raises(InputError, match="'ON' and 'DETECT_AND_RECOVER' are the same value"):
        sweep.parse_grid("server.innodb_doublewrite=ON,DETECT_AND_RECOVER")
    with pytest.raises(InputError, match="'O_DIRECT' and 'o_direct' are the same value"):
        sweep.parse_grid("server.innodb_flush_method=O_DIRECT,o_direct")
    # A release keeps its row beside the version it runs as; 1 and 1.0 are not one value of an int.
    assert sweep.parse_grid("server.version=mysql-8.0.30,8.0.36")[1] == ("mysql-8.0.30", "8.0.36")
    assert sweep.parse_grid("server.innodb_doublewrite=ON,DETECT_ONLY")[1] == ("ON", "DETECT_ONLY")


def test_bad_range_and_refused_points_are_reported_before_any_run():
    with pytest.raises(InputError, match="low end"):
        sweep.parse_range("server.innodb_io_capacity=400:200", BASE, "b")
    with pytest.raises(InputError, match="not a number"):
        sweep.parse_range("server.innodb_flush_method=1:2", BASE, "b")
    # A 1M log is refused by the server with 100 threads of concurrency: found while expanding.
    spec = sweep.SweepSpec(grid=(sweep.parse_grid("server.innodb_log_file_size=8M,1M"),))
    with pytest.raises(InputError, match="log_calc_max_ages"):
        sweep.expand(BASE, "b", "b", spec, ["server.innodb_thread_concurrency=100"])


def test_confidence_interval_is_students_t():
    runs = pd.DataFrame({"k": [1, 1, 1, 2], **{m: [1.0, 2.0, 3.0, 5.0] for m in sweep.METRICS}})
    ci = sweep.ci_table(runs, ["k"]).set_index("k")
    assert ci.loc[1, "runs"] == 3
    assert ci.loc[1, "tps_mean_mean"] == pytest.approx(2.0)
    assert ci.loc[1, "tps_mean_ci95"] == pytest.approx(4.302653 / math.sqrt(3), rel=1e-5)
    assert math.isnan(ci.loc[2, "tps_mean_ci95"])


def test_sweep_writes_tables_and_figures_then_reuses_the_cache(tiny, tmp_path, monkeypatch, capsys):
    out = tmp_path / "s.parquet"
    cache = tmp_path / "cache"
    args = ["sweep", str(tiny), "--grid", "server.innodb_log_file_size=8M,16M", "--grid",
            "server.innodb_buffer_pool_instances=1,2", "--replicates", "2", "-o", str(out),
            "--cache-dir", str(cache), "--workers", "2"]
    assert main(args + ["--plot"]) == 0
    runs = pd.read_parquet(out)
    ci = pd.read_parquet(tmp_path / "s.ci.parquet")
    assert len(runs) == 8 and len(ci) == 4
    assert set(sweep.METRICS) <= set(runs.columns)
    assert {"server.innodb_log_file_size", "server.innodb_buffer_pool_instances", "seed", "replicate"} <= set(runs.columns)
    assert (ci["runs"] == 2).all()
    assert (runs["tps_mean"] > 0).all()
    assert (tmp_path / "s.csv").exists() and (tmp_path / "s.ci.csv").exists()
    assert (tmp_path / "s.tps_mean.png").stat().st_size > 1000
    assert (tmp_path / "s.tps_mean.heatmap.png").stat().st_size > 1000
    assert len(list(cache.glob("*.json"))) == 8
    capsys.readouterr()

    # Repeated: nothing is simulated, the rows are the same.
    def boom(scn):
        raise AssertionError("a cached run was simulated again")

    monkeypatch.setattr(sweep, "simulate", boom)
    assert main(args[:-2] + ["--workers", "1"]) == 0
    pd.testing.assert_frame_equal(pd.read_parquet(out), runs)
    assert "8/8 runs (8 cached)" in capsys.readouterr().err


def test_an_interrupted_sweep_resumes_with_the_missing_runs_only(tiny, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    args = ["sweep", str(tiny), "--grid", "server.innodb_io_capacity=200,300,400", "-o", str(tmp_path / "a.parquet"),
            "--cache-dir", str(cache), "--workers", "1"]
    assert main(args) == 0
    first = pd.read_parquet(tmp_path / "a.parquet")
    victim = sorted(cache.glob("*.json"))[0]
    victim.unlink()                                     # as if the sweep had stopped before this run
    calls = []
    real = sweep.simulate
    monkeypatch.setattr(sweep, "simulate", lambda scn: calls.append(1) or real(scn))
    assert main(args) == 0
    assert len(calls) == 1
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "a.parquet"), first)


DASK_CHILD = r"""
import sys
from distributed import LocalCluster
from sim.cli import main
if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        sys.exit(main(sys.argv[1:] + ["--dask-scheduler", cluster.scheduler_address]))
"""


def test_dask_cluster_gives_the_same_rows_as_local_workers(tiny, tmp_path):
    """A LocalCluster of two worker processes, started in a fresh interpreter (its workers are
    spawned, and other tests here replace __main__), against local workers."""
    import subprocess
    import sys

    pytest.importorskip("distributed")
    args = ["sweep", str(tiny), "--grid", "server.innodb_log_file_size=8M,16M", "--replicates", "2", "--no-cache"]
    assert main(args + ["-o", str(tmp_path / "local.parquet"), "--workers", "2"]) == 0
    child = tmp_path / "dask_child.py"
    child.write_text(DASK_CHILD)
    done = subprocess.run([sys.executable, str(child)] + args + ["-o", str(tmp_path / "dask.parquet")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "dask.parquet"),
                                  pd.read_parquet(tmp_path / "local.parquet"))


@pytest.mark.parametrize("extra,needle", [
    (["--grid", "server.innodb_log_file_size=8M,lots"], "server.innodb_log_file_size"),
    (["--range", "server.innodb_io_capacity=200:400"], "--random"),
    (["--random", "3"], "--range"),
    (["--replicates", "0"], "--replicates"),
    (["--grid", "server.innodb_io_capacity=200", "--grid", "server.innodb_io_capacity=300"], "twice"),
    (["--grid", "server.innodb_io_capacity=200", "-o", "x.csv"], "Parquet"),
    (["--grid", "server.innodb_io_capacity=100", "--set", "server.innodb_io_capacity_max=50"], "io_capacity"),
])
def test_bad_input_is_one_line_and_exit_2_and_keeps_the_old_output(tiny, tmp_path, capsys, extra, needle):
    out = tmp_path / "keep.parquet"
    out.write_bytes(b"previous results")
    args = ["sweep", str(tiny), "--no-cache", "-o", str(out)] + extra
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "Traceback" not in err[0]
    assert out.read_bytes() == b"previous results"


def test_an_iobench_scenario_is_refused(tmp_path):
    with pytest.raises(InputError, match="cannot be swept"):
        sweep.expand({"workload": {"kind": "iobench"}}, "i.toml", "i", sweep.SweepSpec(), [])


def test_the_printed_table_keeps_small_swept_values(tiny, tmp_path, capsys):
    """A swept time in seconds (cpu_per_txn 2.2 ms = 0.0022) is printed as set, not rounded to 0.0."""
    args = ["sweep", str(tiny), "--grid", "workload.cpu_per_txn=2.2ms,2.3ms", "-o", str(tmp_path / "c.parquet"),
            "--no-cache", "--workers", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "0.0022" in out and "0.0023" in out


def test_figures_of_a_metric_no_point_has():
    """A steady_* metric is empty for runs that did not settle: the figures still draw (no crash)."""
    from sim.sweep_plots import heatmap_figure, line_figure

    ci = pd.DataFrame({"a": ["1G", "1G", "2G", "2G"], "b": [1, 2, 1, 2],
                       "steady_tps_mean_mean": [np.nan] * 4, "steady_tps_mean_ci95": [np.nan] * 4})
    fig = heatmap_figure(ci, "a", "b", "steady_tps_mean")
    assert "no point has a value" in fig.axes[0].get_title()
    line_figure(ci, "a", "steady_tps_mean", "b")
    part = ci.assign(steady_tps_mean_mean=[5000.0, np.nan, 5100.0, np.nan])
    fig = heatmap_figure(part, "a", "b", "steady_tps_mean")
    shown = {t.get_text() for t in fig.axes[0].texts}
    assert shown == {"5,000", "5,100"} and len(fig.axes) == 2       # the two values and a colour bar


def test_releases_swept_keep_their_own_rows_and_say_what_they_run_as(tiny, tmp_path, capsys):
    """Two releases that run as one version (mysql-8.0.36 and 8.0.40 as mysql-8.0.30) are two
    rows labelled as given, simulated once, with the mapping said once each."""
    out = tmp_path / "v.parquet"
    args = ["sweep", str(tiny), "--grid", "server.version=mysql-8.0.36,8.0.40,mysql-5.7", "-o", str(out),
            "--no-cache", "--workers", "1"]
    assert main(args) == 0
    runs = pd.read_parquet(out)
    assert list(runs["server.version"]) == ["mysql-8.0.36", "8.0.40", "mysql-5.7"]
    assert runs.loc[0, "run_key"] == runs.loc[1, "run_key"] != runs.loc[2, "run_key"]
    err = capsys.readouterr().err
    assert err.count("server.version 'mysql-8.0.36' is simulated as mysql-8.0.30") == 1
    assert err.count("server.version '8.0.40' is simulated as mysql-8.0.30") == 1
    assert "mysql-5.7' is simulated" not in err


def test_random_draws_of_a_percentage_follow_the_versions_declaration():
    """innodb_max_dirty_pages_pct is a ulong in 5.6 (whole draws) and a double from 5.7 (any)."""
    key = "server.innodb_max_dirty_pages_pct"
    assert sweep.parse_range(f"{key}=50:90", BASE, "b.toml")[3] is True
    v80 = dict(BASE, server=dict(BASE["server"], version="mysql-8.0"))
    rng = sweep.parse_range(f"{key}=50:90", v80, "b.toml")
    assert rng == (key, 50.0, 90.0, False)
    pts = sweep.expand(v80, "b.toml", "b", sweep.SweepSpec(ranges=(rng,), random_n=4), [])
    values = [p.scenario.server.innodb_max_dirty_pages_pct for p in pts]
    assert all(50 <= x <= 90 for x in values) and any(not float(x).is_integer() for x in values)


def test_a_setting_swept_over_a_boolean_and_a_word_is_written_as_the_grid_wrote_it(tiny, tmp_path):
    """innodb_doublewrite = ON and fast (MariaDB 11.0.6+) are a boolean and a word; the runs table,
    whose Parquet columns hold one kind each, gets both as written."""
    out = tmp_path / "dw.parquet"
    args = ["sweep", str(tiny), "--set", "server.version=mariadb-11.4.2", "--set", "server.innodb_log_file_size=8M",
            "--grid", "server.innodb_doublewrite=ON,fast", "-o", str(out), "--no-cache", "--workers", "1"]
    assert main(args) == 0
    runs = pd.read_parquet(out)
    assert list(runs["server.innodb_doublewrite"]) == ["ON", "fast"]
    assert list(pd.read_csv(out.with_suffix(".csv"))["server.innodb_doublewrite"]) == ["ON", "fast"]
