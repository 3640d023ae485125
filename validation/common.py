"""Shared by the validation suites."""

from __future__ import annotations

import math


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
