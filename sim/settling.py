"""Has a run left its start-up transient? A settling band on the per-second series.

An oltp run starts with no dirty page (`warm_start` preloads clean ones), so in its first
seconds every modification finds a clean page and the flush list fills fastest. When the
modified age first reaches the sync point, the oldest end of the flush list holds those pages,
more of them per byte of redo than at any later time: the first crossing flushes harder and
stalls longer than the steady state a benchmark that has run for an hour shows. After it the
modified age can overshoot and swing for minutes before it holds.

The rule is the settling time of control engineering (the time after which a response stays
within a band of a few per cent around its final value; e.g. K. Ogata, Modern Control
Engineering, on the 2 % and 5 % criteria), read on batch means of five observations (the batch
of MSER-5: White, Cobb and Spratt, Winter Simulation Conference 2000):

- the final value is the mean of the second half of the batch means;
- the band is the larger of BAND_REL of that level and NOISE_Z times the noise of one batch
  mean (the larger of the successive-difference estimate over the second half and the scatter
  about a straight line over the last quarter, so slow noise widens it too);
- batch means pass through a running median of three first (J. W. Tukey, Exploratory Data
  Analysis, 1977), so one stalled second does not count as leaving the band;
- the transient ends after the last smoothed batch mean outside the band. An end past half the
  series means the run has not settled: its second half is not yet a level to measure against.

MSER-5 (White 1997), the rule used until 2026-11-27, finds the end of a monotone transient but
not of a damped swing: on one 8 GB DBT2 run it ended the transient at 215 s, found no end, found
no end and ended it at 540 s over the first 600, 800, 1,000 and 1,200 s (docs/ENGINE.md, "The InnoDB
engine", where the two rules are compared).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BATCH = 5                      # observations per batch mean
MIN_BATCHES = 4                # fewer batch means than this: no verdict
BAND_REL = 0.05                # the band's least half-width, as a share of the level (the 5 % criterion)
NOISE_Z = 4.0                  # the band's half-width in noise standard deviations of one batch mean, if wider
# The series the verdict reads (column of the series files, label, unit).
SERIES = (("modified_age_pct", "modified age", "%"), ("pages_flushed", "pages flushed", "/s"),
          ("tps", "commits", "/s"))


@dataclass(frozen=True)
class Truncation:
    drop: int              # observations before the steady state (the end of the last batch outside the band)
    limit: int             # the most that may be dropped with the run still settled: half the batch means
    level: float           # the second half's mean
    half_width: float      # the band is level ± half_width

    @property
    def settled(self) -> bool:
        return self.drop <= self.limit


def batch_means(x: np.ndarray, batch: int) -> np.ndarray:
    n = len(x) // batch
    return x[: n * batch].reshape(n, batch).mean(axis=1)


def running_median3(z: np.ndarray) -> np.ndarray:
    """Each inner value replaced by the median of it and its two neighbours; the ends kept."""
    s = z.copy()
    if len(z) >= 3:
        s[1:-1] = np.median(np.stack([z[:-2], z[1:-1], z[2:]]), axis=0)
    return s


def noise_sd(z: np.ndarray) -> float:
    """Standard deviation of one batch mean about the level: the larger of the successive-difference
    estimate over the second half (a linear drift does not count: the differences' variance) and the
    residual scatter about a least-squares line over the last quarter (which a slow swing enters)."""
    n = len(z)
    half = z[n // 2:]
    sd = float(np.sqrt(np.diff(half).var() / 2.0)) if len(half) > 2 else 0.0
    q = z[n - n // 4:]
    if len(q) >= 3:
        t = np.arange(len(q), dtype=float)
        resid = q - np.polyval(np.polyfit(t, q, 1), t)
        sd = max(sd, float(np.sqrt((resid * resid).sum() / (len(q) - 2))))
    return sd


def band_truncation(values, batch: int = BATCH) -> Truncation | None:
    """Where the finite `values` enter their settling band for good (see the module docstring).
    None with fewer than MIN_BATCHES batch means."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    z = batch_means(x, batch)
    n = len(z)
    if n < MIN_BATCHES:
        return None
    level = float(z[n // 2:].mean())
    half_width = max(BAND_REL * abs(level), NOISE_Z * noise_sd(z))
    # A flat series must not leave a band of width 0 by rounding.
    tol = 1e-9 * max(1.0, float(np.abs(z).max()))
    outside = np.flatnonzero(np.abs(running_median3(z) - level) > half_width + tol)
    drop = 0 if len(outside) == 0 else int(outside[-1] + 1) * batch
    return Truncation(drop, (n // 2) * batch, level, half_width)


@dataclass(frozen=True)
class SeriesVerdict:
    column: str
    label: str
    unit: str
    transient_ends_s: float | None    # after the start of the measured part; None: too short to say
    settled: bool | None              # False: the series leaves its band after the first half
    level: float | None               # the second half's mean and the band's half-width
    band: float | None
    first_half_mean: float | None     # means of the two halves of the measured part (None: too short)
    second_half_mean: float | None


@dataclass(frozen=True)
class Settling:
    measured_s: float
    interval_s: float
    series: tuple[SeriesVerdict, ...]

    @property
    def settled(self) -> bool | None:
        known = [v.settled for v in self.series if v.settled is not None]
        return None if not known else all(known)

    def as_dict(self) -> dict:
        ends = [v.transient_ends_s for v in self.series if v.transient_ends_s is not None]
        rule = f"±{BAND_REL:.0%} band, {BATCH * self.interval_s:g} s means"
        return {"rule": rule, "measured_s": self.measured_s, "settled": self.settled,
                "transient_ends_s": max(ends) if ends and self.settled else None,
                "series": {v.column: {"label": v.label, "unit": v.unit, "transient_ends_s": v.transient_ends_s,
                                      "settled": v.settled, "level": v.level, "band": v.band,
                                      "first_half_mean": v.first_half_mean,
                                      "second_half_mean": v.second_half_mean} for v in self.series}}


def settling(frame, interval_s: float) -> Settling:
    """Settling-band verdicts on the measured part of a series frame (sim.metrics.frame) at `interval_s`."""
    m = frame[~frame["warmup"]]
    out = []
    for col, label, unit in SERIES:
        if col not in m.columns:
            continue
        x = m[col].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        t = band_truncation(x)
        if t is None:
            out.append(SeriesVerdict(col, label, unit, None, None, None, None, None, None))
            continue
        half = len(x) // 2
        out.append(SeriesVerdict(col, label, unit, t.drop * interval_s, t.settled, t.level, t.half_width,
                                 float(x[:half].mean()), float(x[half:].mean())))
    return Settling(len(m) * interval_s, interval_s, tuple(out))


def _level(value: float, unit: str) -> str:
    return f"{value:.1f}%" if unit == "%" else f"{value:,.0f}{unit}"


def _band(v: dict) -> str:
    width = f"{v['band']:.1f}" if v["unit"] == "%" else f"{v['band']:,.0f}"
    return f"{_level(v['level'], v['unit'])} ±{width}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def unsettled_brief(s: dict) -> str:
    """What did not settle, from Settling.as_dict(): the series, their bands, when they last left
    them, and their half means."""
    late = [v for v in s["series"].values() if v["settled"] is False]
    return (_and([f"{v['label']} ({_band(v)})" for v in late])
            + (" leave their bands" if len(late) > 1 else " leaves its band")
            + f" after the first half of the {s['measured_s']:g} s measured ({s['rule']}; last at "
            + ", ".join(f"{v['transient_ends_s']:g} s" for v in late) + "); first half -> second half: "
            + ", ".join(f"{v['label']} {_level(v['first_half_mean'], v['unit'])} -> "
                        f"{_level(v['second_half_mean'], v['unit'])}" for v in late))


def settling_text(s: dict | None) -> str:
    """The `innosim run` line for Settling.as_dict(); empty when the run is too short to judge."""
    if not s or s["settled"] is None:
        return ""
    if s["settled"]:
        return (f"steady state: from {s['transient_ends_s']:g} s of the {s['measured_s']:g} s measured, each "
                f"series within its band around its second half's level ({s['rule']}: " + ", ".join(
                    f"{v['label']} {_band(v)} from {v['transient_ends_s']:g} s" for v in s["series"].values()
                    if v["transient_ends_s"] is not None) + ")")
    last_out_s = max(v["transient_ends_s"] for v in s["series"].values() if v["settled"] is False)
    return ("steady state: not reached: " + unsettled_brief(s) + ". The figures mix the start with the steady "
            f"state: lengthen run.duration to at least {2 * last_out_s:g} s (twice the last time a series left "
            f"its band; a longer run may find a later one), or skip the start with run.warmup (at least "
            f"{last_out_s:g} s more than now)")


def steady_text(steady: dict | None, s: dict | None) -> str:
    """The headline figures over the steady state (sim.metrics.steady_figures, with Settling.as_dict()
    as `s`); empty when there are none, or when the steady state starts where the measured part
    does (the headline figures are then its figures)."""
    if not steady or not s or not s["transient_ends_s"]:
        return ""
    return (f"steady-state figures, the last {steady['seconds']:,} s ({steady['from_s']:g} s into the run on): "
            f"{steady['tps_mean']:,.0f} commits/s (per second p1 {steady['tps_p1_per_s']:,.0f}; "
            f"{steady['seconds_below_50pct_median']} s below half the median), "
            f"{steady['pages_flushed_per_s_total']:,.0f} pages flushed/s, modified age {steady['modified_age_mean_pct']:.1f}% "
            f"on average (max {steady['modified_age_max_pct']:.1f}%), checkpoint age max "
            f"{steady['checkpoint_age_max_pct']:.1f}%, buffer_flush_sync_waits {steady['buffer_flush_sync_waits']:,} "
            f"(max {steady['buffer_flush_sync_waits_max_per_s']:,}/s)")


def as_sentence(line: str) -> str:
    """A summary line as a sentence for the app's pages (capitalised, with a full stop); empty stays empty."""
    return line[0].upper() + line[1:] + "." if line else ""


def settling_sentence(s: dict | None) -> str:
    """settling_text as a sentence for the app's pages; empty when the run is too short to judge."""
    return as_sentence(settling_text(s))


def steady_sentence(steady: dict | None, s: dict | None) -> str:
    """steady_text as a sentence for the app's pages; empty where steady_text is."""
    return as_sentence(steady_text(steady, s))
