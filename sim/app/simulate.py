"""One engine run for the app, cached by Streamlit on the resolved scenario text."""

from __future__ import annotations

import tomllib

import streamlit as st

from sim.config import scenario_from_dict


@st.cache_data(show_spinner=False, max_entries=24)
def run_resolved(resolved: str, name: str, _progress=None) -> dict:
    """Simulate the scenario written as `resolved` (sim.run_output.resolved_toml): the series
    frames, the summary and the server's warnings."""
    from sim.engine import Server
    from sim.metrics import series_frames, summary

    scn = scenario_from_dict(tomllib.loads(resolved), "app", name=name)
    srv = Server(scn)
    result = srv.run(_progress)
    frames = series_frames(result)
    s = summary(result, frames)
    frames.pop("10ms", None)             # not drawn here; keeps the cached copy small
    return {"frames": frames, "summary": s, "warnings": list(srv.warnings),
            "threshold_pct": scn.run.stall_threshold_pct}
