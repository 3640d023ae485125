"""Validation suite `flushing`: the seeds' buffer-pool-instance and micro-stall experiments.

Reference rows: validation/reference/flushing.toml (each with where it stands in its article).
Every scenario a row names is run once (scenarios/<name>.toml, its own seed and duration); the
row's metric is computed from the 1 s and 10 s series over the measured window. Output shape is
the `iobench` suite's: published | simulated | error | tolerance | ok per row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from validation.common import (RowResult, check_figure, counts, disagreement_lines, fitted_passes, format_rows, reference_doc, run_scenario_file,
                               run_scenarios, ScenarioSuiteResult, scenario_names, unsettled_notes)

SUITE = "flushing"
CHECKS = ("figure", "at_least", "at_most", "greater", "not_modelled")
SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios"
GIB = float(1 << 30)


@dataclass(frozen=True)
class Row:
    id: str
    where: str
    scenario: str
    b: str | None
    metric: str
    check: str
    published: float | None
    tolerance: float
    measure_from_s: float
    reason: str
    fitted: str = ""             # what calibration constant this figure fixes; "" for a prediction


def case_label(row: Row) -> str:
    return row.scenario + (f" vs {row.b}" if row.b else "")


def load_reference(text: str | None = None) -> list[Row]:
    d, raw = reference_doc(SUITE, CHECKS, text)
    rows = []
    for r in raw:
        rows.append(Row(r["id"], r["where"], r["scenario"], r.get("b"), r["metric"], r["check"],
                        r.get("published"), float(r.get("tolerance", d["tolerance"])),
                        float(r.get("measure_from_s", d["measure_from_s"])), r.get("reason", ""),
                        r.get("fitted", "")))
    return rows


def _run_one(name: str, overrides: tuple[str, ...] = ()) -> dict:
    """Run one scenario (with `--set` style overrides); return what the metrics need (picklable)."""
    from sim.metrics import frame

    _, res, run = run_scenario_file(SCENARIO_DIR / f"{name}.toml", name, overrides)
    return {**run, "ten": frame(res, 10.0), "sync_age": res.limits.max_modified_age_sync}


def metric_value(metric: str, run: dict, from_s: float) -> float:
    sec = run["sec"]
    m = sec[sec["time_s"] > from_s]
    if len(m) == 0:
        raise ValueError(f"{run['name']}: nothing measured after {from_s} s")
    tps = m["tps"].to_numpy()
    med = float(np.median(tps))
    low = tps < 0.5 * med
    if metric == "drop_seconds":
        return float(low.sum())
    if metric == "longest_drop_s":
        best = cur = 0
        for x in low:
            cur = cur + 1 if x else 0
            best = max(best, cur)
        return float(best)
    if metric == "sync_waits_max_per_s":
        return float(m["buffer_flush_sync_waits"].max())
    if metric == "flush_pages_per_s":
        return float(m["pages_flushed"].mean())
    if metric == "redo_use_max_gib":
        return float(m["log_lsn_checkpoint_age"].max()) / GIB
    if metric == "ckpt_age_median_pct":
        return float(np.median(m["checkpoint_age_pct"]))
    if metric == "mod_age_max_over_sync":
        age = (m["log_lsn_current"] - m["log_lsn_buf_pool_oldest"]).max()
        return float(age) / run["sync_age"]
    if metric == "data_writes_per_s":
        return float(m["Innodb_data_writes"].mean())
    if metric == "tps_mean":
        return float(tps.mean())
    if metric == "tps_p99":
        return float(np.percentile(tps, 99))
    if metric == "min_over_median_10s":
        ten = run["ten"]
        t = ten[ten["time_s"] > from_s]["tps"].to_numpy()
        return float(t.min() / np.median(t)) if len(t) else float("nan")
    raise ValueError(f"unknown metric {metric!r}")


def evaluate(row: Row, runs: dict[str, dict]) -> RowResult:
    sim = metric_value(row.metric, runs[row.scenario], row.measure_from_s)
    if row.b is not None:
        other = metric_value(row.metric, runs[row.b], row.measure_from_s)
        sim = sim / other if other else float("inf")
    if row.check == "not_modelled":
        return RowResult(row, row.published if row.published is not None else "-", sim, None, None)
    return check_figure(row, sim)


class SuiteResult(ScenarioSuiteResult):
    def to_json(self) -> dict:
        return {"suite": SUITE, "rows": [r.to_json(case_label(r.row)) for r in self.rows], "ok": self.ok,
                "runs": {k: {"simulated_s": v["simulated_s"], "wall_s": v["wall_s"], "settling": v.get("settling")}
                         for k, v in self.runs.items()}}


def run_suite(jobs: int = 1, progress=None) -> SuiteResult:
    rows = load_reference()
    # The longest run first, so two workers finish together.
    names = sorted(scenario_names(rows), key=lambda n: "tpcc" not in n)
    runs = run_scenarios(_run_one, names, jobs, progress)
    return SuiteResult([evaluate(r, runs) for r in rows], runs)


def format_table(res: SuiteResult) -> str:
    text = format_rows(res.rows, [r.row.scenario + (f" / {r.row.b}" if r.row.b else "") for r in res.rows],
                       [r.row.metric for r in res.rows], "scenario")
    text.append("")
    for r in res.rows:
        if r.ok is None:
            text.append(f"not modelled: {r.row.id}: {r.row.reason}")
    text += disagreement_lines(res.rows, "DISAGREES with the article")
    text += unsettled_notes(res.rows, res.runs)
    n_ok, n_fail, n_nm = counts(res.rows)
    sim_s = sum(v["simulated_s"] for v in res.runs.values())
    wall = sum(v["wall_s"] for v in res.runs.values())
    n_fit = fitted_passes(res.rows)
    fit_note = f" ({n_fit} of them calibration targets, not predictions)" if n_fit else ""
    text.append(f"suite {SUITE}: {n_ok} passed{fit_note}, {n_fail} failed, {n_nm} not modelled "
                f"({len(res.runs)} scenario runs, {sim_s:,.0f} simulated s in {wall:,.0f} s of simulation)")
    return "\n".join(text)
