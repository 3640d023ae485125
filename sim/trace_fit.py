"""Fit the workload quantities a user cannot read off (CPU, pages and redo per transaction, hot-set
skew) to a measured per-second trace, by simulating the scenario and minimising the distance
between simulated and measured series (issue 4, part 4).

Method:
1. Redo bytes per transaction straight from the counters where the trace has them:
   Innodb_os_log_written / commits (then held, not fitted).
2. Residuals: for every series both sides have (throughput, checkpoint age, pages flushed, pages
   read from disk, redo bytes), simulated minus measured, averaged over `BLOCK_S` windows after the
   warm-up and divided by the measured series' mean (so each series weighs the same whatever
   its unit). Windows rather than single seconds: the simulator's noise is not the server's, and
   window means are closer to independent.
3. scipy.optimize.least_squares (trust-region reflective, bounds, parameters on a log scale)
   with a forward-difference Jacobian whose columns are simulated in parallel worker processes.
   Every evaluation uses the scenario's seed (common random numbers), so the objective is
   smooth enough for differences of `DIFF_STEP` (in log parameter).
4. Uncertainty: the Gauss-Newton covariance at the solution, (J'J)^-1 s^2 with s^2 the residual
   variance; a standard deviation per parameter in its own unit.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from models.errors import InputError
from models.versions import version as version_of
from sim.config import SCHEMA, TWO_TIER_KEYS, scenario_from_dict, setting_value
from sim.trace import Trace

BLOCK_S = 5
DIFF_STEP = 0.08
# Short names for --series.
SERIES_NAMES = {"tps": "tps", "checkpoint_age": "log_lsn_checkpoint_age", "pages_flushed": "pages_flushed",
                "pages_read": "Innodb_buffer_pool_reads", "redo": "Innodb_os_log_written"}
# Column -> label. Measured and simulated frames share the names (simulated ones hold per-interval
# counts at 1 s, i.e. per second).
SERIES = {
    "tps": "throughput (commits/s)",
    "log_lsn_checkpoint_age": "checkpoint age (bytes)",
    "pages_flushed": "pages flushed/s",
    "Innodb_buffer_pool_reads": "pages read from disk/s",
    "Innodb_os_log_written": "redo bytes/s",
}
# Counters compared per transaction after a fit, never fitted: column -> label. Both frames carry
# them under the server's names, counted as the server counts them (models.fil).
PER_TXN = {
    "Innodb_buffer_pool_reads": "pages read from disk",
    "pages_flushed": "pages flushed",
    "Innodb_dblwr_writes": "doublewrite batches (Innodb_dblwr_writes)",
    "Innodb_data_writes": "data writes (Innodb_data_writes)",
    "Innodb_log_writes": "redo writes (Innodb_log_writes)",
    "Innodb_os_log_written": "redo bytes (Innodb_os_log_written)",
    "Innodb_os_log_fsyncs": "redo fsyncs (Innodb_os_log_fsyncs)",
    "Innodb_data_fsyncs": "fsyncs (Innodb_data_fsyncs)",
}
# Parameters that can be fitted: key -> (low, high) in the schema's unit.
FITTABLE = {
    "workload.cpu_per_txn": (1e-5, 0.5),
    "workload.pages_modified_per_txn": (0.05, 500.0),
    "workload.pages_read_per_txn": (0.1, 5000.0),
    "workload.redo_bytes_per_txn": (64.0, 16e6),
    "workload.hot_data_pct": (0.01, 100.0),
    "workload.serial_per_txn": (1e-7, 0.05),
}
DEFAULT_FIT = ("workload.cpu_per_txn", "workload.pages_modified_per_txn", "workload.hot_data_pct")


@dataclass
class FitResult:
    names: list[str]
    values: np.ndarray
    sd: np.ndarray
    fixed: dict[str, float]
    series_error: pd.DataFrame          # per series: normalised RMS of the window residuals, mean error
    measured: pd.DataFrame
    simulated: pd.DataFrame
    evaluations: int
    notes: list[str] = field(default_factory=list)
    per_txn: pd.DataFrame = field(default_factory=pd.DataFrame)   # per_transaction of the fitted run

    def overrides(self) -> list[str]:
        vals = dict(self.fixed, **dict(zip(self.names, self.values)))
        return [f"{k}={_literal(k, v)}" for k, v in vals.items()]


def _literal(key: str, v: float) -> str:
    section, name = key.split(".")
    kind = SCHEMA[section][name].kind
    if kind == "size":
        return str(int(round(v)))
    if kind == "duration":
        return f"{v:.6g}s"
    return f"{v:.6g}"


def parse_fit(specs: list[str] | None) -> dict[str, tuple[float, float]]:
    """`--fit key` or `--fit key=lo:hi`: the parameters to fit and their bounds."""
    if not specs:
        return {k: FITTABLE[k] for k in DEFAULT_FIT}
    out = {}
    for s in specs:
        key, _, rng = s.partition("=")
        key = key.strip()
        if key not in FITTABLE:
            raise InputError("--fit", key, "cannot be fitted", ", ".join(FITTABLE))
        lo, hi = FITTABLE[key]
        if rng:
            try:
                lo, hi = (float(x) for x in rng.split(":"))
            except ValueError:
                raise InputError("--fit", key, f"{rng!r} is not lo:hi", "two numbers in the key's unit") from None
            if not 0 < lo < hi:
                raise InputError("--fit", key, f"{rng!r}: need 0 < lo < hi", "lo:hi")
        out[key] = (max(lo, 1e-12), hi)
    return out


def parse_series(text: str | None) -> list[str] | None:
    """`--series tps,pages_flushed,...`: the series the fit matches (None: every one the trace has)."""
    if not text:
        return None
    out = []
    for name in (t.strip() for t in text.split(",")):
        if name not in SERIES_NAMES:
            raise InputError("--series", name, "is not a series", ", ".join(SERIES_NAMES))
        out.append(SERIES_NAMES[name])
    if "tps" not in out:
        raise InputError("--series", text, "the fit needs throughput", "a list that includes tps")
    return out


def direct_estimates(trace: Trace, warmup_s: float, mariadb: bool = False) -> dict[str, float]:
    """What the counters give without simulating: redo bytes per commit; on MariaDB the page
    cleaner's wake race (wake_race_estimate) where the trace allows it."""
    f = trace.frame[trace.frame["time_s"] > warmup_s]
    out = {}
    if "tps" in f and f["tps"].sum() > 0:
        commits = f["tps"].sum()
        if "Innodb_os_log_written" in f and f["Innodb_os_log_written"].notna().any():
            out["workload.redo_bytes_per_txn"] = float(f["Innodb_os_log_written"].sum() / commits)
    if mariadb:
        race, _ = wake_race_estimate(f)
        if race is not None:
            out["workload.cleaner_wake_race"] = race
    return out


PASS_COUNTERS = ("buffer_flush_adaptive", "buffer_flush_background", "buffer_LRU_batch_num_scan")


def wake_race_estimate(f: pd.DataFrame) -> tuple[float | None, str]:
    """MariaDB's share of free-block wake-ups that make an adaptive pass: adaptive passes / LRU
    batches, from INNODB_METRICS counts of calls (models/page_cleaner_mariadb.py). Only when the
    trace has no background pass: a flush-ahead target met by the next wake-up also sends it to the
    adaptive branch, and the counts cannot tell those passes apart. (None, why) otherwise."""
    if any(c not in f or not f[c].notna().any() for c in PASS_COUNTERS):
        return None, "the trace has no page cleaner pass counters (" + ", ".join(PASS_COUNTERS) + ")"
    a, b, lru = (float(f[c].sum()) for c in PASS_COUNTERS)
    if b > 0:
        return None, (f"the trace has {b:.0f} background passes (flush-ahead targets), which also lead to "
                      "adaptive passes")
    if lru <= 0:
        return None, "the trace has no LRU batch: the page cleaner was never woken for free blocks"
    return min(1.0, a / lru), f"{a:.0f} adaptive passes of {lru:.0f} LRU batches"


def cpu_start_s(trace: Trace, scn, warmup_s: float) -> float | None:
    """A start for cpu_per_txn from the trace: min(cores, users) / measured commits per second, the
    CPU time per transaction of a server whose cores are all busy (an upper bound: a server held
    back by I/O or latches spends less). None without throughput."""
    f = trace.frame[trace.frame["time_s"] > warmup_s]
    if "tps" not in f or not (f["tps"].mean() > 0):
        return None
    busy = min(scn.hardware.cpu_cores, scn.workload.users)
    return busy / float(f["tps"].mean())


def window_means(df: pd.DataFrame, cols: list[str], t0: float, t1: float) -> pd.DataFrame:
    """Means of `cols` over BLOCK_S windows of (t0, t1]."""
    sel = df[(df["time_s"] > t0) & (df["time_s"] <= t1)]
    w = ((sel["time_s"] - t0 - 1e-9) // BLOCK_S).astype(int)
    return sel[cols].groupby(w).mean()


def per_transaction(measured: pd.DataFrame, simulated: pd.DataFrame, t0: float, t1: float) -> pd.DataFrame:
    """Each PER_TXN counter that both per-second frames carry, summed over (t0, t1] and divided by
    the commits of the same seconds: `measured`, `simulated`, and their ratio (NaN where the
    measured figure is 0). A counter the trace lacks, or whose seconds are not all sampled, is
    left out."""
    rows = []
    ms = measured[(measured["time_s"] > t0) & (measured["time_s"] <= t1)]
    ss = simulated[(simulated["time_s"] > t0) & (simulated["time_s"] <= t1)]
    m_commits, s_commits = float(ms["tps"].sum()), float(ss["tps"].sum())
    if m_commits <= 0 or s_commits <= 0:
        return pd.DataFrame(columns=["counter", "column", "measured", "simulated", "ratio"])
    for col, label in PER_TXN.items():
        if col not in ms or col not in ss or ms[col].isna().any():
            continue
        m, s = float(ms[col].sum()) / m_commits, float(ss[col].sum()) / s_commits
        rows.append({"counter": label, "column": col, "measured": m, "simulated": s,
                     "ratio": s / m if m > 0 else float("nan")})
    return pd.DataFrame(rows, columns=["counter", "column", "measured", "simulated", "ratio"])


def simulate_frame(doc: dict, src: str, overrides: list[str]) -> pd.DataFrame:
    """The 1 s frame of one engine run (top level: worker processes import it)."""
    from sim.engine import run
    from sim.metrics import frame

    scn = scenario_from_dict(doc, src, overrides=overrides)
    return frame(run(scn), 1.0)


class Objective:
    def __init__(self, doc: dict, src: str, trace: Trace, names: list[str], fixed: dict[str, float],
                 warmup_s: float, duration_s: float, workers: int, series: list[str] | None = None) -> None:
        self.doc, self.src, self.names, self.fixed = doc, src, names, fixed
        self.warmup_s, self.duration_s = warmup_s, duration_s
        m = trace.frame
        fitted = m[m["time_s"] > warmup_s]
        comparable = [c for c in SERIES if c in m and fitted[c].notna().sum() > BLOCK_S and fitted[c].mean() > 0]
        self.idle = [c for c in SERIES if c in m and c not in comparable]
        self.shown = comparable                              # reported, fitted or not
        self.cols = [c for c in comparable if series is None or c in series]
        if "tps" not in self.cols:
            raise InputError(trace.source, "tps", "the trace has no throughput", "a sysbench, tpcc-mysql or "
                             "status trace with Com_commit")
        self.scale = {c: float(fitted[c].mean()) for c in self.shown}
        self.measured = window_means(m, self.shown, warmup_s, duration_s)
        self.cache: dict[tuple, pd.DataFrame] = {}
        self.workers = workers
        self.progress = None

    def overrides(self, x: np.ndarray) -> list[str]:
        vals = dict(self.fixed, **{k: float(math.exp(v)) for k, v in zip(self.names, x)})
        return [f"{k}={_literal(k, v)}" for k, v in vals.items()] + [f"run.duration={self.duration_s:g}s"]

    def frames(self, xs: list[np.ndarray]) -> list[pd.DataFrame]:
        keys = [tuple(np.round(x, 12)) for x in xs]
        todo = [(k, x) for k, x in zip(keys, xs) if k not in self.cache]
        todo = list({k: x for k, x in todo}.items())
        if len(todo) > 1 and self.workers > 1:
            with ProcessPoolExecutor(max_workers=min(self.workers, len(todo))) as ex:
                outs = list(ex.map(simulate_frame, [self.doc] * len(todo), [self.src] * len(todo),
                                   [self.overrides(x) for _, x in todo]))
        else:
            outs = [simulate_frame(self.doc, self.src, self.overrides(x)) for _, x in todo]
        for (k, _), f in zip(todo, outs):
            self.cache[k] = f
        return [self.cache[k] for k in keys]

    def window_errors(self, sim: pd.DataFrame, cols: list[str]) -> dict[str, np.ndarray]:
        """Per column: simulated minus measured window means over the measured mean."""
        s = window_means(sim, cols, self.warmup_s, self.duration_s)
        n = min(len(s), len(self.measured))
        return {c: (s[c].to_numpy()[:n] - self.measured[c].to_numpy()[:n]) / self.scale[c] for c in cols}

    def residuals_of(self, sim: pd.DataFrame) -> np.ndarray:
        return np.nan_to_num(np.concatenate(list(self.window_errors(sim, self.cols).values())), nan=0.0)

    def steps(self, x: np.ndarray) -> list[np.ndarray]:
        """The points of the forward-difference Jacobian at x."""
        return [x + DIFF_STEP * np.eye(len(x))[i] for i in range(len(x))]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        # The workers left idle by this one simulation start on Jacobian columns at x: they are
        # used if the optimiser accepts x (the usual case) and cost no wall time if it does not.
        spare = self.steps(x)[: max(0, self.workers - 1)]
        r = self.residuals_of(self.frames([x, *spare])[0])
        if self.progress:
            values = ", ".join(f"{k.split('.')[1]}={math.exp(v):.4g}" for k, v in zip(self.names, x))
            self.progress(f"{len(self.cache)} simulations; at {values}: RMS {float(np.sqrt(np.mean(r ** 2))):.3f}")
        return r

    def jac(self, x: np.ndarray) -> np.ndarray:
        r0 = self.residuals_of(self.frames([x])[0])
        cols = [(self.residuals_of(f) - r0) / DIFF_STEP for f in self.frames(self.steps(x))]
        return np.column_stack(cols)


def fit_trace(doc: dict, src: str, trace: Trace, fit: dict[str, tuple[float, float]], warmup_s: float,
              duration_s: float, max_evals: int = 40, workers: int = 0, progress=None,
              series: list[str] | None = None, multistart: bool = False) -> FitResult:
    """Fit `fit` (key -> bounds) so that the scenario `doc` replays `trace`; `progress(text)` is
    told of each optimiser step; `series`: the measured columns to match (default all).

    `multistart`: when cpu_per_txn is fitted, fit a second time from the trace's bound on it
    (cpu_start_s) and keep the fit with the smaller residual. Each start can end in its own local
    minimum: the bound is exact for a CPU-bound server and too high for one held back by I/O or
    latches; the scenario's figure may be anything. Twice the simulations."""
    from scipy.optimize import least_squares

    base = scenario_from_dict(doc, src)
    if base.workload.kind != "oltp":
        raise InputError(src, "workload.kind", "trace fitting needs an oltp scenario", "oltp")
    if base.workload.access == "tpcc":
        for k in fit:
            if k in {f"workload.{key}" for key in TWO_TIER_KEYS}:
                raise InputError("--fit", k, "the scenario's workload.access is \"tpcc\", whose skew is "
                                 "TPC-C's NURand", "--fit with other keys (e.g. --fit workload.cpu_per_txn)")
    mariadb = version_of(base.server.version).is_mariadb
    fixed = {k: v for k, v in direct_estimates(trace, warmup_s, mariadb).items() if k not in fit}
    names = list(fit)
    x0, lo, hi = [], [], []
    for k in names:
        section, name = k.split(".")
        v = setting_value(base, section, name)
        a, b = fit[k]
        v = min(max(float(v if v else (a * b) ** 0.5), a * 1.0001), b * 0.9999)
        x0.append(math.log(v))
        lo.append(math.log(a))
        hi.append(math.log(b))
    obj = Objective(doc, src, trace, names, fixed, warmup_s, duration_s, workers or os.cpu_count() or 1, series)
    obj.progress = progress
    redo_key = "workload.redo_bytes_per_txn"
    if redo_key in fixed:
        # The log also carries block headers and padding: scale the setting so that the simulated
        # redo written per commit equals the measured one.
        f0 = obj.frames([np.array(x0)])[0]
        f0 = f0[f0["time_s"] > warmup_s]
        if f0["commits"].sum() > 0:
            per_commit = float(f0["Innodb_os_log_written"].sum() / f0["commits"].sum())
            fixed[redo_key] *= fixed[redo_key] / per_commit
            obj.cache.clear()
    notes = [f"{k} = {_literal(k, v)} from the trace's counters (not fitted)" for k, v in fixed.items()]
    notes += [f"{SERIES[c]} was zero or missing after the warm-up: not fitted" for c in obj.idle]
    if mariadb and "workload.cleaner_wake_race" not in fixed and "workload.cleaner_wake_race" not in fit:
        why = wake_race_estimate(trace.frame[trace.frame["time_s"] > warmup_s])[1]
        notes.append(f"workload.cleaner_wake_race kept at the scenario's {base.workload.cleaner_wake_race:g}: {why}")
    if "trx_queue" in trace.frame and not base.workload.rate_tps:
        notes.append("the trace was taken with sysbench --rate (it reports a queue), but the scenario has no "
                     "workload.rate: its users run a closed loop, unlike the measured clients. Set "
                     "workload.rate to the --rate value")
    starts = [np.array(x0)]
    key = "workload.cpu_per_txn"
    bound = cpu_start_s(trace, base, warmup_s) if multistart and key in names else None
    if bound:
        i = names.index(key)
        alt = starts[0].copy()
        alt[i] = min(max(math.log(bound), lo[i] + 1e-4), hi[i] - 1e-4)
        starts.append(alt)
    fits = []
    for n, start in enumerate(starts):
        if len(starts) > 1 and progress:
            what = ("the scenario's values" if n == 0 else
                    f"cpu_per_txn = min(cores, users) / measured commits/s = {bound * 1e3:.3g} ms")
            progress(f"start {n + 1} of {len(starts)}: {what}")
        fits.append(least_squares(obj, start, jac=obj.jac, bounds=(lo, hi), method="trf", x_scale=1.0,
                                  max_nfev=max_evals, xtol=1e-3, ftol=1e-4))
    sol = min(fits, key=lambda f: float(f.fun @ f.fun))
    if len(fits) > 1:
        rms = [float(np.sqrt(np.mean(f.fun ** 2))) for f in fits]
        notes.insert(0, f"two starts: from the scenario's values RMS {rms[0]:.3f}, from cpu_per_txn = "
                        f"{bound * 1e3:.3g} ms RMS {rms[1]:.3f}; kept the "
                        f"{'first' if sol is fits[0] else 'second'}")
    values = np.exp(sol.x)
    r = sol.fun
    dof = max(1, len(r) - len(names))
    s2 = float(r @ r) / dof
    try:
        cov_log = np.linalg.inv(sol.jac.T @ sol.jac) * s2
        sd = values * np.sqrt(np.clip(np.diag(cov_log), 0, None))      # delta method from log space
    except np.linalg.LinAlgError:
        sd = np.full(len(names), np.nan)
        notes.append("the Jacobian is singular at the solution: a parameter does not move any series")
    sim = obj.frames([sol.x])[0]
    sim_w = window_means(sim, obj.shown, warmup_s, duration_s)
    err = [{"series": SERIES[c], "column": c, "fitted": c in obj.cols,
            "measured_mean": float(obj.measured[c].mean()), "simulated_mean": float(sim_w[c].mean()),
            "mean_error_pct": 100.0 * float(sim_w[c].mean() - obj.measured[c].mean()) / obj.scale[c],
            "nrms_pct": 100.0 * float(np.sqrt(np.nanmean(d ** 2)))}
           for c, d in obj.window_errors(sim, obj.shown).items()]
    if not sol.success:
        notes.append(f"the optimiser stopped: {sol.message}")
    return FitResult(names, values, sd, fixed, pd.DataFrame(err), trace.frame, sim, len(obj.cache), notes,
                     per_transaction(trace.frame, sim, warmup_s, duration_s))


def overlay_figure(res: FitResult, warmup_s: float):
    """Measured against simulated, one panel per series (fitted or only shown)."""
    from sim.plots import plt

    rows = list(res.series_error.itertuples())
    end_s = float(res.simulated["time_s"].max())
    meas = res.measured[res.measured["time_s"] <= end_s]
    fig, axes = plt.subplots(len(rows), 1, figsize=(10, 2.3 * len(rows)), sharex=True, squeeze=False)
    for ax, r in zip(axes[:, 0], rows):
        c = r.column
        ax.plot(meas["time_s"], meas[c], lw=1.0, label="measured")
        ax.plot(res.simulated["time_s"], res.simulated[c], lw=1.0, label="simulated (fitted)")
        ax.axvspan(0, warmup_s, color="grey", alpha=0.12, lw=0)
        ax.set_ylabel(SERIES[c] + ("" if r.fitted else "\n(not fitted)"), fontsize=8)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="lower right", fontsize=8)
    axes[-1, 0].set_xlabel("time (s); shaded: warm-up, not fitted")
    fig.tight_layout()
    return fig
