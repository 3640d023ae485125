"""benchmarks/result_hash.py: the same run hashes the same in two processes; any change to the run
changes the hash."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))      # as `python benchmarks/result_hash.py` has it
import result_hash  # noqa: E402


def test_same_run_same_hash_and_a_changed_setting_changes_it():
    scn = ROOT / "scenarios" / "default.toml"
    a = result_hash.fingerprint(scn, ["run.duration=1s"])
    b = result_hash.fingerprint(scn, ["run.duration=1s"])
    c = result_hash.fingerprint(scn, ["run.duration=1s", "workload.users=39"])
    d = result_hash.fingerprint(scn, ["run.duration=1s", "run.seed=2"])
    assert a == b and a["commits"] > 0 and len(a["sha256"]) == 64
    assert c["sha256"] != a["sha256"] and d["sha256"] != a["sha256"]


def test_every_scenario_of_the_default_set_is_shipped():
    for name in result_hash.DEFAULT_SET:
        assert result_hash.scenario_path(name).is_file(), name


def test_a_failed_run_is_one_message():
    with pytest.raises(SystemExit, match="the run failed"):
        result_hash.fingerprint(ROOT / "scenarios" / "default.toml", ["server.innodb_io_capacity=-5"])
