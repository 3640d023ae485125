"""Crash recovery (models.recovery): the work a crash would leave, its duration, and the engine's
per-second figure."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from models.recovery import MEASURED_RATES, RecoveryRates, pages_to_recover, recovery_s
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


def test_engine_series_counts_every_dirty_page_and_the_summary_names_the_worst_second():
    scn = scenario_from_dict(small_doc(run__duration="6s"), "test")
    srv = Server(scn)
    res = srv.run()
    sec = frame(res, 1.0)
    # Every dirty page has a record from the checkpoint on; pages written since still count.
    assert (sec["recovery_pages"] >= sec["Innodb_buffer_pool_pages_dirty"]).all()
    assert sec["recovery_pages"].max() > 0
    # At the end of the run the figure is the full count over the pool's page state.
    assert sec["recovery_pages"].iloc[-1] == pages_to_recover(srv.pool.newest_lsn, srv.log.last_checkpoint_lsn)
    s = summary(res)
    r = s["crash_recovery"]
    assert r["redo_bytes"] <= r["redo_bytes_max"] and r["pages"] <= r["pages_max"]
    worst = recovery_s(r["redo_bytes"], r["pages"], res.page_read_iops, MEASURED_RATES).total_s
    assert r["total_s"] == pytest.approx(worst)
    measured = sec[~sec["warmup"]]
    assert worst >= recovery_s(measured["log_lsn_checkpoint_age"], measured["recovery_pages"],
                               res.page_read_iops, MEASURED_RATES).total_s.max() - 1e-9


def test_shipped_rates_are_the_fit_of_the_shipped_crashes():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "validation"))
    from fit_recovery_rates import DEFAULT, crashes_of
    from models.recovery import MEASURED_MAX_PAGES, MEASURED_MAX_REDO_BYTES, fit_rates

    crashes = [c for f in DEFAULT for c in crashes_of(f)]
    assert len(crashes) == 12
    fitted = fit_rates(crashes, "")
    for name in ("start_s", "scan_bytes_per_s", "apply_s_per_page", "apply_bytes_per_s"):
        assert getattr(fitted, name) == pytest.approx(getattr(MEASURED_RATES, name), rel=2e-3), name
    assert max(c.redo_bytes for c in crashes) == MEASURED_MAX_REDO_BYTES
    assert max(c.pages for c in crashes) == MEASURED_MAX_PAGES


def test_fit_rates_recovers_known_rates_and_needs_two_crashes():
    from models.recovery import MeasuredCrash, fit_rates

    truth = RecoveryRates(0.3, 150e6, 40e-6, 500e6, "truth")
    crashes = []
    for redo, pages in ((1e8, 1e4), (4e8, 1.2e4), (2e8, 9e4), (7e8, 1.3e5)):
        crashes.append(MeasuredCrash(int(redo), int(pages), scan_s=redo / truth.scan_bytes_per_s,
                                     apply_s=pages * truth.apply_s_per_page + redo / truth.apply_bytes_per_s,
                                     restart_s=truth.start_s + redo / truth.scan_bytes_per_s
                                     + pages * truth.apply_s_per_page + redo / truth.apply_bytes_per_s))
    got = fit_rates(crashes, "fit")
    for name in ("start_s", "scan_bytes_per_s", "apply_s_per_page", "apply_bytes_per_s"):
        assert getattr(got, name) == pytest.approx(getattr(truth, name), rel=1e-6), name
    with pytest.raises(ValueError):
        fit_rates(crashes[:1], "one")


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
    sys.path.insert(0, str(root / "validation" / "live"))
    spec = importlib.util.spec_from_file_location("crash_recovery", root / "validation" / "live" / "crash_recovery.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    parsed = mod.parse_recovery((runs / "special-big" / "restart-1.log").read_text())
    assert parsed["multi_batch_at_lsn"] == 3149142100 and parsed["checkpoint_lsn"] == 2107726230
    assert mod.parse_recovery((runs / "special-1" / "restart-0.log").read_text())["multi_batch_at_lsn"] is None
