"""One engine run for the app, cached by Streamlit on the resolved scenario text."""

from __future__ import annotations

import tomllib

import streamlit as st

from sim.config import scenario_from_dict


@st.cache_data(show_spinner=False, max_entries=24)
def run_resolved(resolved: str, name: str, _label: str = "") -> dict:
    """Simulate the scenario written as `resolved` (sim.run_output.resolved_toml): the series
    frames, the summary and the server's warnings. The progress bar is made here, so a cache hit
    replays it (created and emptied) in whatever container calls. `_label` is not part of the key."""
    from sim.engine import Server
    from sim.metrics import series_frames, summary

    text = f"simulating {_label or name}"
    bar = st.progress(0.0, text=text)

    def progress(f: float) -> None:
        bar.progress(min(1.0, f), text=f"{text}: {100 * f:.0f}%")

    scn = scenario_from_dict(tomllib.loads(resolved), "app", name=name)
    srv = Server(scn)
    result = srv.run(progress)
    frames = series_frames(result)
    s = summary(result, frames)
    frames.pop("10ms", None)             # not drawn here; keeps the cached copy small
    bar.empty()
    return {"frames": frames, "summary": s, "warnings": list(srv.warnings),
            "threshold_pct": scn.run.stall_threshold_pct}
