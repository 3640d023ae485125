"""The engine's end-of-run invariant check and the random-settings search built on it."""

import random

from sim.config import scenario_from_dict
from sim.engine import Server
from tests.test_engine import run_checked, small_doc
from validation import fuzz_engine


def test_end_violations_reports_broken_state():
    srv, res = run_checked(small_doc(run__duration="1s"), every=0.25)
    assert srv.end_violations(res) == []
    srv.pool.double_completions = 2
    srv.log.last_checkpoint_lsn = srv.log.lsn + 1
    found = srv.end_violations(res)
    assert any("completed twice" in m for m in found)
    assert any("checkpoint" in m and "does not hold" in m for m in found)


def test_end_violations_needs_tracking_only_for_lost_changes():
    srv = Server(scenario_from_dict(small_doc(run__duration="1s"), "t"))
    res = srv.run()
    assert srv.end_violations(res) == []          # runs without track_writes(): the other checks


def test_draws_are_valid_and_repeatable():
    a = [fuzz_engine.draw(random.Random(5)) for _ in range(3)]
    b = [fuzz_engine.draw(random.Random(5)) for _ in range(3)]
    assert a == b
    rng = random.Random(11)
    for _ in range(40):
        scenario_from_dict(fuzz_engine.draw(rng), "fuzz")      # raises InputError if a draw is refused


def test_a_short_round_finds_nothing(tmp_path, capsys):
    assert fuzz_engine.main(["--runs", "4", "--seed", "2", "--out", str(tmp_path)]) == 0
    assert "4 runs checked" in capsys.readouterr().out
    assert not any(tmp_path.iterdir())


def test_a_failing_run_is_written_as_a_scenario(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fuzz_engine, "check_one", lambda scn: ["end: made up for the test"])
    assert fuzz_engine.main(["--runs", "1", "--seed", "3", "--out", str(tmp_path)]) == 1
    written = list(tmp_path.iterdir())
    assert len(written) == 1
    text = written[0].read_text()
    assert text.startswith("# end: made up for the test")
    from sim.config import load_scenario
    load_scenario(written[0])                                   # the file is a runnable scenario
