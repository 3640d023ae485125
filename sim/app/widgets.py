"""Building blocks the app's pages share: a figure with its downloads, the scenario chooser, the
settings form and a run with a progress bar."""

from __future__ import annotations

import zlib

import streamlit as st

from models.errors import InputError
from sim.app.settings import (FORM_SECTIONS, editable_keys, form_texts, load_shipped, parse_upload,
                              shipped_oltp_scenarios, with_server_inputs)
from sim.app.simulate import run_resolved
from sim.config import SCHEMA
from sim.plots import png_bytes
from sim.run_output import resolved_toml


def stalls_1s_text(s: dict) -> str:
    """A run summary's 1 s stalls as the pages show them: "count (seconds s)"."""
    return f"{s['stalls_1s']['count']} ({s['stalls_1s']['seconds']:.0f} s)"


def figure_block(title: str, fig, data, key: str, caption: str = "") -> None:
    """A figure with its PNG and CSV downloads."""
    st.markdown(f"**{title}**")
    png = png_bytes(fig)
    st.image(png, width="stretch")
    if caption:
        st.caption(caption)
    c1, c2, _ = st.columns([1, 1, 4])
    c1.download_button("PNG", png, f"{key}.png", "image/png", key=f"png-{key}")
    c2.download_button("CSV", data.to_csv(index=False), f"{key}.csv", "text/csv", key=f"csv-{key}")


def choose_scenario(prefix: str, default: str = "default"):
    """(doc, scenario, source) from the shipped list or an upload; None after showing an error or
    while no file is uploaded."""
    source = st.radio("scenario", ["shipped", "upload"], horizontal=True, key=f"{prefix}-source")
    if source == "shipped":
        names = list(shipped_oltp_scenarios())
        stem = st.selectbox("shipped scenario", names, index=names.index(default) if default in names else 0,
                            key=f"{prefix}-stem")
        doc, scn = load_shipped(stem)
        return doc, scn, f"scenarios/{stem}.toml"
    up = st.file_uploader("scenario TOML", type=["toml"], key=f"{prefix}-upload")
    if up is None:
        st.info("Upload a scenario file (TOML, [workload] kind = \"oltp\").")
        return None
    try:
        doc, scn = parse_upload(up.getvalue(), up.name)
    except InputError as err:
        st.error(str(err))
        return None
    return doc, scn, up.name


def pasted_server_inputs(prefix: str, doc: dict, scn, source: str):
    """Text boxes for a running server's variables and a my.cnf (sim.server_vars, sim.mycnf) over
    the chosen scenario. Returns (doc, scenario, form prefix) with them applied, or None after
    showing an error. The form prefix changes with the pasted text, so the settings fields start
    again from the new values (a field keeps what it showed while its key is the same)."""
    with st.expander("Server settings from a running server or a my.cnf (optional)"):
        vars_text = st.text_area(
            "server variables", "", key=f"{prefix}-vars", height=120,
            help="Paste `mysql -e 'SHOW GLOBAL VARIABLES'` or `mysqladmin variables` output: its `version` "
                 "picks the server version and its InnoDB variables the settings innosim simulates.")
        cnf_text = st.text_area(
            "my.cnf", "", key=f"{prefix}-mycnf", height=160,
            help="Paste an option file: the groups the chosen server version reads ([mysqld], [server], "
                 "[mysqld-X.Y]; MariaDB also [mariadb], [mariadbd] ...) set the InnoDB settings innosim "
                 "simulates, over the variables above; the fields below start from them. !include lines "
                 "cannot be followed here.")
    if not (cnf_text.strip() or vars_text.strip()):
        return doc, scn, prefix
    try:
        doc, scn = with_server_inputs(doc, source, scn.name, cnf_text, vars_text)
    except InputError as err:
        st.error(str(err))
        return None
    for note in scn.notes:
        st.info(note)
    return doc, scn, f"{prefix}-{zlib.crc32((cnf_text + chr(0) + vars_text).encode()):08x}"


def settings_form(scn, prefix: str, columns: int = 3, preset: dict[str, str] | None = None) -> dict[str, str]:
    """Every setting as a text field, grouped by section; returns the edited texts. `preset`
    pre-fills some fields with other values than the scenario's (they count as edits)."""
    texts = dict(form_texts(scn), **(preset or {}))
    edited = {}
    for section in FORM_SECTIONS:
        changed = any(k.startswith(section + ".") for k in preset or {})
        with st.expander(f"[{section}] settings", expanded=changed):
            cols = st.columns(columns)
            for n, k in enumerate(editable_keys(section, scn)):
                full = f"{section}.{k}"
                spec = SCHEMA[section][k]
                edited[full] = cols[n % columns].text_input(
                    k, texts[full], key=f"{prefix}-{scn.name}-{full}",
                    help=(spec.doc + ". " if spec.doc else "") + "Allowed: " + spec.allowed())
    return edited


def run_with_progress(scn, label: str = "") -> dict:
    """The cached run of `scn`, with a progress bar while it simulates. What the server said about
    the scenario's settings as written (scn.notes: mapped or ignored settings) comes first among
    the warnings: the resolved text the run is cached on no longer holds those settings."""
    out = run_resolved(resolved_toml(scn), scn.name, label)
    notes = [n for n in scn.notes if n not in out["warnings"]]
    return dict(out, warnings=notes + out["warnings"]) if notes else out


def child_error(stderr_lines: list[str], context: str, hide: str = "") -> InputError:
    """The error an `innosim` child process reported (its `innosim: ...` line), as an InputError;
    `hide` (a temporary directory) is cut from the message."""
    lines = [ln for ln in stderr_lines if ln.strip()]
    message = next((ln for ln in reversed(lines) if ln.startswith("innosim:")), "\n".join(lines[-5:]))
    message = message.removeprefix("innosim: ").strip()
    return InputError(context, "", message.replace(hide + "/", "") if hide else message)
