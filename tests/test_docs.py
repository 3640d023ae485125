"""The documents stay connected: every relative link in README.md and docs/ resolves to a file and,
with an anchor, to one of its headings; every citation of a docs section from code, scenarios,
profiles or documents (`docs/ENGINE.md, "Crash recovery"`) names a heading that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINKED = [ROOT / "README.md", *DOCS, ROOT / "validation" / "live" / "README.md"]
# A section cited by name: a docs file, a comma, colon or 's, then the heading's start in double or
# single quotes (single in JSON strings).
CITATION = re.compile(r"(docs/[A-Z]+\.md)(?:,|:|'s)? \\?[\"']([^\"'\\]+)")
CITED_IN = ("*.py", "*.toml", "*.json", "*.md")


def heading_texts(path: Path) -> list[str]:
    """Headings as a reader sees them (no #, no backticks)."""
    out, in_code = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^#+\s+(.*)", line)
        if m:
            out.append(m.group(1).replace("`", "").strip())
    return out


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for h in heading_texts(path):
        a = anchor(h)
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out


def links(path: Path) -> list[tuple[int, str]]:
    out, in_code = [], False
    for ln, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not in_code:
            out += [(ln, m.group(1)) for m in re.finditer(r"\]\(([^)\s]+)\)", line)
                    if not m.group(1).startswith(("http://", "https://", "mailto:"))]
    return out


def test_anchor_follows_github_rules():
    assert anchor("Open-loop load: workload.rate") == "open-loop-load-workloadrate"
    assert anchor("innodb_file_per_table = OFF") == "innodb_file_per_table--off"
    assert anchor("The tpcc replay's slow swing") == "the-tpcc-replays-slow-swing"


@pytest.mark.parametrize("path", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    broken = []
    for ln, target in links(path):
        file_part, _, frag = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"line {ln}: {target} (no such file)")
        elif frag and dest.suffix == ".md" and frag not in anchors(dest):
            broken.append(f"line {ln}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_cited_sections_exist():
    cited = 0
    broken = []
    for pattern in CITED_IN:
        for path in ROOT.rglob(pattern):
            if any(part.startswith(".") for part in path.relative_to(ROOT).parts):
                continue                                    # .venv, .git
            for ln, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                for m in CITATION.finditer(line):
                    cited += 1
                    doc, title = ROOT / m.group(1), m.group(2).strip()
                    if not doc.exists():
                        broken.append(f"{path.relative_to(ROOT)}:{ln}: {m.group(1)} does not exist")
                    elif not any(h.startswith(title) or title.startswith(h) for h in heading_texts(doc)):
                        broken.append(f"{path.relative_to(ROOT)}:{ln}: no heading {title!r} in {m.group(1)}")
    assert cited >= 10, "the citation pattern no longer finds the project's citations"
    assert not broken, "\n".join(broken)


def test_readme_has_the_two_commands_ci_runs():
    """.ci/run runs the README's test command, then the slow cases that command leaves out; the
    README keeps both set-up commands."""
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_cmd = 'python3 -m venv .venv && .venv/bin/pip install -q -e ".[dev]" && .venv/bin/python -m pytest'
    assert test_cmd in readme and test_cmd in ci
    assert "-m 'not slow'" in (ROOT / "pyproject.toml").read_text()
    assert ci.index(test_cmd) < ci.index(".venv/bin/python -m pytest -m slow")
    assert 'python3 -m venv .venv && .venv/bin/pip install -q -e ".[dev]" && .venv/bin/innosim run' in readme
