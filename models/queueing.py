"""Plain queueing and contention formulas used by the device and filesystem models.

No SimPy here: every function is arithmetic, unit-tested on its own.
Sources: the formulas are standard (Little 1961; closed-network asymptotic bounds, Lazowska et al.
1984 ch. 5); the lock hand-off cost is the Boyd-Wickizer et al. model ("Non-scalable locks are
dangerous", Linux Symposium 2012) as summarised in shared/research/fs-device.md section 1.5(c).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def littles_law_population(throughput_per_s: float, response_s: float) -> float:
    """L = X * R: mean number in the system from throughput and mean response time."""
    return throughput_per_s * response_s


def closed_loop_throughput_bound(population: int, unloaded_response_s: float,
                                 think_s: float, capacity_per_s: float) -> float:
    """Asymptotic bound of a closed system: X(N) <= min(N / (R0 + Z), X_max)."""
    if population <= 0:
        return 0.0
    return min(population / (unloaded_response_s + think_s), capacity_per_s)


def closed_loop_response_bound(population: int, unloaded_response_s: float,
                               think_s: float, capacity_per_s: float) -> float:
    """Asymptotic bound of a closed system: R(N) >= max(R0, N / X_max - Z)."""
    return max(unloaded_response_s, population / capacity_per_s - think_s)


def lock_handoff_s(base_s: float, per_waiter_s: float, waiters: int, max_waiters: int) -> float:
    """Hold time of a short spin-protected critical section handed over with `waiters` spinning.

    s(n) = s0 + s1 * min(n, n_max). The hand-off cost grows with the number of spinning CPUs
    (cache-line transfers), capped where further waiters stop spinning.
    """
    if waiters < 0:
        raise ValueError("waiters must be >= 0")
    return base_s + per_waiter_s * min(waiters, max_waiters)


def mix_multiplier(read_fraction: float, multiplier_at_half: float) -> float:
    """Service-time multiplier for a read/write mix on one device.

    m(p) = 1 + (m_50 - 1) * 4 p (1 - p): 1 for pure reads or pure writes, m_50 at a 50/50 mix.
    m_50 comes from the measured mixed capacity (fs-device.md section 2.2: mixing is neither additive
    nor harmonic, so the 50/50 capacity is calibrated).
    """
    p = 0.0 if read_fraction < 0.0 else 1.0 if read_fraction > 1.0 else read_fraction
    return 1.0 + (multiplier_at_half - 1.0) * 4.0 * p * (1.0 - p)


def mix_multiplier_at_half(read_capacity_iops: float, write_capacity_iops: float,
                           mixed_capacity_iops: float) -> float:
    """m_50 such that a 50/50 mix saturates at the measured mixed capacity.

    With pure-op capacities C_r and C_w a 50/50 stream costs 0.5/C_r + 0.5/C_w device-seconds per op;
    the measured C_mix means it costs 1/C_mix, so m_50 = (1/C_mix) / (0.5/C_r + 0.5/C_w).
    """
    harmonic_cost = 0.5 / read_capacity_iops + 0.5 / write_capacity_iops
    return (1.0 / mixed_capacity_iops) / harmonic_cost


def mixed_capacity_iops(read_fraction: float, read_capacity_iops: float,
                        write_capacity_iops: float, multiplier_at_half: float) -> float:
    """Saturation throughput of a stream with the given read fraction (inverse of the mean cost)."""
    p = min(max(read_fraction, 0.0), 1.0)
    cost = (p / read_capacity_iops + (1.0 - p) / write_capacity_iops)
    return 1.0 / (cost * mix_multiplier(p, multiplier_at_half))


def depth_factor(outstanding: int, curve: Sequence[Sequence[float]]) -> float:
    """Capacity factor at `outstanding` requests from a measured curve [[depth, factor], ...].

    1.0 below the first point, flat beyond the last, linear in log2(depth) between points.
    Models devices whose throughput falls at very deep queues (host driver contention).
    """
    if not curve or outstanding < curve[0][0]:
        return 1.0
    if outstanding >= curve[-1][0]:
        return float(curve[-1][1])
    x = math.log2(outstanding)
    for (d0, f0), (d1, f1) in zip(curve, curve[1:]):
        if d0 <= outstanding <= d1:
            x0, x1 = math.log2(d0), math.log2(d1)
            return float(f0 + (f1 - f0) * (x - x0) / (x1 - x0))
    return float(curve[-1][1])


def interpolate_log2(x: float, points: Sequence[tuple[float, float]]) -> float:
    """Interpolate y(x) linearly in (log2 x, log y); extrapolate from the nearest segment.

    Used to carry per-block-size device figures (capacity, latency) to sizes not measured.
    """
    pts = sorted(points)
    if len(pts) == 1:
        x0, y0 = pts[0]
        # One measured size: keep the device's byte rate for capacity-like and latency-like
        # figures alike is not knowable; hold the figure constant.
        return y0
    lx = math.log2(x)
    if x <= pts[0][0]:
        (x0, y0), (x1, y1) = pts[0], pts[1]
    elif x >= pts[-1][0]:
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
    else:
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            if x0 <= x <= x1:
                break
    lx0, lx1 = math.log2(x0), math.log2(x1)
    ly = math.log(y0) + (math.log(y1) - math.log(y0)) * (lx - lx0) / (lx1 - lx0)
    return math.exp(ly)


def erlang_c_wait_probability(servers: int, offered_load: float) -> float:
    """Erlang C: probability an arrival waits in an M/M/k queue with offered load a = lambda*S."""
    if offered_load >= servers:
        return 1.0
    term = 1.0
    total = 1.0
    for i in range(1, servers):
        term *= offered_load / i
        total += term
    top = term * offered_load / servers / (1.0 - offered_load / servers)
    return top / (total + top)


def mmk_response_s(servers: int, service_s: float, arrival_per_s: float) -> float:
    """Mean response time of M/M/k: S + P_wait * S / (k (1 - rho))."""
    a = arrival_per_s * service_s
    rho = a / servers
    if rho >= 1.0:
        return math.inf
    return service_s + erlang_c_wait_probability(servers, a) * service_s / (servers * (1.0 - rho))


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (q in [0, 100])."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return float(sorted_values[min(rank, len(sorted_values)) - 1])
