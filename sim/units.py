"""Parsing of sizes ("16K", "3G") and durations ("10ms", "2s") as my.cnf and users write them."""

from __future__ import annotations

import re

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]?)(?:i?B)?\s*$", re.IGNORECASE)
_SIZE_MULT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
_DUR_RE = re.compile(r"^\s*(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(ns|us|µs|ms|s|m|min|h)?\s*$")
_DUR_MULT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, None: 1.0,
             "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_size_bytes(value: object) -> int:
    """Bytes from an int or a my.cnf-style size string (K/M/G/T/P are powers of 1024).

    Raises ValueError with a short reason on anything else.
    """
    if isinstance(value, bool):
        raise ValueError("a size, not a boolean")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size must not be negative")
        return value
    if isinstance(value, float):
        if value < 0 or value != int(value):
            raise ValueError("a size must be a whole, non-negative number of bytes")
        return int(value)
    if not isinstance(value, str):
        raise ValueError("a size such as 16K or 3G")
    m = _SIZE_RE.match(value)
    if not m:
        raise ValueError("a size such as 16K or 3G")
    number = float(m.group(1)) * _SIZE_MULT[m.group(2).upper()]
    if number != int(number):
        raise ValueError("a size must come to a whole number of bytes")
    return int(number)


def parse_duration_s(value: object) -> float:
    """Seconds from a number (taken as seconds) or a string with a unit (ns, us, ms, s, min, h)."""
    if isinstance(value, bool):
        raise ValueError("a duration, not a boolean")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("a duration must not be negative")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("a duration such as 250ms or 60s")
    m = _DUR_RE.match(value)
    if not m:
        raise ValueError("a duration such as 250ms or 60s")
    return float(m.group(1)) * _DUR_MULT[m.group(2)]


def format_size(n_bytes: int) -> str:
    """Shortest exact K/M/G form of a byte count (16384 -> "16K")."""
    for unit, mult in (("P", 1 << 50), ("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n_bytes >= mult and n_bytes % mult == 0:
            return f"{n_bytes // mult}{unit}"
    return str(n_bytes)
