"""What machine a benchmark ran on, printed with its figures: the CPU model, the cores, Python, and
the reference loop (10M Python additions), whose time tells a slow hour of a VM from a slower code
change. The project's machines have changed CPU between sessions (an Intel Xeon VM on 2026-11-29,
a 2-vCPU AMD EPYC for the crash-recovery runs of 2026-11-27), so a figure without them cannot be
compared with another.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

REFERENCE_ADDITIONS = 10_000_000


def cpu_model(cpuinfo: str | None = None) -> str:
    """The first "model name" of /proc/cpuinfo (Linux), else what platform knows."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


# At module level, as `python -c "s = 0\nfor i in range(10_000_000): s += i"` runs it (global names:
# slower than the same loop inside a function), the form of the loops quoted in docs/SPEED.md.
_REFERENCE_LOOP = compile(f"s = 0\nfor i in range({REFERENCE_ADDITIONS}):\n    s += i\n", "<reference loop>", "exec")


def reference_loop_s() -> float:
    """Wall seconds for REFERENCE_ADDITIONS additions in a module-level Python loop."""
    t0 = time.perf_counter()
    exec(_REFERENCE_LOOP, {})
    return time.perf_counter() - t0


def interpreter(maps: str | None = None) -> str:
    """Which Python runs the benchmark: the executable, and whether it calls into a shared libpython.

    Builds differ in speed on one machine: on 2026-11-30's EPYC VM the pyenv build the README's
    `python3` found (3.11.7, libpython shared, no profile-guided optimisation) ran the reference loop
    in 0.94 s and Debian's /usr/bin/python3.11 (3.11.2, libpython linked in) in 0.74 s (docs/SPEED.md).
    """
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            maps = None
    exe = os.path.realpath(sys.executable)
    if maps is None:
        return exe
    shared = any("libpython" in line for line in maps.splitlines())
    return f"{exe}, libpython {'shared' if shared else 'linked in'}"


def header(what: str = "") -> str:
    """One comment line: CPU, cores, Python and its build, the reference loop now, and what the
    benchmark does."""
    line = (f"# {cpu_model()} ({platform.machine()}), {os.cpu_count()} cores, Python {platform.python_version()} "
            f"({interpreter()}); reference loop {reference_loop_s():.2f} s")
    return line + (f"; {what}" if what else "")


def footer() -> str:
    """The reference loop again, after the runs: a machine that slowed during them shows here."""
    return f"# reference loop after the runs: {reference_loop_s():.2f} s"
