"""Crash recovery (models.recovery): the work a crash would leave, its duration, and the engine's
per-second figure."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from models.recovery import MEASURED_RATES, RecoveryRates, batch_count, pages_to_recover, recovery_s
from sim.config import scenario_from_dict
from sim.engine import Server
from sim.metrics import frame, summary
from tests.test_engine import small_doc

RATES = RecoveryRates(start_s=0.5, scan_bytes_per_s=100e6, apply_s_per_page=0.0, apply_bytes_per_s=200e6,
                      source="test")


def test_pages_to_recover_counts_pages_modified_past_the_checkpoint():
    newest = np.array([0, 10, 20, 30, 30, 5], dtype=np.int64)
    assert pages_to_recover(newest, 0) == 5           # every page ever modified
    assert pages_to_recover(newest, 20) == 3          # the scan starts at the checkpoint LSN
    assert pages_to_recover(newest, 31) == 0


def test_recovery_time_adds_start_scan_and_the_longer_of_reads_and_apply():
    est = recovery_s(200_000_000, 1000, 10_000.0, RATES)
    assert est.scan_s == pytest.approx(2.0)
    assert est.read_s == pytest.approx(0.1)
    assert est.apply_cpu_s == pytest.approx(1.0)
    assert est.total_s == pytest.approx(0.5 + 2.0 + 1.0)
    slow_reads = recovery_s(200_000_000, 50_000, 10_000.0, RATES)     # 5 s of reads: they count
    assert slow_reads.total_s == pytest.approx(0.5 + 2.0 + 5.0)
    per_page = RecoveryRates(0.5, 100e6, 1e-4, 200e6, "test")            # 1000 pages x 0.1 ms more CPU
    assert recovery_s(200_000_000, 1000, 10_000.0, per_page).apply_cpu_s == pytest.approx(1.1)
    with pytest.raises(ValueError):
        recovery_s(1, 1, 0.0, RATES)


@given(st.lists(st.tuples(st.integers(0, 10**10), st.integers(0, 10**7)), min_size=1, max_size=30),
       st.floats(100.0, 1e6))
def test_array_form_matches_and_more_work_never_takes_less(work, iops):
    redo = np.array([w[0] for w in work])
    pages = np.array([w[1] for w in work])
    arr = recovery_s(redo, pages, iops, MEASURED_RATES).total_s
    for k, (r, p) in enumerate(work):
        est = recovery_s(r, p, iops, MEASURED_RATES)
        assert arr[k] == pytest.approx(est.total_s)
        assert recovery_s(r + 1000, p, iops, MEASURED_RATES).total_s >= est.total_s
        assert recovery_s(r, p + 10, iops, MEASURED_RATES).total_s >= est.total_s


def test_engine_series_counts_every_dirty_page_and_the_summary_names_the_worst_second(monkeypatch):
    import sim.engine as engine

    scn = scenario_from_dict(small_doc(run__duration="6s"), "test")
    srv = Server(scn)
    taken = []

    def snapshot(newest, ckpt):
        # The pool's state when the recorder takes the figure (the run goes half a tick past the
        # last sample, so the state at its end may differ by a write or a checkpoint).
        taken.append((newest.copy(), int(ckpt)))
        return pages_to_recover(newest, ckpt)

    monkeypatch.setattr(engine, "pages_to_recover", snapshot)
    res = srv.run()
    sec = frame(res, 1.0)
    # Every dirty page has a record from the checkpoint on; pages written since still count.
    assert (sec["recovery_pages"] >= sec["Innodb_buffer_pool_pages_dirty"]).all()
    assert sec["recovery_pages"].max() > 0
    # The last figure is the full count over the pool's page state when it was taken: every page
    # changed after that checkpoint (not a sample of them).
    newest, ckpt = taken[-1]
    assert sec["recovery_pages"].iloc[-1] == int((newest >= max(1, ckpt)).sum()) > 0
    s = summary(res)
    r = s["crash_recovery"]
    assert r["redo_bytes"] <= r["redo_bytes_max"] and r["pages"] <= r["pages_max"]
    worst = recovery_s(r["redo_bytes"], r["pages"], res.page_read_iops, MEASURED_RATES).total_s
    assert r["total_s"] == pytest.approx(worst)
    measured = sec[~sec["warmup"]]
    assert worst >= recovery_s(measured["log_lsn_checkpoint_age"], measured["recovery_pages"],
                               res.page_read_iops, MEASURED_RATES).total_s.max() - 1e-9
    # A 128 MiB pool holds some 60 MiB of parsed redo: past it, the series counts the batches.
    pool = res.settings.buffer_pool_size_bytes
    assert (sec["recovery_batches"] == batch_count(sec["log_lsn_checkpoint_age"], pool, MEASURED_RATES)).all()
    assert r["batches"] == batch_count(r["redo_bytes"], pool, MEASURED_RATES)


def test_shipped_rates_are_the_fit_of_the_shipped_crashes():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "validation"))
    import math

    from fit_recovery_rates import DEFAULT, DEVICE, clean_restart_s, crashes_of
    from models.device import load_profile
    from models.recovery import MEASURED_MAX_PAGES, MEASURED_MAX_REDO_BYTES, MULTI_BATCH_ERROR_RANGE, fit_batches, fit_rates

    iops = load_profile(str(DEVICE)).capacity_iops(1.0, 16384)
    assert len([c for f in DEFAULT for c in crashes_of(f)]) == 13           # in one batch
    every = [c for f in DEFAULT for c in crashes_of(f, "all")]
    assert len(every) == 24
    fitted = fit_rates(every, "", clean_restart_s(DEFAULT), iops)
    for name in ("start_s", "scan_bytes_per_s", "apply_s_per_page", "apply_bytes_per_s"):
        assert getattr(fitted, name) == pytest.approx(getattr(MEASURED_RATES, name), rel=2e-3), name
    assert max(c.redo_bytes for c in every) == MEASURED_MAX_REDO_BYTES
    assert max(c.pages for c in every) == MEASURED_MAX_PAGES
    # The batch sizes are those read off the multi-batch restarts, and with them the model splits
    # every measured restart into as many batches as its log shows.
    first, later = fit_batches(every)
    assert first == pytest.approx(MEASURED_RATES.first_batch_redo_per_pool_byte, rel=1e-3)
    assert later == pytest.approx(MEASURED_RATES.batch_redo_per_pool_byte, rel=1e-3)
    for c in every:
        n = len(c.batch_pages) or 1
        assert batch_count(c.redo_bytes, c.pool_bytes, MEASURED_RATES) == n
    # And the stated range of the formula's errors on those in several batches is what it is.
    errs = [recovery_s(c.redo_bytes, max(c.batch_pages), iops, MEASURED_RATES).total_s / c.restart_s - 1
            for c in every if c.batch_pages]
    assert len(errs) == 11
    assert (round(min(errs), 2), round(max(errs), 2)) == MULTI_BATCH_ERROR_RANGE
    assert not any(math.isnan(e) for e in errs)


def test_fit_rates_recovers_known_rates_and_needs_two_crashes():
    from models.recovery import MeasuredCrash, fit_rates

    truth = RecoveryRates(0.3, 150e6, 40e-6, 500e6, "truth")
    iops = 1e9                                     # reads never the longer part
    crashes = []
    for redo, pages, batches in ((1e8, 1e4, ()), (4e8, 1.2e4, ()), (2e8, 9e4, ()), (7e8, 1.3e5, (1.2e5, 1.3e5))):
        crashes.append(MeasuredCrash(int(redo), int(pages), scan_s=redo / truth.scan_bytes_per_s,
                                     apply_s=pages * truth.apply_s_per_page + redo / truth.apply_bytes_per_s,
                                     restart_s=truth.start_s + redo / truth.scan_bytes_per_s
                                     + pages * truth.apply_s_per_page + redo / truth.apply_bytes_per_s,
                                     batch_pages=tuple(int(b) for b in batches)))
    got = fit_rates(crashes, "fit", truth.start_s, iops)
    for name in ("start_s", "scan_bytes_per_s", "apply_s_per_page", "apply_bytes_per_s"):
        assert getattr(got, name) == pytest.approx(getattr(truth, name), rel=1e-4), name
    # The scan rate comes from the crashes in one batch only: a slow scan phase of the last one
    # (several batches) does not move it.
    slow = crashes[:3] + [replace(crashes[3], scan_s=99.0)]
    assert fit_rates(slow, "", truth.start_s, iops).scan_bytes_per_s == pytest.approx(truth.scan_bytes_per_s)
    with pytest.raises(ValueError):
        fit_rates(crashes[:1], "one", 0.3, iops)
    with pytest.raises(ValueError):
        fit_rates(crashes[3:] * 2, "none in one batch", 0.3, iops)


def test_multi_batch_crashes_are_told_apart_from_their_logs():
    import importlib.util
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "validation"))
    from fit_recovery_rates import crashes_of

    runs = root / "validation" / "live" / "example" / "crash_recovery"
    big = runs / "special-big" / "crash_recovery.json"
    assert crashes_of(big) == [] and len(crashes_of(big, "multi")) == 2 and len(crashes_of(big, "all")) == 2
    mixed = runs / "special-1g" / "crash_recovery.json"                  # 305 MiB in one batch, then two
    assert len(crashes_of(mixed)) == 1 and len(crashes_of(mixed, "multi")) == 2
    sys.path.insert(0, str(root / "validation" / "live"))
    spec = importlib.util.spec_from_file_location("crash_recovery", root / "validation" / "live" / "crash_recovery.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    parsed = mod.parse_recovery((runs / "special-big" / "restart-1.log").read_text())
    assert parsed["multi_batch_at_lsn"] == 3165913426 and parsed["checkpoint_lsn"] == 2106508628
    assert mod.parse_recovery((runs / "special-1" / "restart-0.log").read_text())["multi_batch_at_lsn"] is None
    # The load's redo per commit, from two status samples.
    start = {"Innodb_lsn_current": 1000, "Com_commit": 10}
    assert mod.redo_per_commit(start, {"Innodb_lsn_current": 51000, "Com_commit": 20}) == 5000.0
    assert mod.redo_per_commit(start, {"Innodb_lsn_current": 9000, "Com_commit": 10}) is None


def test_batch_count_follows_the_first_pass_and_the_rescans():
    r = RecoveryRates(0.5, 100e6, 0.0, 200e6, "test", first_batch_redo_per_pool_byte=0.5, batch_redo_per_pool_byte=1.0)
    assert batch_count(400e6, 1e9, r) == 1                       # the first pass stores it all
    assert batch_count(500e6, 1e9, r) == 1
    assert batch_count(1.2e9, 1e9, r) == 2
    assert batch_count(1.5e9, 1e9, r) == 2 and batch_count(1.51e9, 1e9, r) == 3
    assert list(batch_count(np.array([0.0, 5e8, 5.1e8, 2.7e9]), 1e9, r)) == [1, 1, 2, 4]
    assert batch_count(1e12, 1e9, RATES) == 1                   # without batch figures: one batch
    # A rescan holding no more than the first pass (inf after it: two batches however much is left).
    two = RecoveryRates(0.5, 100e6, 0.0, 200e6, "test", first_batch_redo_per_pool_byte=0.5)
    assert batch_count(9e9, 1e9, two) == 2


@given(st.floats(0, 1e11), st.floats(1e6, 1e11))
def test_more_redo_or_a_smaller_pool_never_needs_fewer_batches(redo, pool):
    n = batch_count(redo, pool, MEASURED_RATES)
    assert n >= 1
    assert batch_count(redo * 1.5 + 1, pool, MEASURED_RATES) >= n
    assert batch_count(redo, pool / 2, MEASURED_RATES) >= n


def test_batches_are_read_off_the_restart_log():
    import sys
    from pathlib import Path

    from models.recovery import MeasuredCrash, fit_batches

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "validation"))
    sys.path.insert(0, str(root / "validation" / "live"))
    from crash_recovery import batches_of
    from fit_recovery_rates import crashes_of

    runs = root / "validation" / "live" / "example" / "crash_recovery"
    b = batches_of((runs / "special-1g-4g" / "restart-0.log").read_text())
    assert b["checkpoint"] == 528015828 and b["oom"] == (3.595, 1006942528) and b["end"] == (5.428, 3257426765)
    assert b["batches"] == [(1157650939, 13048), (3239947961, 18320)] and b["last_pages"] == 7896
    assert batches_of((runs / "special-1" / "restart-0.log").read_text()) is None
    (c,) = crashes_of(runs / "special-1g-4g" / "crash_recovery.json", "multi")
    assert c.batch_redo_bytes == (1157650939 - 528015828, 3239947961 - 1157650939, 3257426765 - 3239947961)
    assert c.batch_pages == (13048, 18320, 7896) and c.pool_bytes == 1 << 30
    assert c.first_pass_redo_bytes == 1006942528 - 528015828
    # Known sizes come back; a restart of two batches has no rescan batch to read.
    crashes = [MeasuredCrash(redo, 1000, 1.0, 1.0, 5.0, batch_redo_bytes=split, batch_pages=(1,) * len(split),
                             first_pass_redo_bytes=500, pool_bytes=1000, skip_s=0.1)
               for redo, split in ((1200, (550, 650)), (2700, (550, 1000, 1000, 150)))]
    assert fit_batches(crashes) == (pytest.approx(0.5), pytest.approx(1.0))
    assert fit_batches(crashes[:1])[1] == float("inf")
    with pytest.raises(ValueError):
        fit_batches([MeasuredCrash(1, 1, 1.0, 1.0, 1.0)])


def test_fit_script_refuses_a_damaged_run_with_one_line(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    good = json.loads((root / "validation" / "live" / "example" / "crash_recovery" / "special-1" /
                       "crash_recovery.json").read_text())
    cases = {"truncated.json": '{"crashes": [', "nostart.json": {**good, "clean_restart_s": None},
             "nopool.json": {**good, "settings": {}},
             "nophases.json": {**good, "crashes": [{k: v for k, v in good["crashes"][0].items() if k != "phases_s"}]}}
    expect = {"truncated.json": "cannot be read as JSON", "nostart.json": "clean_restart_s",
              "nopool.json": "settings.buffer_pool", "nophases.json": "crashes[0]: lacks phases_s"}
    for name, doc in cases.items():
        path = tmp_path / name
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        run = subprocess.run([sys.executable, str(root / "validation" / "fit_recovery_rates.py"), str(path)],
                             capture_output=True, text=True, cwd=root)
        assert run.returncode == 2, (name, run.stderr)
        assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
        assert str(path) in run.stderr and expect[name] in run.stderr, run.stderr
