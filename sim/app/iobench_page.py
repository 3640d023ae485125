"""IObench page: random I/O on one device through raw, ext4 or XFS (the seed's first post)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from models.device import builtin_profile_names
from models.errors import InputError
from models.filesystem import ERA_MOUNT_OPTIONS, FILESYSTEMS, KERNELS
from sim.config import scenario_from_dict
from sim.iobench import cases_from_scenario, run_cases
from sim.report import IOBENCH_COLUMNS, iobench_row


@st.cache_data(show_spinner=False)
def run_grid(doc: dict) -> list[tuple]:
    """The cases of an IObench scenario document, run (cached on the document): per case
    (fs, kernel, mode, block bytes, processes, IOPS, mean ms, p99 ms, lock wait %, table row)."""
    scn = scenario_from_dict(doc, "app", name="app")
    results = run_cases(cases_from_scenario(scn), jobs=1)
    return [(r.case.filesystem, r.case.kernel, r.case.io_mode, r.case.block_bytes, r.case.processes,
             r.iops, r.lat_mean_s * 1e3, r.lat_p99_s * 1e3, 100 * r.lock_wait_share, iobench_row(r))
            for r in results]


def render() -> None:
    st.title("IObench what-if: device and filesystem")
    st.caption("Random I/O against one device through raw, ext4 or XFS, as in the seed's Fusion-io "
               "experiments (Kravtchuk, 2012). Change a setting and see where the filesystem caps throughput.")
    c1, c2, c3 = st.columns(3)
    device = c1.selectbox("device profile", builtin_profile_names())
    filesystems = c1.multiselect("filesystem", FILESYSTEMS, default=["ext4", "xfs"])
    kernel = c1.selectbox("kernel era", KERNELS, help="2012: Oracle Linux 6.2 locking; modern: >= 5.6")
    pattern = c2.selectbox("workload", ["wrnd", "rrnd", "rwrnd"])
    io_mode = c2.selectbox("I/O mode", ["direct", "fsync"], help="O_DIRECT, or write() then fsync()")
    block = c2.selectbox("block size", ["4K", "16K"])
    files = c3.selectbox("data files", [1, 2, 4, 8])
    procs = c3.multiselect("processes", [1, 4, 16, 64, 128, 256], default=[1, 4, 16, 64, 256])
    mount = c3.text_input("mount options", ERA_MOUNT_OPTIONS[kernel])
    sched = c1.selectbox("host I/O scheduler", ["off", "none", "cfq"], key="io-sched",
                         help="off: the device alone (a bio-based card such as the seed's Fusion-io). none / cfq: "
                              "the Linux 4.x block layer between each process and the device, 32 tags and 128 "
                              "requests (a SATA drive); under CFQ, processes past the tags wait on its preemptions")
    doc = {
        "hardware": {"device": device, "filesystem": filesystems or ["xfs"], "kernel": kernel,
                     "mount_options": mount, "data_files": files, "io_scheduler": sched},
        "workload": {"kind": "iobench", "pattern": pattern, "block_size": block,
                     "processes": sorted(procs) or [16], "io_mode": io_mode},
        "run": {"duration": "100ms", "warmup": "30ms", "seed": 1},
    }
    if st.button("Run", type="primary"):
        try:
            with st.spinner("simulating..."):
                rows = run_grid(doc)
        except InputError as err:
            st.error(str(err))
        else:
            frame = pd.DataFrame([r[-1] for r in rows], columns=IOBENCH_COLUMNS)
            chart = pd.DataFrame({"series": [f"{r[0]}/{r[1]} {r[2]}" for r in rows],
                                  "processes": [r[4] for r in rows], "IOPS": [r[5] for r in rows]})
            st.subheader("Throughput by concurrency")
            st.line_chart(chart.pivot_table(index="processes", columns="series", values="IOPS"))
            st.subheader("Results")
            st.dataframe(frame, hide_index=True)
            st.download_button("Download CSV", frame.to_csv(index=False), "iobench.csv", "text/csv")
