"""validation/reference/disagreements.toml: the explanations of failing rows the suites print."""

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from validation.common import RowResult, disagreement_lines, known_causes

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "validation" / "reference"


def test_every_explanation_names_a_checked_row_and_an_existing_docs_section():
    rows = {}
    for suite in ("iobench", "flushing", "versions"):
        for r in tomllib.loads((REFERENCE / f"{suite}.toml").read_text())["row"]:
            rows[r["id"]] = r
    causes = known_causes()
    assert causes, "no explanations loaded"
    for rid, c in causes.items():
        assert rid in rows, f"{rid}: not a row of any reference file"
        assert rows[rid]["check"] not in ("not_modelled", "report"), f"{rid}: is never checked"
        m = re.match(r'(docs/[A-Z]+\.md), "([^"]+)"', c["docs"])
        assert m, f"{rid}: docs pointer {c['docs']!r} is not a docs file, a comma and a quoted section"
        text = (ROOT / m.group(1)).read_text().replace("`", "")
        assert m.group(2) in text, f"{rid}: {m.group(2)!r} is not in {m.group(1)}"
        assert len(c["why"]) > 40


@dataclass(frozen=True)
class _Row:
    id: str
    where: str = "somewhere in the article"
    metric: str = "peak_iops"
    b: str | None = None
    check: str = "figure"
    tolerance: float = 0.15
    reason: str = ""


def test_lines_and_json_carry_the_explanation_only_where_a_row_fails():
    explained = next(iter(known_causes()))
    fail = RowResult(_Row(explained), 1.0, 2.0, 1.0, False)
    unexplained = RowResult(_Row("no.such.row"), 1.0, 2.0, 1.0, False)
    passing = RowResult(_Row(explained), 1.0, 1.0, 0.0, True)
    lines = disagreement_lines([fail, unexplained], "DISAGREES")
    assert lines[0].startswith(f"DISAGREES: {explained}: published 1, simulated 2")
    assert lines[1].startswith("    why: ") and known_causes()[explained]["docs"] in lines[1]
    assert lines[2].startswith("DISAGREES: no.such.row") and len(lines) == 3
    assert disagreement_lines([passing], "DISAGREES") == [
        f"stale explanation: {explained} no longer fails; its entry in "
        "validation/reference/disagreements.toml is out of date"]
    assert fail.to_json("case")["known_cause"] == known_causes()[explained]
    assert "known_cause" not in passing.to_json("case")
    assert "known_cause" not in unexplained.to_json("case")
