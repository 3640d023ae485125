"""benchmarks/machine.py: the CPU a benchmark ran on, read from /proc/cpuinfo."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))   # as the scripts have it
import machine  # noqa: E402


def test_cpu_model_reads_the_first_model_name():
    info = ("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n\n"
            "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\n")
    assert machine.cpu_model(info) == "Intel(R) Xeon(R) Processor"


def test_cpu_model_without_a_model_name_falls_back_to_platform():
    assert machine.cpu_model("processor\t: 0\nmodel name\t:\n")       # empty value: not taken
    assert machine.cpu_model("") != ""


def test_header_names_cores_python_and_the_reference_loop(monkeypatch):
    monkeypatch.setattr(machine, "reference_loop_s", lambda: 0.5)
    line = machine.header("median of 3 runs")
    assert line.startswith("# ") and "cores, Python " in line
    assert "reference loop 0.50 s; median of 3 runs" in line
    assert machine.footer() == "# reference loop after the runs: 0.50 s"


def test_interpreter_says_whether_libpython_is_shared():
    shared = ("7f00-7f01 r-xp 00000000 08:01 1 /opt/py/lib/libpython3.11.so.1.0\n"
              "7f02-7f03 r-xp 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libc.so.6\n")
    linked = "7f02-7f03 r-xp 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    assert machine.interpreter(shared).endswith(", libpython shared")
    assert machine.interpreter(linked).endswith(", libpython linked in")
    assert machine.interpreter(linked).startswith("/")                 # the executable's real path


def test_instructions_reads_callgrinds_total():
    import instructions
    err = "==1== Callgrind, a call-graph generating cache profiler\n==1== Events    : Ir\n==1== Collected : 9,707,939,780\n"
    assert instructions.parse_collected(err) == 9_707_939_780
    with pytest.raises(ValueError):
        instructions.parse_collected("==1== no such line\n")
