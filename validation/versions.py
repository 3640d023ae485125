"""Validation suite `versions`: every server version's limits, where its mechanisms hold the redo
age in a run, the seed's 8-vs-1-instance contrast on 5.6 against 5.7, and the live MariaDB run.

Reference rows: validation/reference/versions.toml. Threshold rows compute the version's limits
(models.redo) for the row's redo size; run rows run scenarios/<name>.toml once each and compute
the row's metric over the measured window. Live rows compare a MariaDB 10.11 scenario of the
live-capture kit's setup with what that run measured (the row's `live` capture under
validation/live/, `example` unless named), read with sim.trace when the suite runs; a live ratio
row (`b`, `b_live`) compares simulated a / b with measured a / b. Rows with a `fitted` key check a
figure the scenario's workload was fitted to (`innosim calibrate trace` on that capture): they show
the fit holds, not a prediction. Output shape: published | simulated | error | tolerance | ok.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from models.redo import redo_limits
from models.versions import version as version_of
from sim.units import parse_size_bytes
from validation.common import (RowResult, counts, disagreement_lines, fitted_passes, reference_doc, run_scenario_file, run_scenarios, ScenarioSuiteResult,
                               scenario_names, unsettled_notes)
from validation.common import fmt_value as _fmt

SUITE = "versions"
CHECKS = ("within_pp", "at_least_pp", "figure", "at_least", "at_most", "report")
ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = ROOT / "scenarios"
LIVE_ROOT = ROOT / "validation" / "live"
LIVE_TPS_FROM_S, LIVE_AGE_FROM_S, LIVE_TO_S = 20.0, 60.0, 180.0
LIVE_DROP_SHARE = 0.5          # live_drop_seconds: seconds below this share of the window's median


@dataclass(frozen=True)
class Row:
    id: str
    kind: str
    where: str
    metric: str
    check: str
    published: float | str | None
    tolerance: float
    measure_from_s: float
    reason: str
    scenario: str | None = None
    b: str | None = None
    version: str | None = None
    size: dict | None = None
    live: str = "example"        # the capture a live row's measured figure comes from (validation/live/<live>)
    b_live: str | None = None    # with `b` on a live row: the capture of the ratio's denominator
    fitted: str = ""             # what the scenario fitted to this figure; "" for a prediction


def load_reference(text: str | None = None) -> list[Row]:
    d, raw = reference_doc(SUITE, CHECKS, text)
    rows = []
    for r in raw:
        size = {k: r[k] for k in ("log_file_size", "log_files", "redo_log_capacity") if k in r} or None
        rows.append(Row(r["id"], r["kind"], r["where"], r["metric"], r["check"], r.get("published"),
                        float(r.get("tolerance", d["tolerance"])), float(r.get("measure_from_s", d["measure_from_s"])),
                        r.get("reason", ""), r.get("scenario"), r.get("b"), r.get("version"), size,
                        r.get("live", "example"), r.get("b_live"), r.get("fitted", "")))
    return rows


def case_label(row: Row) -> str:
    if row.kind == "threshold":
        return f"{row.version} " + ", ".join(f"{k} {v}" for k, v in row.size.items())
    return row.scenario + (f" vs {row.b}" if row.b else "")


def threshold_pct(row: Row) -> float | None:
    """The version's limit for the row's redo size, % of the configured size (models.redo)."""
    v = version_of(row.version)
    sz = row.size
    limits, _ = redo_limits(v.redo, log_file_size_bytes=parse_size_bytes(sz.get("log_file_size", "48M")),
                            log_files_in_group=int(sz.get("log_files", 2)),
                            redo_log_capacity_bytes=parse_size_bytes(sz.get("redo_log_capacity", "100M")),
                            page_size_bytes=16384)
    return limits.pct(row.metric)


# -- runs -------------------------------------------------------------------------------------------

def _run_one(name: str, overrides: tuple[str, ...] = ()) -> dict:
    """Run one scenario, with `--set`-style overrides; return what the metrics need (picklable)."""
    from sim.metrics import frame

    scn, res, run = run_scenario_file(SCENARIO_DIR / f"{name}.toml", name, overrides)
    return {**run, "fine": frame(res, 0.1), "limits": res.limits, "version": scn.server.version}


def _wait_onsets_pct(run: dict, from_s: float, column: str) -> float | None:
    """Median, over each onset of user threads waiting for redo space, of the age just before it."""
    f = run["fine"]
    f = f[f["time_s"] > from_s]
    waiting = (f["threads_sync_flush"].to_numpy() > 0)
    age = f[column].to_numpy()
    onsets = np.flatnonzero(waiting[1:] & ~waiting[:-1]) + 1
    if not len(onsets):
        return None
    return float(np.median(age[onsets - 1]))


def metric_value(metric: str, run: dict, from_s: float):
    sec = run["sec"]
    m = sec[sec["time_s"] > from_s]
    if len(m) == 0:
        raise ValueError(f"{run['name']}: nothing measured after {from_s} s")
    tps = m["tps"].to_numpy()
    if metric == "mod_age_plateau_pct":
        return float(np.median(m["modified_age_pct"]))
    if metric == "ckpt_age_plateau_pct":
        return float(np.median(m["checkpoint_age_pct"]))
    if metric == "ckpt_age_max_pct":
        return float(m["checkpoint_age_pct"].max())
    if metric == "users_wait_mod_age_pct":
        return _wait_onsets_pct(run, from_s, "modified_age_pct")
    if metric == "users_wait_ckpt_age_pct":
        return _wait_onsets_pct(run, from_s, "checkpoint_age_pct")
    if metric == "drop_seconds":
        return float((tps < 0.5 * np.median(tps)).sum())
    if metric == "mod_age_max_over_sync":
        age = (m["log_lsn_current"] - m["log_lsn_buf_pool_oldest"]).max()
        return float(age) / run["limits"].max_modified_age_sync
    if metric == "tps_mean":
        return float(tps.mean())
    if metric == "user_wait_thread_s":
        return float(m["threads_sync_flush"].sum())
    if metric == "max_checkpoint_age_bytes":
        return float(run["limits"].max_checkpoint_age)
    if metric == "live_tps_mean":
        return float(_live_window(sec)["tps"].mean())
    if metric == "live_ckpt_age_plateau_pct":
        return float(np.median(_live_window(sec, LIVE_AGE_FROM_S)["checkpoint_age_pct"]))
    if metric == "live_pages_flushed_mean":
        return float(_live_window(sec)["pages_flushed"].mean())
    if metric == "live_drop_seconds":
        return drop_seconds(_live_window(sec)["tps"].to_numpy())
    if metric in LIVE_SHARES:
        return _share(_live_window(sec), LIVE_SHARES[metric])
    if metric in LIVE_PASSES:
        return float(_live_window(sec)[LIVE_PASSES[metric]].mean())
    if metric in LIVE_PER_COMMIT:
        w = _live_window(sec)
        return float(w[LIVE_PER_COMMIT[metric]].sum()) / float(w["tps"].sum())
    raise ValueError(f"unknown metric {metric!r}")


# The server's I/O counters a commit (over the live throughput window), counted as the server
# counts them (models.fil): its redo writes and all its fsyncs.
LIVE_PER_COMMIT = {"live_log_writes_per_commit": "Innodb_log_writes",
                   "live_data_fsyncs_per_commit": "Innodb_data_fsyncs"}


# Shares of the pages flushed (%, over the live throughput window): the LRU flush's pages and the
# neighbours written along with a victim (innodb_flush_neighbors; counted in both kinds of batch).
LIVE_SHARES = {"live_lru_share_pct": "buffer_LRU_batch_total_pages",
               "live_neighbour_share_pct": "buffer_flush_neighbor_total_pages"}


# The page cleaner's passes a second (INNODB_METRICS counts of calls, over the live throughput
# window): adaptive and background flush-list passes, and LRU batches (which follow each of them).
LIVE_PASSES = {"live_adaptive_passes_s": "buffer_flush_adaptive",
               "live_background_passes_s": "buffer_flush_background",
               "live_lru_passes_s": "buffer_LRU_batch_num_scan"}


def _share(w, column: str) -> float:
    total = float(w["pages_flushed"].sum())
    return float(w[column].sum()) * 100.0 / total if total > 0 else float("nan")


def _live_window(f, from_s: float = LIVE_TPS_FROM_S):
    """The seconds a live row's figures are read over: (20 s, 180 s] for throughput and flushing,
    (60 s, 180 s] for the checkpoint age's plateau."""
    return f[(f["time_s"] > from_s) & (f["time_s"] <= LIVE_TO_S)]


def drop_seconds(tps: np.ndarray, share: float = LIVE_DROP_SHARE) -> float:
    """Seconds whose throughput is below `share` of the seconds' median."""
    return float((tps < share * np.median(tps)).sum()) if len(tps) else 0.0


@lru_cache(maxsize=None)
def _live_frames(live: str):
    """(sysbench frame, samples frame) of validation/live/<live>, read once per suite run (None
    when that capture is absent). The callers only read them."""
    from sim.trace import read_trace

    folder = LIVE_ROOT / live
    samples, client = folder / "samples.csv.gz", folder / "sysbench.txt"
    if not samples.is_file() or not client.is_file():
        return None
    return read_trace(client).frame, read_trace(samples).frame


def measured_live(metric: str, live: str = "example") -> float | None:
    """A live-capture run's own figure for a live row (validation/live/<live>; None when that
    capture is absent)."""
    frames = _live_frames(live)
    if frames is None:
        return None
    client, f = frames
    if metric in ("live_tps_mean", "live_drop_seconds"):
        w = _live_window(client)
        return float(w["tps"].mean()) if metric == "live_tps_mean" else drop_seconds(w["tps"].to_numpy())
    if metric == "max_checkpoint_age_bytes":
        return float(np.median(f["checkpoint_max_age_bytes"]))
    if metric == "live_ckpt_age_plateau_pct":
        w = _live_window(f, LIVE_AGE_FROM_S)
        return float(np.median(w["log_lsn_checkpoint_age"])) * 100.0 / live_log_file_bytes(live)
    if metric == "live_pages_flushed_mean":
        return float(_live_window(f)["pages_flushed"].mean())
    if metric in LIVE_SHARES:
        w = _live_window(f)
        return _share(w, LIVE_SHARES[metric]) if LIVE_SHARES[metric] in w else None
    if metric in LIVE_PASSES:
        w = _live_window(f)
        return float(w[LIVE_PASSES[metric]].mean()) if LIVE_PASSES[metric] in w else None
    if metric in LIVE_PER_COMMIT:
        w, commits = _live_window(f), float(_live_window(client)["tps"].sum())
        col = LIVE_PER_COMMIT[metric]
        return float(w[col].sum()) / commits if col in w and commits > 0 else None
    raise ValueError(f"unknown live metric {metric!r}")


def live_log_file_bytes(live: str = "example") -> int:
    """innodb_log_file_size as the captured server reported it (its variables.tsv)."""
    path = LIVE_ROOT / live / "variables.tsv"
    for line in path.read_text().splitlines():
        name, _, value = line.partition("\t")
        if name == "innodb_log_file_size":
            return int(value)
    raise ValueError(f"{path}: no innodb_log_file_size line")


# -- checks -----------------------------------------------------------------------------------------

def check(row: Row, pub, sim) -> RowResult:
    tol = row.tolerance
    if row.check == "report":
        return RowResult(row, "-" if pub is None else pub, sim, None, None)
    if sim is None:
        # The event never happened in the run (e.g. no user thread ever waited).
        ok = row.check == "at_least_pp"
        return RowResult(row, pub, "none", None, ok)
    if pub is None:
        return RowResult(row, "no data", sim, None, None)
    pub = float(pub)
    rel = (sim - pub) / pub if pub else None
    if row.check == "within_pp":
        ok = abs(sim - pub) <= tol
    elif row.check == "at_least_pp":
        ok = sim >= pub - tol
    elif row.check == "figure":
        ok = abs(sim - pub) <= tol * abs(pub)
    elif row.check == "at_least":
        ok = sim >= pub * (1.0 - tol)
    else:  # at_most
        ok = sim <= pub * (1.0 + tol)
    return RowResult(row, pub, sim, rel, ok)


def evaluate(row: Row, runs: dict[str, dict]) -> RowResult:
    if row.kind == "threshold":
        return check(row, row.published, threshold_pct(row))
    sim = metric_value(row.metric, runs[row.scenario], row.measure_from_s)
    if row.b is not None and sim is not None:
        other = metric_value(row.metric, runs[row.b], row.measure_from_s)
        sim = sim / other if other else float("inf")
    pub = row.published
    if pub == "measured":
        pub = measured_live(row.metric, row.live)
        if row.b is not None and pub is not None:
            other = measured_live(row.metric, row.b_live or row.live)
            pub = None if other is None else (pub / other if other else float("inf"))
    return check(row, pub, sim)


class SuiteResult(ScenarioSuiteResult):
    def to_json(self) -> dict:
        out = []
        for r in self.rows:
            d = r.to_json(case_label(r.row))
            d["tolerance_unit"] = "pp" if r.row.check.endswith("_pp") else "relative"
            out.append(d)
        return {"suite": SUITE, "rows": out, "ok": self.ok,
                "runs": {k: {"simulated_s": v["simulated_s"], "wall_s": v["wall_s"], "version": v["version"],
                             "settling": v.get("settling")}
                         for k, v in self.runs.items()}}


def run_suite(jobs: int = 1, progress=None) -> SuiteResult:
    rows = load_reference()
    # The slowest run (3.8x real time) first, so two workers finish together.
    names = sorted(scenario_names(rows), key=lambda n: "live" not in n)
    runs = run_scenarios(_run_one, names, jobs, progress)
    return SuiteResult([evaluate(r, runs) for r in rows], runs)


def _tol(row: Row) -> str:
    if row.check == "report":
        return "-"
    return f"±{row.tolerance:g} pp" if row.check.endswith("_pp") else f"{row.tolerance:.0%}"


def format_table(res: SuiteResult) -> str:
    header = ("id", "case", "metric", "published", "simulated", "error", "tol", "ok")
    lines = []
    for r in res.rows:
        ok = "n/a" if r.ok is None else ("ok" if r.ok else "FAIL")
        if r.row.fitted and r.ok is not None:
            ok += " (fitted)"
        if r.rel_error is None:
            err = "-"
        elif r.row.check.endswith("_pp"):
            err = f"{r.simulated - r.published:+.2f} pp"
        else:
            err = f"{r.rel_error:+.1%}"
        metric = r.row.metric + (" ratio" if r.row.b else "")
        lines.append((r.row.id, case_label(r.row), metric, _fmt(r.published), _fmt(r.simulated), err, _tol(r.row), ok))
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    text = [fmt.format(*header), fmt.format(*("-" * w for w in widths))] + [fmt.format(*line) for line in lines]
    text.append("")
    text += disagreement_lines(res.rows, "DISAGREES")
    text += unsettled_notes(res.rows, res.runs)
    n_ok, n_fail, n_nm = counts(res.rows)
    sim_s = sum(v["simulated_s"] for v in res.runs.values())
    wall = sum(v["wall_s"] for v in res.runs.values())
    n_fit = fitted_passes(res.rows)
    fit_note = f" ({n_fit} of them fitted figures, not predictions)" if n_fit else ""
    text.append(f"suite {SUITE}: {n_ok} passed{fit_note}, {n_fail} failed, {n_nm} shown without a check "
                f"({len(res.runs)} scenario runs, {sim_s:,.0f} simulated s in {wall:,.0f} s of simulation)")
    return "\n".join(text)
