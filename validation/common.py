"""Shared by the validation suites."""

from __future__ import annotations

import functools
import math
import tomllib
from dataclasses import dataclass
from importlib import resources


def fmt_value(v) -> str:
    """A published or simulated figure for a suite's table."""
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return str(v)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.3g}"


@dataclass(frozen=True)
class RowResult:
    """One reference row checked: `row` is the suite's own row type (id, where, metric, b, check,
    tolerance, reason)."""

    row: object
    published: float | str | None
    simulated: float | None
    rel_error: float | None
    ok: bool | None          # None: not modelled

    def to_json(self, case_label: str) -> dict:
        r = self.row
        cause = known_causes().get(r.id) if self.ok is False else None
        return {
            "id": r.id,
            "case": case_label,
            "metric": r.metric if r.b is None else f"{r.metric} ratio",
            "check": r.check,
            "published": self.published,
            "simulated": self.simulated,
            "rel_error": self.rel_error,
            "tolerance": r.tolerance,
            "ok": self.ok,
            "where": r.where,
            **({"reason": r.reason} if r.reason else {}),
            **({"fitted": fitted(r)} if fitted(r) else {}),
            **({"known_cause": cause} if cause else {}),
        }


def fitted(row) -> str:
    """What a row's figure calibrates (its `fitted` key), or "" for a row that checks a prediction."""
    return getattr(row, "fitted", "") or ""


def check_figure(row, sim: float) -> RowResult:
    """The checks both suites share, on a simulated value (a ratio a/b for `greater`):
    greater (> 1 + tolerance), figure (|error| <= tolerance), at_least, at_most."""
    tol = row.tolerance
    if row.check == "greater":
        return RowResult(row, f"> {1 + tol:.2f} (ratio a/b)", sim, None, sim > 1.0 + tol)
    pub = float(row.published)
    rel = (sim - pub) / pub if pub else None
    if row.check == "figure":
        ok = rel is not None and abs(rel) <= tol
    elif row.check == "at_least":
        ok = sim >= pub * (1.0 - tol)
    else:  # at_most (with a published 0: at most 0)
        ok = sim <= pub * (1.0 + tol)
    return RowResult(row, pub, sim, rel, ok)


def format_rows(results: list[RowResult], cases: list[str], metrics: list[str], case_header: str) -> list[str]:
    """The table of a suite: id | case | metric | published | simulated | error | tol | ok."""
    header = ("id", case_header, "metric", "published", "simulated", "error", "tol", "ok")
    lines = []
    for r, case, metric in zip(results, cases, metrics):
        ok = "n/a" if r.ok is None else ("ok" if r.ok else "FAIL")
        if fitted(r.row) and r.ok is not None:
            ok += " (fitted)"
        err = "-" if r.rel_error is None else f"{r.rel_error:+.1%}"
        lines.append((r.row.id, case, metric, fmt_value(r.published), fmt_value(r.simulated), err,
                      f"{r.row.tolerance:.0%}", ok))
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header), fmt.format(*("-" * w for w in widths))] + [fmt.format(*line) for line in lines]


def counts(results: list[RowResult]) -> tuple[int, int, int]:
    """(passed, failed, not modelled)."""
    return (sum(r.ok is True for r in results), sum(r.ok is False for r in results),
            sum(r.ok is None for r in results))


def fitted_passes(results: list[RowResult]) -> int:
    """Passed rows whose figure is a calibration target (counted among the passed, not predictions)."""
    return sum(r.ok is True and bool(fitted(r.row)) for r in results)


@dataclass(frozen=True)
class ScenarioSuiteResult:
    """A suite's checked rows and the scenario runs they came from (name -> what the run kept)."""

    rows: list[RowResult]
    runs: dict

    @property
    def ok(self) -> bool:
        return all(r.ok is not False for r in self.rows)


def scenario_names(rows) -> list[str]:
    """The scenarios the rows name (`scenario`, and `b` for ratios), once each, in row order."""
    names: list[str] = []
    for r in rows:
        for n in (getattr(r, "scenario", None), getattr(r, "b", None)):
            if n is not None and n not in names:
                names.append(n)
    return names


@functools.cache
def known_causes() -> dict[str, dict[str, str]]:
    """validation/reference/disagreements.toml by row id: {"why", "docs"}, written after the
    comparisons; they change no check."""
    text = (resources.files("validation") / "reference" / "disagreements.toml").read_text("utf-8")
    return {c["id"]: {"why": c["why"], "docs": c["docs"]} for c in tomllib.loads(text)["cause"]}


def disagreement_lines(results: list[RowResult], label: str) -> list[str]:
    """For each failing row `<label>: <id>: published ..., simulated ... (<where>)`, followed by
    `    why: ...` where disagreements.toml explains it; then a `stale explanation:` line for each
    explained row that no longer fails."""
    causes = known_causes()
    out = []
    for r in results:
        if r.ok is False:
            out.append(f"{label}: {r.row.id}: published {fmt_value(r.published)}, "
                       f"simulated {fmt_value(r.simulated)} ({r.row.where})")
            if r.row.id in causes:
                c = causes[r.row.id]
                out.append(f"    why: {c['why']} (see {c['docs']})")
    for r in results:
        if r.ok is not False and r.row.id in causes:
            out.append(f"stale explanation: {r.row.id} no longer fails; its entry in "
                       "validation/reference/disagreements.toml is out of date")
    return out


def unsettled_notes(results: list[RowResult], runs: dict) -> list[str]:
    """A line for each scenario a failing row reads whose run had not left its start-up transient
    (run["settling"], sim.settling), to read the disagreement against."""
    from sim.settling import unsettled_brief

    out = []
    for name in scenario_names([r.row for r in results if r.ok is False]):
        s = runs[name].get("settling")
        if s and s["settled"] is False:
            out.append(f"not settled: {name}: {unsettled_brief(s)}")
    return out


def run_scenario_file(path, name: str, overrides: tuple[str, ...] = ()) -> tuple[object, object, dict]:
    """Load and run one scenario file with `--set`-style overrides: (scenario, engine result, the
    picklable keys every suite's runs carry: name, the 1 s series, wall and simulated seconds, redo
    capacity and the settling verdict on the measured part, sim.settling)."""
    from sim.config import load_scenario
    from sim.engine import Server
    from sim.metrics import frame
    from sim.settling import settling

    scn = load_scenario(path, overrides=list(overrides))
    res = Server(scn).run()
    sec = frame(res, 1.0)
    return scn, res, {"name": name, "sec": sec, "wall_s": res.wall_s, "simulated_s": res.n_ticks * res.tick_s,
                      "capacity": res.redo_capacity_bytes, "settling": settling(sec, 1.0).as_dict()}


def run_scenarios(run_one, names: list[str], jobs: int, progress=None) -> dict:
    """run_one(name) for every name, in worker processes when jobs > 1; results by name, in the
    order of `names`. progress(done, total, result), if given, is called as each run ends."""
    import os
    from concurrent.futures import ProcessPoolExecutor, as_completed

    results: list[dict] = []

    def ended(r: dict) -> None:
        results.append(r)
        if progress is not None:
            progress(len(results), len(names), r)

    if jobs <= 1:
        for n in names:
            ended(run_one(n))
    else:
        with ProcessPoolExecutor(max_workers=min(jobs, len(names), os.cpu_count() or 1)) as ex:
            for fut in as_completed([ex.submit(run_one, n) for n in names]):
                ended(fut.result())
    by_name = {r["name"]: r for r in results}
    return {n: by_name[n] for n in names}


def progress_line(suite: str):
    """A run_scenarios progress callback that prints one line per finished run to stderr."""
    import sys

    def show(done: int, total: int, r: dict) -> None:
        print(f"innosim validate {suite}: [{done}/{total}] {r['name']}: {r['simulated_s']:.0f} s simulated "
              f"in {r['wall_s']:.0f} s", file=sys.stderr, flush=True)
    return show


def reference_doc(suite: str, checks: tuple[str, ...], text: str | None = None) -> tuple[dict, list[dict]]:
    """(defaults, rows) of validation/reference/<suite>.toml (or of the given text); every row's
    check must be one of `checks`."""
    if text is None:
        text = (resources.files("validation") / "reference" / f"{suite}.toml").read_text("utf-8")
    doc = tomllib.loads(text)
    for r in doc["row"]:
        if r["check"] not in checks:
            raise ValueError(f"row {r['id']}: unknown check {r['check']!r}")
    return doc["defaults"], doc["row"]
