"""Slow throughput swings, and the flush list's residence time that paces them.

Where the modified age is held at a limit (5.6/5.7 `max_modified_age_sync`, 8.0's sync-flush
point, MariaDB's furious flushing), each second commits only as much redo as the flushers move
the flush list's tail: the pages to write per byte of redo set the throughput. Pages written in
one burst are often modified again soon after and re-enter the flush list together, at one LSN
(buf_flush_insert_into_flush_list on their first modification after the write). They reach the
tail again one residence time later (how long a page first modified now stays on the list), and
the burst repeats. The first crossing of the sync point, which flushes the start's crowded
cohort, starts such an echo. Measured in this model (docs/ENGINE.md, "The tpcc replay's slow swing"):
seed-tpcc-2500w-150g repeats every 360-370 s against a residence of 349-357 s, and every
220-230 s against 210 s with half the log.

Plain functions of the series; nothing here runs the engine.
"""

from __future__ import annotations

import numpy as np

from sim.settling import as_sentence

MIN_CYCLES = 2            # a period is named only if the measured part holds at least this many
MIN_ACF = 0.4             # autocorrelation at the period below this: no period (noise reaches ~2/sqrt(n))
SWING_BELOW = 0.9         # lowest 10 s average under this share of the median: a swing worth a line
MATCH_TOLERANCE = 0.2     # period within this share of the residence time: paced by the flush list


def dominant_period(values, interval_s: float, min_cycles: int = MIN_CYCLES,
                    min_acf: float = MIN_ACF) -> tuple[float, float] | None:
    """(period_s, autocorrelation) of the strongest repetition in an evenly spaced series, or None.

    The series is detrended (least-squares line); the period is the lag of the autocorrelation's
    highest value between its first negative value and len/min_cycles, so at least min_cycles
    repetitions are in the data. None when the series is too short, flat, or the peak is under
    min_acf or on the search's edge."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = len(x)
    if n < 4 * min_cycles:
        return None
    t = np.arange(n, dtype=float)
    scale = max(1.0, float(np.max(np.abs(x))))
    x = x - np.polyval(np.polyfit(t, x, 1), t)
    var = float(np.dot(x, x))
    if var <= 1e-12 * n * scale ** 2:
        return None
    max_lag = n // min_cycles
    acf = np.array([float(np.dot(x[: n - lag], x[lag:])) / var for lag in range(max_lag + 1)])
    negative = np.nonzero(acf < 0)[0]
    if len(negative) == 0 or negative[0] >= max_lag:
        return None
    lag = int(negative[0] + np.argmax(acf[negative[0]: max_lag + 1]))
    if acf[lag] < min_acf or lag == max_lag:
        return None
    return lag * interval_s, float(acf[lag])


def residence_times_s(time_s, lsn, oldest_lsn) -> np.ndarray:
    """For each sample t with current LSN L: the time until the oldest modification in the buffer
    pool (the flush list's tail) reaches L, for the samples whose L it reaches within the series.
    The tail is taken as its running maximum (flushing never makes it older)."""
    t = np.asarray(time_s, dtype=float)
    cur = np.asarray(lsn, dtype=float)
    tail = np.maximum.accumulate(np.asarray(oldest_lsn, dtype=float))
    if len(t) == 0:
        return np.empty(0)
    reached = cur <= tail[-1]
    return np.interp(cur[reached], tail, t) - t[reached]


def swing(tps_10s, tps_interval_s: float, time_s, lsn, oldest_lsn) -> dict | None:
    """The swing verdict from the measured part: the 10 s throughput and the 1 s LSN series.

    None when the 10 s averages stay above SWING_BELOW of their median or repeat with no period."""
    tps = np.asarray(tps_10s, dtype=float)
    if len(tps) == 0:
        return None
    median = float(np.median(tps))
    if median <= 0 or float(tps.min()) >= SWING_BELOW * median:
        return None
    found = dominant_period(tps, tps_interval_s)
    if found is None:
        return None
    period_s, acf = found
    res = residence_times_s(time_s, lsn, oldest_lsn)
    residence_s = float(np.median(res)) if len(res) else None
    return {
        "tps_10s_min": float(tps.min()), "tps_10s_max": float(tps.max()), "tps_10s_median": median,
        "min_over_median": float(tps.min()) / median,
        "period_s": period_s, "autocorrelation": acf,
        "cycles": len(tps) * tps_interval_s / period_s,
        "residence_s": residence_s,
        "paced_by_flush_list": (residence_s is not None
                                and abs(period_s - residence_s) <= MATCH_TOLERANCE * residence_s),
    }


def swing_text(s: dict | None) -> str:
    """The `innosim run` line for a swing verdict; empty when there is none."""
    if not s:
        return ""
    head = (f"throughput swing: 10 s averages {s['tps_10s_min']:,.0f}-{s['tps_10s_max']:,.0f} commits/s "
            f"(lowest {s['min_over_median']:.2f} of the median), repeating about every {s['period_s']:g} s "
            f"({s['cycles']:.1f} cycles measured, autocorrelation {s['autocorrelation']:.2f})")
    if s["residence_s"] is None:
        return head + "; the flush list's tail did not reach the measured part's LSNs, so no residence time"
    if s["paced_by_flush_list"]:
        return (head + f"; a page first modified now stays a median {s['residence_s']:,.0f} s on the flush "
                "list, so the swing is an echo: pages written in one burst are modified again together "
                "and reach the list's tail together one residence later")
    return (head + f"; pages stay a median {s['residence_s']:,.0f} s on the flush list, not the period, so "
            "the flush list does not pace it")


def swing_sentence(s: dict | None) -> str:
    """swing_text as a sentence for the app's pages."""
    return as_sentence(swing_text(s))
