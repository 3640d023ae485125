"""The iobench suite: the reference file, every check kind, and the whole suite (slow)."""

import json

import pytest

from sim.iobench import IobenchCase, IobenchResult
from validation import iobench as suite


def fake_curve(values: dict[int, float], lock=0.0) -> dict[int, IobenchResult]:
    return {p: IobenchResult(case=IobenchCase(processes=p), iops=v, read_iops=0, write_iops=v, mib_s=v * 4096 / 2**20,
                             lat_mean_s=p / v, lat_p50_s=p / v, lat_p99_s=p / v, lock_wait_share=lock,
                             device_queue_mean=0, device_util=0, ios_measured=int(v), ios_submitted=0,
                             ios_completed=0) for p, v in values.items()}


def row(**kw):
    base = dict(id="t", where="w", check="figure", a={}, b=None, metric="peak_iops", b_metric=None,
                published=100.0, tolerance=0.15, from_procs=1, reason="")
    base.update(kw)
    return suite.Row(**base)


def test_reference_rows_are_complete():
    defaults, rows = suite.load_reference()
    assert len(rows) >= 60
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        assert r.where and r.check in suite.CHECKS
        if r.check in ("figure", "at_least", "at_most"):
            assert r.published is not None
        if r.check == "not_modelled":
            assert r.reason
        if r.check == "greater":
            assert r.b is not None
    figures = {r.id for r in rows if r.check == "figure"}
    # The named figures are all there.
    for needed in ("raw.rrnd.4k.peak", "raw.rrnd.16k.peak", "raw.wrnd.4k.peak", "raw.wrnd.16k.peak",
                   "raw.rwrnd.4k.peak", "raw.rwrnd.16k.peak", "ext4.wrnd.16k.max", "xfs.wrnd.4k.4proc",
                   "xfs.wrnd.4k.16proc"):
        assert needed in figures


@pytest.mark.parametrize("check,curve,kw,ok", [
    ("figure", {1: 100.0}, {}, True),
    ("figure", {1: 120.0}, {}, False),
    ("at_least", {1: 90.0}, {}, True),
    ("at_least", {1: 80.0}, {}, False),
    ("at_most", {1: 110.0}, {}, True),
    ("at_most", {1: 120.0}, {}, False),
    ("flat", {1: 10.0, 4: 11.0, 16: 10.5}, {}, True),
    ("flat", {1: 10.0, 4: 20.0}, {}, False),
    ("flat", {1: 1.0, 16: 10.0, 64: 10.5}, {"from_procs": 16}, True),
    ("nondecreasing", {1: 10.0, 4: 20.0, 16: 19.5}, {"tolerance": 0.05}, True),
    ("nondecreasing", {1: 10.0, 4: 20.0, 16: 15.0}, {"tolerance": 0.05}, False),
])
def test_each_check_can_pass_and_fail(check, curve, kw, ok):
    r = suite.evaluate(row(check=check, **kw), fake_curve(curve), None)
    assert r.ok is ok


def test_greater_and_ratio_checks():
    a, b = fake_curve({1: 120.0}), fake_curve({1: 100.0})
    assert suite.evaluate(row(check="greater", b={}, b_metric="peak_iops", tolerance=0.05), a, b).ok is True
    assert suite.evaluate(row(check="greater", b={}, b_metric="peak_iops", tolerance=0.25), a, b).ok is False
    r = suite.evaluate(row(check="figure", b={}, b_metric="peak_iops", published=1.2), a, b)
    assert r.ok is True and r.simulated == pytest.approx(1.2)


def test_not_modelled_is_neither_pass_nor_fail():
    r = suite.evaluate(row(check="not_modelled", reason="x"), fake_curve({1: 5.0}), None)
    assert r.ok is None
    res = suite.SuiteResult([r], ["c"], 1, 1)
    assert res.ok is True


def test_metrics():
    c = fake_curve({1: 100.0, 4: 300.0}, lock=0.25)
    assert suite.metric_value("peak_iops", c) == 300.0
    assert suite.metric_value("iops@1", c) == 100.0
    assert suite.metric_value("lat_mean_us@4", c) == pytest.approx(4 / 300 * 1e6)
    assert suite.metric_value("lock_share@4", c) == 0.25
    with pytest.raises(ValueError):
        suite.metric_value("bogus", c)


@pytest.mark.slow
def test_full_suite_runs_and_reports_every_row(capsys):
    from sim.cli import main

    code = main(["validate", "iobench", "--json", "--jobs", "2"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["suite"] == "iobench"
    _, rows = suite.load_reference()
    assert len(doc["rows"]) == len(rows)
    for r in doc["rows"]:
        assert set(("case", "metric", "published", "simulated", "rel_error", "tolerance", "ok")) <= set(r)
        assert r["simulated"] is not None
    assert code == (0 if doc["ok"] else 1)
    assert doc["ok"] == all(r["ok"] is not False for r in doc["rows"])


def _fake_run(name: str) -> dict:
    import time

    time.sleep(0.2 if name == "slow" else 0.0)
    return {"name": name, "simulated_s": 10.0, "wall_s": 1.0}


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_scenarios_reports_each_run_as_it_ends_and_keeps_the_order(jobs, capsys):
    from validation.common import progress_line, run_scenarios

    seen = []
    show = progress_line("flushing")
    runs = run_scenarios(_fake_run, ["slow", "a", "b"], jobs,
                         lambda done, total, r: (seen.append((done, total, r["name"])), show(done, total, r)))
    assert list(runs) == ["slow", "a", "b"]
    assert [d for d, _, _ in seen] == [1, 2, 3] and {t for _, t, _ in seen} == {3}
    assert sorted(n for _, _, n in seen) == ["a", "b", "slow"]
    if jobs == 2:
        assert seen[-1][2] == "slow"                  # the slow run ends last, and is reported so
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and err[0].startswith("innosim validate flushing: [1/3] ")
    assert err[0].endswith(": 10 s simulated in 1 s")
