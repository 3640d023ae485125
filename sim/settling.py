"""Has a run left its start-up transient? MSER-5 on the per-second series.

An oltp run starts with no dirty page (`warm_start` preloads clean ones), so in its first
seconds every modification finds a clean page and the flush list fills fastest. When the
modified age first reaches the sync point, the oldest end of the flush list holds those pages,
more of them per byte of redo than at any later time: the first crossing flushes harder and
stalls longer than the steady state a benchmark that has run for an hour shows. The checkpoint
age and the flush rate of a short run can therefore still be climbing or swinging when it ends.

The rule is MSER-5, the marginal standard error rule on batch means of five observations
(K. P. White Jr., "An effective truncation heuristic for bias reduction in simulation output",
Simulation 69(6), 1997; the batch size of five from White, Cobb and Spratt, Winter Simulation
Conference 2000). With Z_1..Z_n the batch means, it drops the first d batches where d minimises
sum_{j>d} (Z_j - mean(Z_{>d}))^2 / (n - d)^2. A minimum in the second half of the series means the
run is too short for the rule to see where the transient ends; as its authors do, the search
stops at half the series, and a minimum on that boundary is that verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BATCH = 5                      # observations per batch mean (MSER-5)
MIN_BATCHES = 4                # fewer batch means than this: no verdict
# The series the verdict reads (column of the series files, label, unit).
SERIES = (("modified_age_pct", "modified age", "%"), ("pages_flushed", "pages flushed", "/s"),
          ("tps", "commits", "/s"))


def mser_truncation(values, batch: int = BATCH) -> tuple[int, int] | None:
    """(observations to drop, the most the search may drop) by MSER-`batch` over the finite
    `values`: the search covers the first half of the batch means, and a drop equal to its limit
    means the transient did not end inside that half. None with fewer than MIN_BATCHES means."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = len(x) // batch
    if n < MIN_BATCHES:
        return None
    z = x[: n * batch].reshape(n, batch).mean(axis=1)
    z = z - z.mean()          # centred, so a flat series gives sums of squares of exactly 0
    # Suffix sums give every tail's mean and sum of squares in one pass.
    rev = z[::-1]
    tail_sum = np.cumsum(rev)[::-1]
    tail_sq = np.cumsum(rev * rev)[::-1]
    tail_n = np.arange(n, 0, -1, dtype=float)
    sse = np.maximum(tail_sq - tail_sum * tail_sum / tail_n, 0.0)
    stat = sse / (tail_n * tail_n)
    # A short tail can give a small statistic by chance (a few batch means close together), so
    # truncation points past half the series are not searched.
    d = int(np.argmin(stat[: n // 2 + 1]))
    return d * batch, (n // 2) * batch


def is_settled(truncation: tuple[int, int]) -> bool:
    """False when MSER's truncation point is the limit of its search (half the series)."""
    drop, limit = truncation
    return drop < limit


@dataclass(frozen=True)
class SeriesVerdict:
    column: str
    label: str
    unit: str
    transient_ends_s: float | None    # after the start of the measured part; None: too short to say
    settled: bool | None              # False: no end found in the first half
    first_half_mean: float | None     # means of the two halves of the measured part (None: too short)
    second_half_mean: float | None


@dataclass(frozen=True)
class Settling:
    measured_s: float
    series: tuple[SeriesVerdict, ...]

    @property
    def settled(self) -> bool | None:
        known = [v.settled for v in self.series if v.settled is not None]
        return None if not known else all(known)

    def as_dict(self) -> dict:
        ends = [v.transient_ends_s for v in self.series if v.transient_ends_s is not None]
        return {"rule": f"MSER-{BATCH}", "measured_s": self.measured_s, "settled": self.settled,
                "transient_ends_s": max(ends) if ends and self.settled else None,
                "series": {v.column: {"label": v.label, "unit": v.unit, "transient_ends_s": v.transient_ends_s,
                                      "settled": v.settled, "first_half_mean": v.first_half_mean,
                                      "second_half_mean": v.second_half_mean} for v in self.series}}


def settling(frame, interval_s: float) -> Settling:
    """MSER-5 verdicts on the measured part of a series frame (sim.metrics.frame) at `interval_s`."""
    m = frame[~frame["warmup"]]
    out = []
    for col, label, unit in SERIES:
        if col not in m.columns:
            continue
        x = m[col].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        t = mser_truncation(x)
        if t is None:
            out.append(SeriesVerdict(col, label, unit, None, None, None, None))
            continue
        half = len(x) // 2
        out.append(SeriesVerdict(col, label, unit, t[0] * interval_s, is_settled(t),
                                 float(x[:half].mean()), float(x[half:].mean())))
    return Settling(len(m) * interval_s, tuple(out))


def _level(value: float, unit: str) -> str:
    return f"{value:.1f}%" if unit == "%" else f"{value:,.0f}{unit}"


def unsettled_brief(s: dict) -> str:
    """What did not settle, from Settling.as_dict(): the series and their half means."""
    late = [v for v in s["series"].values() if v["settled"] is False]
    return (" and ".join(v["label"] for v in late) + (" show" if len(late) > 1 else " shows")
            + f" no end of the start-up transient in the first half of the {s['measured_s']:g} s measured "
            f"({s['rule']}); first half -> second half: " + ", ".join(
                f"{v['label']} {_level(v['first_half_mean'], v['unit'])} -> {_level(v['second_half_mean'], v['unit'])}"
                for v in late))


def settling_text(s: dict | None) -> str:
    """The `innosim run` line for Settling.as_dict(); empty when the run is too short to judge."""
    if not s or s["settled"] is None:
        return ""
    if s["settled"]:
        return (f"steady state: {s['rule']} ends the start-up transient {s['transient_ends_s']:g} s into the "
                f"{s['measured_s']:g} s measured (" + ", ".join(
                    f"{v['label']} {v['transient_ends_s']:g} s" for v in s["series"].values()
                    if v["transient_ends_s"] is not None) + ")")
    return ("steady state: not reached: " + unsettled_brief(s) + ". The figures mix the start with the steady "
            "state: lengthen run.duration, or skip the start with run.warmup")


def settling_sentence(s: dict | None) -> str:
    """settling_text as a sentence for the app's pages; empty when the run is too short to judge."""
    line = settling_text(s)
    return line[0].upper() + line[1:] + "." if line else ""
