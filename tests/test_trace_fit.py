"""Trace fitting: a trace the simulator made from known workload quantities is fitted back to
them; the command's bad input gets one clear message."""

import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli import main
from sim.trace import read_trace_bytes
from sim.trace_fit import fit_trace, parse_fit
from trace_synth import samples_csv

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = str(ROOT / "scenarios" / "default.toml")


def test_cpu_per_txn_is_recovered_from_both_starts_and_the_better_kept():
    # One trace, fitted from two starts (the scenario's value, then the trace's bound); each start
    # is the single-start fit, which the two-parameter CLI test below runs alone.
    from sim.config import read_scenario_doc

    text, _ = samples_csv(DEFAULT, ["run.duration=20s", "workload.cpu_per_txn=2.5ms"])
    trace = read_trace_bytes(text.encode(), "synthetic.csv")
    steps = []
    res = fit_trace(read_scenario_doc(Path(DEFAULT)), DEFAULT, trace, parse_fit(["workload.cpu_per_txn"]),
                    warmup_s=4.0, duration_s=20.0, max_evals=12, workers=1, multistart=True,
                    progress=steps.append)
    assert res.values[0] == pytest.approx(2.5e-3, rel=0.03)
    assert [t for t in steps if t.startswith("start ")] == [
        "start 1 of 2: the scenario's values",
        next(t for t in steps if t.startswith("start 2 of 2: cpu_per_txn = min(cores, users)"))]
    assert any(n.startswith("two starts: from the scenario's values RMS") for n in res.notes)
    # The redo per transaction came from the counters, corrected for the log's own overhead.
    from models.oltp import profile
    assert res.fixed["workload.redo_bytes_per_txn"] == pytest.approx(profile("dbt2").redo_bytes_per_txn, rel=0.01)
    err = res.series_error.set_index("column")
    assert abs(err.loc["tps", "mean_error_pct"]) < 2.0
    assert any("not fitted" in n for n in res.notes)


@pytest.mark.slow
def test_two_parameters_from_a_trace_with_other_noise(tmp_path):
    # The trace has another seed than the fit, so its noise is not the simulator's own.
    text, _ = samples_csv(DEFAULT, ["run.duration=40s", "workload.cpu_per_txn=2.5ms",
                                    "workload.pages_modified_per_txn=12", "run.seed=7"])
    path = tmp_path / "trace.csv"
    path.write_text(text)
    out = tmp_path / "fitted.toml"
    png = tmp_path / "overlay.png"
    # Four optimiser steps (12 simulations of 40 s, against 19 with the default 40): both values
    # are inside the tolerances below by then, and the suite has a time budget.
    assert main(["calibrate", "trace", str(path), "--scenario", DEFAULT, "--fit", "workload.cpu_per_txn",
                 "--fit", "workload.pages_modified_per_txn", "--warmup", "5s", "-o", str(out),
                 "--plot", str(png), "--max-evals", "4"]) == 0
    import tomllib

    from sim.units import parse_duration_s

    fitted = tomllib.loads(out.read_text())["workload"]
    assert parse_duration_s(fitted["cpu_per_txn"]) == pytest.approx(2.5e-3, rel=0.05)
    assert fitted["pages_modified_per_txn"] == pytest.approx(12, rel=0.15)
    assert png.stat().st_size > 20_000


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("extra, needle", [
    ([], "--scenario"),
    (["--scenario", DEFAULT, "--fit", "workload.users"], "cannot be fitted"),
    (["--scenario", DEFAULT, "--fit", "workload.cpu_per_txn=5:1"], "lo:hi"),
    (["--scenario", DEFAULT, "--duration", "999s"], "longer than the trace"),
    (["--scenario", DEFAULT, "--warmup", "soon"], "--warmup"),
    (["--scenario", DEFAULT, "-o", "fitted.json"], ".toml"),
    (["--scenario", DEFAULT, "--series", "tps,latency"], "is not a series"),
    (["--scenario", DEFAULT, "--series", "redo"], "needs throughput"),
    (["--scenario", DEFAULT, "--shift", "0", "--shift", "1s"], "2 shifts for 1 trace files"),
    (["--scenario", DEFAULT, "--shift", "later"], "--shift"),
    (["--scenario", DEFAULT, "--shift", "500ms"], "whole seconds"),
])
def test_bad_arguments_exit_2_with_one_message(tmp_path, extra, needle):
    trace = tmp_path / "t.csv"
    trace.write_text("time_s,Com_commit\n" + "".join(f"{k},{k * 100}\n" for k in range(40)))
    r = _cli("calibrate", "trace", str(trace), *extra)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_bad_trace_file_exit_2(tmp_path):
    bad = tmp_path / "junk.bin"
    bad.write_bytes(b"\x00\x01\x02\x03" * 100)
    r = _cli("calibrate", "trace", str(bad), "--scenario", DEFAULT)
    assert r.returncode == 2 and "junk.bin" in r.stderr and "Traceback" not in r.stderr


def test_cpu_start_is_cores_over_measured_throughput():
    import pandas as pd

    from sim.config import load_scenario
    from sim.trace import Trace
    from sim.trace_fit import cpu_start_s

    scn = load_scenario(DEFAULT, ["workload.users=40", "hardware.cpu_cores=12"])
    frame = pd.DataFrame({"time_s": [1.0, 2.0, 3.0, 4.0], "tps": [100.0, 6000.0, 6000.0, 6000.0]})
    trace = Trace("t.csv", "samples", frame, 1.0)
    assert cpu_start_s(trace, scn, warmup_s=1.0) == pytest.approx(12 / 6000.0)
    scn4 = load_scenario(DEFAULT, ["workload.users=4", "hardware.cpu_cores=12"])
    assert cpu_start_s(trace, scn4, warmup_s=1.0) == pytest.approx(4 / 6000.0)
    assert cpu_start_s(trace, scn, warmup_s=10.0) is None             # nothing after the warm-up
    assert cpu_start_s(Trace("t.csv", "samples", frame.drop(columns="tps"), 1.0), scn, 1.0) is None


def test_the_measured_servers_variables_go_into_the_fitted_scenario(tmp_path):
    """`calibrate trace --server-vars`: the live example's variables set the server of the fit; a
    scenario with only hardware and workload then fits like the hand-written one."""
    ex = ROOT / "validation" / "live" / "example"
    scn = tmp_path / "hw.toml"
    scn.write_text(f'[hardware]\ndevice = "{ex / "device.json"}"\nfilesystem = "ext4"\nkernel = "modern"\n'
                   'mount_options = "relatime,discard"\ncpu_cores = 2\ndata_files = 8\n'
                   '[workload]\nkind = "oltp"\nprofile = "sysbench"\ndata_size = "745M"\nusers = 16\n'
                   'pages_read_per_txn = 3.83\npages_modified_per_txn = 5.15\ncpu_per_txn = "1.39ms"\n')
    out = tmp_path / "fitted.toml"
    r = _cli("calibrate", "trace", str(ex / "sysbench.txt"), "--scenario", str(scn), "--server-vars",
             str(ex / "variables.tsv"), "--fit", "workload.cpu_per_txn", "--series", "tps", "--warmup", "20s",
             "--duration", "40s", "--max-evals", "2", "--workers", "1", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "MariaDB 10.11 (version 10.11.19" in r.stderr
    text = out.read_text()
    # The fitted scenario names the measured server's release, which loads back as mariadb-10.11.
    assert 'version = "10.11.19-MariaDB-0+deb12u1"' in text and "innodb_io_capacity = 400" in text
    from sim.config import load_scenario
    assert load_scenario(out).server.version == "mariadb-10.11"
    r = _cli("calibrate", "trace", str(ex / "sysbench.txt"), "--scenario", str(scn), "--server-vars",
             str(tmp_path / "none.tsv"))
    assert r.returncode == 2 and "none.tsv" in r.stderr and "Traceback" not in r.stderr


def test_a_rate_limited_trace_asks_for_workload_rate():
    """A sysbench --rate trace (its queue lines) fitted with a closed-loop scenario gets a note;
    the same scenario with workload.rate does not."""
    from sim.config import read_scenario_doc

    lines = []
    for t in range(1, 9):
        lines.append(f"[ {t}s ] thds: 40 tps: 3000.00 qps: 60000.00 (r/w/o: 42000.00/12000.00/6000.00) "
                     "lat (ms,95%): 9.00 err/s: 0.00 reconn/s: 0.00")
        lines.append(f"[ {t}s ] queue length: 0, concurrency: 20")
    trace = read_trace_bytes("\n".join(lines).encode(), "sb-rate.txt")
    doc = read_scenario_doc(Path(DEFAULT))
    needle = "taken with sysbench --rate"
    res = fit_trace(doc, DEFAULT, trace, parse_fit(["workload.cpu_per_txn"]), warmup_s=2.0, duration_s=8.0,
                    max_evals=2, workers=1)
    assert any(needle in n for n in res.notes)
    doc["workload"]["rate"] = 3000.0
    res = fit_trace(doc, DEFAULT, trace, parse_fit(["workload.cpu_per_txn"]), warmup_s=2.0, duration_s=8.0,
                    max_evals=2, workers=1)
    assert not any(needle in n for n in res.notes)


def test_hot_set_keys_are_refused_for_a_tpcc_population():
    from sim.config import read_scenario_doc
    from sim.errors import InputError

    text, _ = samples_csv(DEFAULT, ["run.duration=4s"])
    trace = read_trace_bytes(text.encode(), "synthetic.csv")
    doc = read_scenario_doc(Path(DEFAULT))
    doc["workload"]["access"] = "tpcc"
    with pytest.raises(InputError, match="NURand"):
        fit_trace(doc, DEFAULT, trace, parse_fit(["workload.hot_data_pct"]), warmup_s=1.0, duration_s=4.0,
                  max_evals=2, workers=1)


def test_wake_race_is_read_from_the_pass_counters_only_without_background_passes():
    import pandas as pd

    from sim.trace_fit import wake_race_estimate

    f = pd.DataFrame({"buffer_flush_adaptive": [0, 1, 0, 0], "buffer_flush_background": [0, 0, 0, 0],
                      "buffer_LRU_batch_num_scan": [5, 6, 4, 5]})
    race, why = wake_race_estimate(f)
    assert race == 1 / 20 and "1 adaptive passes of 20" in why
    f.loc[2, "buffer_flush_background"] = 1
    assert wake_race_estimate(f)[0] is None
    assert wake_race_estimate(f.drop(columns=["buffer_flush_adaptive"]))[0] is None
    assert wake_race_estimate(f.assign(buffer_flush_background=0, buffer_LRU_batch_num_scan=0))[0] is None


def test_wake_race_of_the_registered_384m_capture():
    """The 384M capture (INNODB_METRICS each second): 18 adaptive passes in 318 LRU batches after
    the first 30 s, no background pass."""
    from pathlib import Path

    from sim.trace import read_trace
    from sim.trace_fit import direct_estimates

    root = Path(__file__).resolve().parent.parent / "validation" / "live" / "log-size-384m"
    trace = read_trace(root / "samples.csv.gz")
    est = direct_estimates(trace, 30.0, mariadb=True)
    assert 0.04 < est["workload.cleaner_wake_race"] < 0.07
    assert "workload.cleaner_wake_race" not in direct_estimates(trace, 30.0, mariadb=False)


def test_per_transaction_divides_each_shared_counter_by_the_same_seconds_commits():
    """per_transaction: counters both frames carry, over (t0, t1], per commit of those seconds;
    a counter the trace lacks or did not sample every second is left out."""
    import numpy as np
    import pandas as pd

    from sim.trace_fit import per_transaction

    t = np.arange(1.0, 11.0)
    measured = pd.DataFrame({"time_s": t, "tps": 100.0, "Innodb_data_writes": 250.0,
                             "Innodb_log_writes": 60.0, "Innodb_data_fsyncs": [70.0] * 7 + [np.nan] + [70.0] * 2})
    simulated = pd.DataFrame({"time_s": t, "tps": np.where(t > 5, 200.0, 1000.0), "Innodb_data_writes": 300.0,
                              "Innodb_log_writes": 0.0, "Innodb_data_fsyncs": 80.0, "pages_flushed": 5.0})
    got = per_transaction(measured, simulated, 5.0, 10.0).set_index("column")
    assert list(got.index) == ["Innodb_data_writes", "Innodb_log_writes"]   # fsyncs: a second unsampled
    assert got.loc["Innodb_data_writes", "measured"] == pytest.approx(2.5)
    assert got.loc["Innodb_data_writes", "simulated"] == pytest.approx(1.5)  # only seconds 6-10 count
    assert got.loc["Innodb_data_writes", "ratio"] == pytest.approx(0.6)
    assert got.loc["Innodb_log_writes", "ratio"] == 0.0
    assert per_transaction(measured.assign(tps=0.0), simulated, 5.0, 10.0).empty
