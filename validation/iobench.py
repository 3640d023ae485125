"""Validation suite `iobench`: the seed's first post, published figure beside simulated figure.

The reference rows live in validation/reference/iobench.toml (one row per figure or claim, each
with where it stands in the article). This module runs every case a row names at every process
count, computes the row's metric and applies its check. Rows that the model does not try to
reproduce are printed as "not modelled" with the reason; they never count as passed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.iobench import IobenchCase, IobenchResult, run_cases
from sim.units import format_size, parse_size_bytes
from validation.common import RowResult, check_figure, counts, disagreement_lines, format_rows, reference_doc

SUITE = "iobench"
CHECKS = ("figure", "at_least", "at_most", "greater", "flat", "nondecreasing", "not_modelled")
CURVE_METRICS = ("iops",)


@dataclass(frozen=True)
class Row:
    id: str
    where: str
    check: str
    a: dict
    b: dict | None
    metric: str
    b_metric: str | None
    published: float | None
    tolerance: float
    from_procs: int
    reason: str


def load_reference(text: str | None = None) -> tuple[dict, list[Row]]:
    """Parse the reference file (or the given text) into defaults and rows."""
    d, raw = reference_doc(SUITE, CHECKS, text)
    rows = []
    for r in raw:
        b = dict(r["b"]) if "b" in r else None
        b_metric = b.pop("metric", r["metric"]) if b is not None else None
        rows.append(Row(
            id=r["id"], where=r["where"], check=r["check"], a=dict(r["a"]), b=b,
            metric=r["metric"], b_metric=b_metric, published=r.get("published"),
            tolerance=float(r.get("tolerance", d["tolerance"])),
            from_procs=int(r.get("from_procs", 1)), reason=r.get("reason", "")))
    return d, rows


def case_key(spec: dict, defaults: dict) -> tuple:
    """(fs, kernel, mode, pattern, bs_bytes, files) of a row's case with defaults applied."""
    return (spec["fs"], spec.get("kernel", defaults["kernel"]), spec["mode"], spec["pattern"],
            parse_size_bytes(spec["bs"]), int(spec.get("files", defaults["files"])))


def case_label(key: tuple) -> str:
    fs, kernel, mode, pattern, bs, files = key
    fs_txt = fs if fs == "raw" else f"{fs}/{kernel}"
    return f"{fs_txt} {mode} {pattern} {format_size(bs)} files={files}"


def metric_value(metric: str, curve: dict[int, IobenchResult]) -> float:
    """A row metric from one case's results keyed by process count."""
    if metric == "peak_iops":
        return max(r.iops for r in curve.values())
    if metric == "peak_mib_s":
        return max(r.mib_s for r in curve.values())
    name, _, at = metric.partition("@")
    if not at:
        raise ValueError(f"unknown metric {metric!r}")
    r = curve[int(at)]
    if name == "iops":
        return r.iops
    if name == "lat_mean_us":
        return r.lat_mean_s * 1e6
    if name == "lock_share":
        return r.lock_wait_share
    raise ValueError(f"unknown metric {metric!r}")


def evaluate(row: Row, curve_a: dict[int, IobenchResult],
             curve_b: dict[int, IobenchResult] | None) -> RowResult:
    """Apply a row's check to the simulated curves."""
    tol = row.tolerance
    if row.check == "not_modelled":
        sim = metric_value(row.metric, curve_a)
        return RowResult(row, row.published, sim, None, None)
    if row.check in ("flat", "nondecreasing"):
        procs = sorted(p for p in curve_a if p >= row.from_procs)
        values = [curve_a[p].iops for p in procs]
        if row.check == "flat":
            spread = max(values) / min(values) - 1.0
            return RowResult(row, f"flat within {tol:.0%} from {row.from_procs} procs",
                             spread, None, spread <= tol)
        worst = min(b / a for a, b in zip(values, values[1:]))
        return RowResult(row, f"each step >= previous x {1 - tol:.2f}", worst, None, worst >= 1.0 - tol)
    sim = metric_value(row.metric, curve_a)
    if curve_b is not None:
        sim = sim / metric_value(row.b_metric, curve_b)
    return check_figure(row, sim)


@dataclass(frozen=True)
class SuiteResult:
    rows: list[RowResult]
    labels: list[str]
    runs: int
    ios: int

    @property
    def ok(self) -> bool:
        return all(r.ok is not False for r in self.rows)

    def to_json(self) -> dict:
        return {"suite": SUITE, "rows": [r.to_json(lbl) for r, lbl in zip(self.rows, self.labels)],
                "ok": self.ok, "runs": self.runs, "simulated_ios": self.ios}


def run_suite(jobs: int = 1, duration_s: float = 0.2, warmup_s: float = 0.05, seed: int = 1) -> SuiteResult:
    """Run every case the reference names and check every row."""
    defaults, rows = load_reference()
    keys: list[tuple] = []
    for row in rows:
        for spec in (row.a, row.b):
            if spec is not None:
                k = case_key(spec, defaults)
                if k not in keys:
                    keys.append(k)
    procs = [int(p) for p in defaults["procs"]]
    cases = [IobenchCase(device=defaults["device"], filesystem=fs, kernel=kernel,
                         mount_options=defaults["mount_options"], io_mode=mode, pattern=pattern,
                         block_bytes=bs, processes=p, data_files=files, duration_s=duration_s,
                         warmup_s=warmup_s, seed=seed)
             for (fs, kernel, mode, pattern, bs, files) in keys for p in procs]
    results = run_cases(cases, jobs=jobs)
    curves: dict[tuple, dict[int, IobenchResult]] = {k: {} for k in keys}
    for case, res in zip(cases, results):
        k = (case.filesystem, case.kernel, case.io_mode, case.pattern, case.block_bytes, case.data_files)
        curves[k][case.processes] = res
    out, labels = [], []
    for row in rows:
        ka = case_key(row.a, defaults)
        kb = case_key(row.b, defaults) if row.b is not None else None
        out.append(evaluate(row, curves[ka], curves[kb] if kb else None))
        label = case_label(ka) + (f" vs {case_label(kb)}" if kb else "")
        labels.append(label)
    return SuiteResult(out, labels, len(cases), sum(r.ios_measured for r in results))


def format_table(res: SuiteResult) -> str:
    """published | simulated | error | tolerance | ok per row, then a closing count."""
    metrics = [r.row.metric if r.row.b is None else f"{r.row.metric}/{r.row.b_metric}" for r in res.rows]
    text = format_rows(res.rows, res.labels, metrics, "case")
    n_ok, n_fail, n_nm = counts(res.rows)
    text.append("")
    for r in res.rows:
        if r.ok is None:
            text.append(f"not modelled: {r.row.id}: {r.row.reason}")
    text += disagreement_lines(res.rows, "DISAGREES with the article")
    text.append(f"suite {SUITE}: {n_ok} passed, {n_fail} failed, {n_nm} not modelled "
                f"({res.runs} runs, {res.ios:,} simulated I/Os)")
    return "\n".join(text)
