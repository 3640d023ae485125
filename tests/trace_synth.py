"""A measured-looking server trace made by the simulator: the samples CSV that
validation/live/capture.py writes (cumulative counters, gauges), from one engine run."""

from __future__ import annotations

import numpy as np

from sim.config import load_scenario
from sim.engine import run
from sim.metrics import frame


def samples_csv(scenario: str, overrides: list[str]) -> tuple[str, object]:
    """(CSV text, the 1 s frame) of the scenario run with `overrides`."""
    f = frame(run(load_scenario(scenario, overrides=overrides)), 1.0)
    cum = {"Com_commit": f["commits"], "Innodb_os_log_written": f["Innodb_os_log_written"],
           "Innodb_buffer_pool_pages_flushed": f["pages_flushed"],
           "Innodb_buffer_pool_reads": f["Innodb_buffer_pool_reads"]}
    lines = ["time_s," + ",".join(cum) + ",Innodb_checkpoint_age,Innodb_buffer_pool_pages_dirty"]
    totals = {k: 0.0 for k in cum}
    lines.append("0," + ",".join("0" for _ in cum) + ",0,0")
    for r in range(len(f)):
        for k in cum:
            totals[k] += float(np.asarray(cum[k])[r])
        lines.append(f"{f['time_s'].iloc[r]:g}," + ",".join(f"{totals[k]:.0f}" for k in cum)
                     + f",{f['log_lsn_checkpoint_age'].iloc[r]:.0f},{f['Innodb_buffer_pool_pages_dirty'].iloc[r]:.0f}")
    return "\n".join(lines) + "\n", f
