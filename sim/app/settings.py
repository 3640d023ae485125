"""Scenario <-> the app's settings form: every key of the schema as text, and the overrides the
edited texts make. Plain functions, tested without Streamlit."""

from __future__ import annotations

from pathlib import Path

from models.errors import InputError
from sim.config import (Scenario, applicable_keys, read_scenario_doc, scenario_and_doc, scenario_doc_from_text,
                        scenario_from_dict, setting_text)

SCENARIO_DIR = Path(__file__).resolve().parent.parent.parent / "scenarios"
FORM_SECTIONS = ("server", "hardware", "workload", "run")


def shipped_oltp_scenarios() -> dict[str, Path]:
    """Shipped scenario files with an oltp workload, by stem; the default one first."""
    out = {}
    for p in sorted(SCENARIO_DIR.glob("*.toml"), key=lambda p: (p.stem != "default", p.stem)):
        if 'kind = "oltp"' in p.read_text(encoding="utf-8"):
            out[p.stem] = p
    return out


def load_shipped(stem: str) -> tuple[dict, Scenario]:
    path = shipped_oltp_scenarios()[stem]
    doc = read_scenario_doc(path)
    return doc, scenario_from_dict(doc, str(path), name=stem)


def parse_upload(data: bytes, filename: str) -> tuple[dict, Scenario]:
    """An uploaded scenario: TOML text, validated, oltp only."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(filename, "", "not UTF-8 text", "a TOML file") from None
    doc = scenario_doc_from_text(text, filename)
    scn = scenario_from_dict(doc, filename, name=Path(filename).stem)
    if scn.workload.kind != "oltp":
        raise InputError(filename, "workload.kind", f"{scn.workload.kind!r} is not simulated on this page",
                         "oltp (IObench scenarios: the IObench page or `innosim run`)")
    return doc, scn


def editable_keys(section: str, scn: Scenario) -> list[str]:
    """The form's keys: those that apply to the scenario, less the workload kind (this page is oltp)."""
    return [k for k in applicable_keys(scn, section) if (section, k) != ("workload", "kind")]


def form_texts(scn: Scenario) -> dict[str, str]:
    """`section.key` -> text, for every setting the form shows."""
    return {f"{s}.{k}": setting_text(scn, s, k) for s in FORM_SECTIONS for k in editable_keys(s, scn)}


def overrides_from(initial: dict[str, str], edited: dict[str, str]) -> list[str]:
    """`section.key=value` for every setting whose text was changed (and not emptied)."""
    out = []
    for k, text in edited.items():
        text = text.strip()
        if text and text != initial.get(k, "").strip():
            out.append(f"{k}={text}")
    return out


PASTED_CNF = "pasted my.cnf"
PASTED_VARS = "pasted variables"


def with_server_inputs(doc: dict, source: str, name: str, cnf_text: str = "",
                       vars_text: str = "") -> tuple[dict, Scenario]:
    """The scenario with a pasted server's variables (sim.server_vars: version and settings) and a
    pasted my.cnf (sim.mycnf) applied, as a document the form's edits apply to, and validated
    (errors name the pasted text's line)."""
    texts = {PASTED_CNF: cnf_text, PASTED_VARS: vars_text}
    scn, merged = scenario_and_doc(doc, source, name, option_files=[PASTED_CNF] if cnf_text.strip() else [],
                                   option_texts=texts, server_vars=PASTED_VARS if vars_text.strip() else None)
    return merged, scn


def apply(doc: dict, source: str, name: str, overrides: list[str]) -> Scenario:
    """The scenario the form describes; InputError names the setting and what is allowed."""
    from sim.engine import preflight

    if any(o.startswith("workload.data_size=") for o in overrides) and "warehouses" in doc.get("workload", {}):
        # The form shows the data size the warehouses make; an edited size replaces them.
        doc = {**doc, "workload": {k: v for k, v in doc["workload"].items() if k != "warehouses"}}
    scn = scenario_from_dict(doc, source, name=name, overrides=overrides)
    if scn.workload.kind != "oltp":
        raise InputError(source, "workload.kind", "only oltp scenarios are simulated on this page", "oltp")
    preflight(scn)
    return scn
