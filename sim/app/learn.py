"""Learn page: guided walk-throughs of the seed experiments, each a few steps of text beside a
live simulation the reader can change. Numbers quoted from the seeds name their source; every
number about the simulation is computed from the run shown."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from models.checksum import page_checksum_s
from models.errors import InputError
from sim.app.iobench_page import run_grid
from sim.app.settings import apply, load_shipped
from sim.app.widgets import figure_block, run_with_progress, stalls_1s_text
from sim.metrics import stalls
from sim.settling import settling_sentence, steady_sentence
from sim.plots import (checkpoint_figure, flushing_figure, latency_figure, plt, queue_figure, resolutions_figure,
                       sync_waits_figure, tps_figure)

SEED_IO = "seed 000, first post (IObench on a Fusion-io card, Oracle Linux 6.2, 2012)"
SEED_BP = "seed 000, second post (DBT2, MySQL 5.6, 12 cores)"
SEED_TPCC = "seed 001 (tpcc-mysql, MySQL 5.6.6, 2500 warehouses)"
SEED_CK = "seed 002 (Domas Mituzas, \"Checksums again, some I/O too\", 2009)"


@dataclass(frozen=True)
class Step:
    title: str
    text: str
    preset: dict = field(default_factory=dict)


def _preset_box(col, label: str, options: list, preset, key: str):
    """A selectbox that starts on the step's preset."""
    return col.selectbox(label, options, index=options.index(preset), key=key)


# -- walk 1: per-inode write locks ---------------------------------------------------------------

IO_STEPS = (
    Step("The device alone", f"""
Random 4K writes straight to the raw device. The card has internal parallelism, so IOPS grow with
the number of concurrent writers until its units are busy. The seed measured about **100K writes/s
at 4K and 60K at 16K** on the raw card ({SEED_IO}).

Change the block size or the process counts and watch where the curve flattens.""",
         {"fs": ["raw"], "kernel": "2012", "files": 1}),
    Step("EXT4, one file, O_DIRECT", f"""
The same writes through ext4 to **one** data file. On 2012 kernels an ext4 O_DIRECT write holds the
inode's `i_mutex` for the whole I/O, so only one write per file is in flight, whatever the
process count. The seed measured **15K writes/s max at 4K and 10K at 16K** on ext4, against
100K / 60K on the raw device ({SEED_IO}).

The *lock wait* column shows where the time goes: writers queue on the inode, not on the device.
IObench writes with `pwrite()`, which waits for the device under the lock. InnoDB's page writes
are `io_submit` requests by default (`innodb_use_native_aio`), and the kernel drops the lock once
such a write is queued; with `innodb_use_native_aio = false` they are synchronous again, one per
file in flight (try both on the What-if page with `filesystem = "ext4"`).""",
         {"fs": ["raw", "ext4"], "kernel": "2012", "files": 1}),
    Step("XFS", f"""
XFS takes its I/O lock **shared** for aligned O_DIRECT writes inside the file, so several writes
reach the device at once. On 2012 kernels a short block-mapping step was still exclusive, and its
cost grew with the number of contenders: the seed saw ~40K writes/s at 4 processes fall to ~12K at
16, with the CPU spinning in `__ticket_spin_lock` ({SEED_IO}).""",
         {"fs": ["raw", "ext4", "xfs"], "kernel": "2012", "files": 1}),
    Step("Spread over files", f"""
Each data file has its own inode lock. With 8 files, 8 writes can be in flight even on 2012 ext4;
the seed reports that with 8 data files both filesystems came **very close to the raw device** on
writes ({SEED_IO}). For InnoDB's synchronous writes (all page writes when
`innodb_use_native_aio` is off) that is the case of several hot tables (file-per-table), or a
partitioned one.

Try 2 and 4 files too: the seed measured those steps as well.""",
         {"fs": ["raw", "ext4", "xfs"], "kernel": "2012", "files": 8}),
    Step("Modern kernels", """
Since about Linux 5.6, ext4 takes `i_rwsem` shared for aligned O_DIRECT overwrites of allocated
blocks, and XFS maps blocks under a shared lock: one file no longer caps the writers
(`../shared/research/fs-device.md`, section 1, cites the commits). Writes that extend a file or fill
holes are still exclusive.""",
         {"fs": ["raw", "ext4", "xfs"], "kernel": "modern", "files": 1}),
)


def _iops_figure(rows: list[tuple]):
    fig, ax = plt.subplots(figsize=(8, 3.6))
    df = pd.DataFrame({"series": [f"{r[0]} ({r[1]})" for r in rows], "processes": [r[4] for r in rows],
                       "iops": [r[5] for r in rows]})
    for name, g in df.groupby("series", sort=False):
        ax.plot(g["processes"], g["iops"], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrent processes")
    ax.set_ylabel("IOPS")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig, df


def _io_walk(step: int, k: str) -> None:
    p = IO_STEPS[step].preset
    c1, c2, c3 = st.columns(3)
    fs = c1.multiselect("filesystem", ["raw", "ext4", "xfs"], default=p["fs"], key=f"{k}-fs")
    kernel = _preset_box(c1, "kernel era", ["2012", "modern"], p["kernel"], f"{k}-kernel")
    files = _preset_box(c2, "data files", [1, 2, 4, 8], p["files"], f"{k}-files")
    block = c2.selectbox("block size", ["4K", "16K"], key=f"{k}-bs")
    mode = c3.selectbox("I/O mode", ["direct", "fsync"], key=f"{k}-mode", help="O_DIRECT, or write() then fsync()")
    procs = c3.multiselect("processes", [1, 2, 4, 8, 16, 32, 64, 128, 256], default=[1, 4, 16, 64, 256],
                           key=f"{k}-procs")
    doc = {"hardware": {"device": "fusionio-2012", "filesystem": fs or ["raw"], "kernel": kernel,
                        "data_files": files},
           "workload": {"kind": "iobench", "pattern": "wrnd", "block_size": block,
                        "processes": sorted(procs) or [16], "io_mode": mode},
           "run": {"duration": "100ms", "warmup": "30ms", "seed": 1}}
    try:
        with st.spinner("simulating..."):
            rows = run_grid(doc)
    except InputError as err:
        st.error(str(err))
        return
    fig, df = _iops_figure(rows)
    figure_block("Random writes: IOPS against concurrent processes", fig, df, f"learn-io-{step}")
    peak = df.groupby("series")["iops"].max()
    table = pd.DataFrame({"peak IOPS": peak.round(0),
                          "lock wait % at most processes": [
                              next(r[8] for r in reversed(rows) if f"{r[0]} ({r[1]})" == s) for s in peak.index]})
    st.dataframe(table)


# -- walk 2: buffer pool instances and sync flushing -------------------------------------------

BP_STEPS = (
    Step("The sync-flush point", """
The default scenario runs the seed's DBT2 load with 8 buffer pool instances and a small redo log
(2 x 256M). Checkpoint age (the redo written since the last checkpoint) climbs until it reaches
**max_modified_age_sync**. There user threads stop and flush themselves
(`log_preflush_pool_modified_pages`, counted in `buffer_flush_sync_waits`): commits stop, and the
stall is shaded by its cause.""",
         {"innodb_buffer_pool_instances": 8, "innodb_log_file_size": "256M", "innodb_io_capacity_max": 2000,
          "duration": "60s"}),
    Step("One instance", f"""
In 5.6 sync flushing walks the instances one after another, so with 8 instances the oldest page may
wait in an instance flushed last. The seed saw **up to 3000 flush sync waits/s with 8 instances and
none with 1**, and periodic QPS drops only with 8 ({SEED_BP}).

Compare the stall count and the waits with the first step. innosim models the instance-by-instance
walk, but at the seed's own scale (3 GB of redo, `innosim validate flushing`) it does not reproduce
the seed: when checkpoint age first reaches the sync point its 8-instance server dips to about three
quarters of its median for some 20 s (sync waits peak at a few hundred a second, not 3000) and its
1-instance server touches the point too; after that start-up both stay under the sync point without
a wait, the 8-instance one closer to it. Read this step as the model's answer, not the seed's. One
5.6 detail can tip one instance into sync flushing: when a page-cleaner pass fills
its whole second, the next pass starts while that instance's last doublewrite batch is still
being written,
`buf_flush_start` refuses the instance, and the pass flushes nothing.""",
         {"innodb_buffer_pool_instances": 1, "innodb_log_file_size": "256M", "innodb_io_capacity_max": 2000,
          "duration": "60s"}),
    Step("Start-up and steady state", """
A run starts with no dirty page, so in its first seconds every change dirties a clean page. When
checkpoint age first reaches the sync point, the oldest end of the flush list holds more pages per
byte of redo than it ever will again, and that first stall can be deeper or longer than the ones
that recur after it. A server that has run for an hour shows only the recurring ones.

The line under the figures says from when the modified age, pages flushed and commits per second
stay within 5 % (or their own noise, if wider) of the level they hold in the second half of the
run: the end of the start-up, as a settling time (or that the run is too short to say). Run 120 s
and compare the first stall with the later ones; on the What-if page, `run.warmup` leaves the
start out of every figure.""",
         {"innodb_buffer_pool_instances": 8, "innodb_log_file_size": "256M", "innodb_io_capacity_max": 2000,
          "duration": "120s"}),
    Step("More redo", f"""
A larger log moves the sync point further away: adaptive flushing has room to keep checkpoint age
below it. With 8 GB of redo the seed saw **no QPS drops with either instance count**, higher
throughput, and flushing down from ~1500 to ~1000 pages/s ({SEED_BP}).

Here 2 x 1G keeps this minute clear of the sync point. Run it for 120 s to see whether it stays so.

The price is paid after a crash. The restart scans the redo from the last checkpoint and reads
every page changed since then, so a larger log lets more of both pile up. Compare the
**crash recovery** figure with the first step's. It is the restart the worst second of the run
would have needed, at recovery rates measured on MariaDB 10.11 (docs/ENGINE.md, "Crash recovery").""",
         {"innodb_buffer_pool_instances": 8, "innodb_log_file_size": "1G", "innodb_io_capacity_max": 2000,
          "duration": "60s"}),
    Step("Too little I/O capacity", f"""
`innodb_io_capacity_max` caps the page cleaner. Below the flush rate the load needs, checkpoint age
climbs again however large the log: the seed set it to 1000, under the ~1500 pages/s its load
needed, and **both configurations dropped** ({SEED_BP}).

This step runs 120 s with 2 x 1G of redo and a cap of 400 pages/s; set the cap back to 2000 to see the
difference the cap makes over the same two minutes.""",
         {"innodb_buffer_pool_instances": 8, "innodb_log_file_size": "1G", "innodb_io_capacity_max": 400,
          "duration": "120s"}),
)


def _oltp_run(settings: dict, duration: str, name: str = "default", more: tuple = ()):
    """A shipped scenario with [server] settings, a duration and further overrides, run with progress."""
    doc, _ = load_shipped(name)
    overrides = [f"server.{k}={v}" for k, v in settings.items()] + [f"run.duration={duration}", *more]
    return run_with_progress(apply(doc, f"scenarios/{name}.toml", name, overrides))


def _metric_row(items: list[tuple[str, str]]) -> None:
    """One st.metric per (label, value), side by side."""
    for col, (label, value) in zip(st.columns(len(items)), items):
        col.metric(label, value)


def _oltp_shown(settings: dict, duration: str, name: str = "default", more: tuple = ()):
    """_oltp_run, or None with the server's refusal shown instead."""
    try:
        return _oltp_run(settings, duration, name, more)
    except InputError as err:
        st.error(str(err))
        return None


def _bp_walk(step: int, k: str) -> None:
    p = BP_STEPS[step].preset
    c1, c2, c3, c4 = st.columns(4)
    settings = {
        "innodb_buffer_pool_instances": _preset_box(c1, "innodb_buffer_pool_instances", [1, 2, 4, 8, 16],
                                                    p["innodb_buffer_pool_instances"], f"{k}-inst"),
        "innodb_log_file_size": _preset_box(c2, "innodb_log_file_size (2 files)", ["128M", "256M", "512M", "1G", "2G"],
                                            p["innodb_log_file_size"], f"{k}-log"),
        "innodb_io_capacity_max": _preset_box(c3, "innodb_io_capacity_max", [200, 400, 1000, 2000, 4000],
                                              p["innodb_io_capacity_max"], f"{k}-cap"),
    }
    duration = _preset_box(c4, "run.duration", ["60s", "120s"], p["duration"], f"{k}-dur")
    out = _oltp_shown(settings, duration)
    if out is None:
        return
    s, sec = out["summary"], out["frames"]["1s"]
    _metric_row([("commits/s (mean)", f"{s['tps_mean']:,.0f}"),
                 ("stalls at 1 s", stalls_1s_text(s)),
                 ("buffer_flush_sync_waits", f"{s['buffer_flush_sync_waits']:,}"),
                 ("max checkpoint age", f"{s['checkpoint_age_max_pct']:.1f}%"),
                 ("crash recovery, worst second",
                  f"{s['crash_recovery']['total_s']:,.0f} s" if s.get("crash_recovery") else "-")])
    st_df = stalls(sec, out["threshold_pct"], s.get("version", "mysql-5.6"))
    figure_block("Commits per second (1 s), stalls shaded by cause", tps_figure(sec, "1 s", st_df),
                 sec[["time_s", "tps"]], f"learn-bp-{step}-tps")
    sentence = settling_sentence(s.get("settling"))
    if sentence:
        st.caption(sentence)
    steady = steady_sentence(s.get("steady"), s.get("settling"))
    if steady:
        st.caption(steady)
    figure_block("Checkpoint age against the limits", checkpoint_figure(sec, s.get("limit_names")),
                 sec[["time_s", "checkpoint_age_pct", "log_max_modified_age_async_pct",
                      "log_max_modified_age_sync_pct", "log_max_checkpoint_age_pct"]], f"learn-bp-{step}-age")
    figure_block("Pages flushed per second by kind", flushing_figure(sec),
                 sec[["time_s", "buffer_flush_adaptive_total_pages", "buffer_flush_sync_total_pages",
                      "buffer_LRU_batch_total_pages"]], f"learn-bp-{step}-flush")
    figure_block("buffer_flush_sync_waits per second", sync_waits_figure(sec),
                 sec[["time_s", "buffer_flush_sync_waits"]], f"learn-bp-{step}-waits")


# -- walk 3: micro-stalls hidden by averaging ----------------------------------------------------

AVG_STEPS = (
    Step("One number a minute", f"""
Averaged over 60 s, throughput is one steady number. In the seed the 60 s line was "almost stable",
enough to claim that adaptive flushing works as expected ({SEED_TPCC}).""", {"show": ["60s"]}),
    Step("10 s averages", f"""
At 10 s the seed's line still looked calm ({SEED_TPCC}). A stall shorter than the interval is
averaged with the good seconds around it: it lowers one point a little instead of reaching zero.
The table below gives, per resolution, the lowest interval and how many intervals fall under the
stall threshold in this run; a stall longer than 10 s (as the small redo log here makes) still
shows at 10 s, the short ones do not. Try 2 x 1G of redo.""",
         {"show": ["60s", "10s"]}),
    Step("1 s averages", f"""
At 1 s the same run falls to the floor. The seed's 1 s throughput scattered over the whole range,
**including 0 for 1-4 seconds** at a time: micro-stalls that 10 s averages cannot show
({SEED_TPCC}). The table counts the intervals below half the median at each resolution.""",
         {"show": ["10s", "1s"]}),
    Step("100 ms", f"""
A commenter on the seed asked for finer still: for busy systems a 100 ms stall already backs up
thousands of queries ({SEED_TPCC}, comments). At 100 ms the stalls inside a "good" second show.""",
         {"show": ["1s", "100ms"]}),
    Step("When the clients do not wait", f"""
So far each of the 40 users waited for its commit before sending the next transaction (a closed
loop). A stall then only slows the clients down. An application's requests keep coming, though:
the commenter's backlog ({SEED_TPCC}, comments). Here the transactions arrive at the offered
rate whatever the server does, as `sysbench --rate` sends them (`workload.rate`). Each waits for
a free user, and its latency counts from its arrival. Below the closed loop's average the server
keeps up, yet every pause now queues the arrivals behind it. Compare the p99 latency at 2,000
and 3,500 transactions/s, and watch the queue at 4,000.""", {"rate": 3500}),
)


def averaging_table(frames: dict, threshold_pct: float) -> pd.DataFrame:
    """Per resolution: intervals, median and minimum commits/s, and intervals under the stall threshold."""
    rows = []
    for label in ("60s", "10s", "1s", "100ms"):
        if label not in frames:
            continue
        df = frames[label]
        df = df[~df["warmup"]] if "warmup" in df and (~df["warmup"]).any() else df
        med = float(df["tps"].median())
        rows.append({"resolution": label, "intervals": len(df), "median commits/s": round(med),
                     "min commits/s": round(float(df["tps"].min())),
                     f"intervals below {threshold_pct:g}% of median": int((df["tps"] < med * threshold_pct / 100).sum())})
    return pd.DataFrame(rows)


def _open_loop(p: dict, k: str) -> None:
    """The averaging walk's last step: the same load offered at a fixed rate (workload.rate)."""
    c1, c2 = st.columns(2)
    rates = [2000, 3000, 3500, 4000]
    rate = _preset_box(c1, "workload.rate (transactions/s offered)", rates, p["rate"], f"{k}-rate")
    log = c2.selectbox("innodb_log_file_size (2 files)", ["256M", "512M", "1G"], key=f"{k}-log")
    out = _oltp_shown({"innodb_log_file_size": log}, "60s", more=(f"workload.rate={rate}",))
    if out is None:
        return
    s, sec = out["summary"], out["frames"]["1s"]
    _metric_row([("commits/s (mean)", f"{s['tps_mean']:,.0f}"),
                 ("latency p99", f"{s['latency_ms']['p99']:,.1f} ms"),
                 ("queue max", f"{s['trx_queue_max']:,}"),
                 ("stalls at 1 s", stalls_1s_text(s))])
    figure_block("Latency per second, from each transaction's arrival", latency_figure(sec),
                 sec[["time_s", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms"]], f"learn-open-lat-{k}")
    figure_block("Transactions waiting for a user", queue_figure(sec), sec[["time_s", "trx_queue"]],
                 f"learn-open-queue-{k}")


def _avg_walk(step: int, k: str) -> None:
    p = AVG_STEPS[step].preset
    if "rate" in p:
        _open_loop(p, k)
        return
    c1, c2 = st.columns(2)
    show = c1.multiselect("resolutions drawn", ["60s", "10s", "1s", "100ms"], default=p["show"], key=f"{k}-show")
    log = c2.selectbox("innodb_log_file_size (2 files)", ["256M", "512M", "1G"], key=f"{k}-log")
    out = _oltp_shown({"innodb_log_file_size": log}, "60s")
    if out is None:
        return
    frames = out["frames"]
    figure_block("The same run at several averaging intervals", resolutions_figure(frames, show),
                 frames["1s"][["time_s", "tps"]], f"learn-avg-{step}")
    st.dataframe(averaging_table(frames, out["threshold_pct"]), hide_index=True)


# -- walk 4: one load on each server version ----------------------------------------------------

FLUSHING = "shared/research/innodb-flushing.md"
VERSION_STEPS = (
    Step("MySQL 5.6: the user thread flushes", f"""
The default scenario (the seed's DBT2 load, 8 instances, 2 x 256M of redo) on 5.6. Past
**max_modified_age_sync** a user thread at `log_free_check` flushes every instance in turn up to
oldest + twice the overshoot, ignoring `innodb_io_capacity`, and the others wait for it
({FLUSHING} 3.1). The stalls are shaded "sync flush".""", {"version": "mysql-5.6"}),
    Step("MySQL 5.7: the page cleaner flushes, users poll", f"""
5.7 computes the same thresholds, but a user thread past the sync point asks the page cleaner
for the flush (`innodb_flush_sync`) and polls every 10 ms until each instance's oldest page has
moved past the target; every poll counts in `buffer_flush_sync_waits`. The page cleaner is a
coordinator with workers, one slot per instance, and under redo pressure it splits its budget in
proportion to where the old pages are: the fix WL6642 made for the 8-instance problem
({FLUSHING} 3.2, 4.2).""", {"version": "mysql-5.7"}),
    Step("MySQL 8.0: users wait only for redo space", f"""
In 8.0 user threads never flush. Past the sync age the page cleaner switches to a sync-flush mode,
round after round without sleeping; users stop only at the **free check capacity**, a few
percent higher, until the log_checkpointer has written a checkpoint far enough. Its limits also
sit higher on the log: a fixed concurrency margin instead of two 10 % cuts ({FLUSHING} 2.2, 3.3,
4.3). Stalls, if any, are shaded "redo space wait". The binary log, on by default from 8.0, is
left off in this walk so that only the flushing differs.""", {"version": "mysql-8.0"}),
    Step("MySQL 8.0.30: innodb_redo_log_capacity", f"""
8.0.30 replaced the two log files with `innodb_redo_log_capacity` in 32 files. The scenario's
`innodb_log_file_size` x `innodb_log_files_in_group` becomes the capacity (512M here), with the
server's deprecation message shown above. Two of the 32 files are never counted and a soft
margin is kept, so the same 512M holds the limits at other percentages ({FLUSHING} 2.3).""",
         {"version": "mysql-8.0.30"}),
    Step("MariaDB 10.11: flush-ahead and furious flushing", f"""
MariaDB has one buffer pool, one page cleaner and one redo file: `innodb_buffer_pool_instances`
and `innodb_log_files_in_group` are ignored with the server's warning, so this step gives it a
512M file. Past **max_modified_age_async** every mini-transaction commit asks the page cleaner to
flush ahead. The request wakes an idle cleaner only: a busy one takes the new target at its next
pass, about a second later, and flushes at most `innodb_io_capacity_max` pages toward it. Past
**max_checkpoint_age** the flushing becomes "furious" and users wait in 1 MiB steps. There is no separate sync point ({FLUSHING} 2.4, 3.4, 4.4).""",
         {"version": "mariadb-10.11"}),
)
VERSION_CHOICES = ["mysql-5.6", "mysql-5.7", "mysql-8.0", "mysql-8.0.30", "mysql-8.4", "mariadb-10.11"]


def _version_walk(step: int, k: str) -> None:
    p = VERSION_STEPS[step].preset
    c1, c2, c3 = st.columns(3)
    version = _preset_box(c1, "server.version", VERSION_CHOICES, p["version"], f"{k}-ver")
    settings = {"version": version,
                "innodb_io_capacity_max": _preset_box(c2, "innodb_io_capacity_max", [400, 1000, 2000, 4000], 2000,
                                                      f"{k}-cap"),
                "log_bin": False}        # 8.0's default binary log would add its fsyncs to the comparison
    if version.startswith("mariadb"):
        settings["innodb_log_file_size"] = "512M"      # its one file holds what the two held
    duration = _preset_box(c3, "run.duration", ["60s", "120s"], "60s", f"{k}-dur")
    out = _oltp_shown(settings, duration)
    if out is None:
        return
    for w in out["warnings"]:
        st.warning(w)
    s, sec = out["summary"], out["frames"]["1s"]
    waiting = "sync flush" if s["margin_wait"] == "sync flush" else "redo space wait"
    c = st.columns(4)
    c[0].metric("commits/s (mean)", f"{s['tps_mean']:,.0f}")
    c[1].metric("stalls at 1 s", stalls_1s_text(s))
    c[2].metric(f"time under {waiting} (s)", f"{s['time_under_sync_flush_s']:.1f}")
    c[3].metric("max checkpoint age", f"{s['checkpoint_age_max_pct']:.1f}%")
    st_df = stalls(sec, out["threshold_pct"], s["version"])
    figure_block("Commits per second (1 s), stalls shaded by cause", tps_figure(sec, "1 s", st_df),
                 sec[["time_s", "tps"]], f"learn-ver-{step}-tps")
    figure_block("Checkpoint age against this version's limits", checkpoint_figure(sec, s["limit_names"]),
                 sec[["time_s", "checkpoint_age_pct", "modified_age_pct", "log_max_modified_age_async_pct",
                      "log_max_modified_age_sync_pct", "log_max_checkpoint_age_async_pct",
                      "log_max_checkpoint_age_pct"]], f"learn-ver-{step}-age")
    figure_block("Pages flushed per second by kind", flushing_figure(sec),
                 sec[["time_s", "buffer_flush_adaptive_total_pages", "buffer_flush_background_total_pages",
                      "buffer_flush_sync_total_pages", "buffer_LRU_batch_total_pages"]], f"learn-ver-{step}-flush")


# -- walk 5: page checksums in the foreground ----------------------------------------------------

CK_STEPS = (
    Step("User threads flush", f"""
A data load on the seed's Fusion-io card with a small redo log (2 x 64M): checkpoint age stays at
the sync point, so the loader threads flush pages themselves at log_free_check. Each page is
checksummed first, in that thread (`buf_flush_init_for_writing`); 5.6's default algorithm,
`innodb`, costs about 31 us per 16 KiB page (measured, `benchmarks/checksum_cost.py`). The seed:
when a query forces a checkpoint, "it all happens in 'foreground' thread, checksum computation
included" ({SEED_CK}).""", {"algorithm": "innodb", "device": "fusionio-2012"}),
    Step("Checksums off", f"""
The seed's author switched checksums off in the running server (`srv_use_checksums=0`, what
`innodb_checksums = OFF` or `innodb_checksum_algorithm = none` set) and "everything becomes much
faster" ({SEED_CK}). Compare the commits and the pages the user threads flush per second with the
first step: the thread time the checksums took goes into flushing.""", {"algorithm": "none", "device": "fusionio-2012"}),
    Step("CRC32", """
MySQL 5.6.3 added `crc32` (CRC-32C in hardware, about 2 us a page here); it became the default in
5.7, and MariaDB 10.5+ writes `full_crc32`. Most of the gain of switching checksums off comes
back without giving up corruption checks.""", {"algorithm": "crc32", "device": "fusionio-2012"}),
    Step("Slow disks", f"""
The same load on the assumed 2012 disks of the seed's 12-core box: each page write now takes far
longer than its checksum, so the algorithm matters little. Switch between `innodb` and `none` here
and on the Fusion-io card: the seed's "people keep accessing SSDs, and then relative cost of
checksum is insane" ({SEED_CK}).""", {"algorithm": "innodb", "device": "seed-12core-disks-2012"}),
    Step("Tiny pool, OS caching", f"""
The seed's other test: "run InnoDB with tiny buffer pool, OS caching, and try some benchmarking
with checksums enabled and disabled - there will be a huge difference" ({SEED_CK}). An 8 MB pool
over a 2 GB data set that the OS page cache holds (`innodb_flush_method = fsync`: buffered data
files), a read-only sysbench transaction, 16 threads on 8 cores. Almost every page the pool misses
comes from the page cache: a copy (11 us) and, with `innodb`, a 31 us verification, both on a core.
The load is CPU-bound, so the checksum is paid in commits. Switch to `O_DIRECT`: the same reads go
to the disks, and the checksum no longer matters. The seed's "Turn checksums off, and OS caching
may be even tolerable".""", {"algorithm": "innodb", "flush_method": "fsync", "scenario": "seed-checksums-oscache-innodb"}),
)


def _ck_walk(step: int, k: str) -> None:
    p = CK_STEPS[step].preset
    if "scenario" in p:
        _ck_os_cache(p, step, k)
        return
    c1, c2 = st.columns(2)
    algorithm = _preset_box(c1, "innodb_checksum_algorithm", ["innodb", "crc32", "none"], p["algorithm"], f"{k}-alg")
    device = _preset_box(c2, "hardware.device", ["fusionio-2012", "seed-12core-disks-2012"], p["device"], f"{k}-dev")
    out = _oltp_shown({"innodb_checksum_algorithm": algorithm}, "20s", "seed-checksums-load-innodb",
                      (f"hardware.device={device}",))
    if out is None:
        return
    s, sec = out["summary"], out["frames"]["1s"]
    sync_pages = s["pages_flushed_per_s"]["sync"]
    _ck_commits(out, step, [("pages sync-flushed by users /s", f"{sync_pages:,.0f}"),
                            ("checksum time in user threads",
                             f"{sync_pages * page_checksum_s(algorithm, 16384):.2f} s/s"),
                            ("time in sync flush (thread-s)", f"{s['sync_flush_thread_s']:,.0f}")])
    figure_block("Pages flushed per second by kind", flushing_figure(sec),
                 sec[["time_s", "buffer_flush_adaptive_total_pages", "buffer_flush_sync_total_pages",
                      "buffer_LRU_batch_total_pages"]], f"learn-ck-{step}-flush")


def _ck_commits(out: dict, step: int, metrics: list[tuple[str, str]]) -> None:
    """Mean commits/s beside the step's own metrics, then commits per second with stalls shaded."""
    s, sec = out["summary"], out["frames"]["1s"]
    _metric_row([("commits/s (mean)", f"{s['tps_mean']:,.0f}")] + metrics)
    st_df = stalls(sec, out["threshold_pct"], s.get("version", "mysql-5.6"))
    figure_block("Commits per second (1 s)", tps_figure(sec, "1 s", st_df), sec[["time_s", "tps"]],
                 f"learn-ck-{step}-tps")


def _ck_os_cache(p: dict, step: int, k: str) -> None:
    """The tiny-pool step: reads from the OS page cache, their copy and checksum on the cores."""
    c1, c2 = st.columns(2)
    algorithm = _preset_box(c1, "innodb_checksum_algorithm", ["innodb", "crc32", "none"], p["algorithm"], f"{k}-alg")
    method = _preset_box(c2, "innodb_flush_method", ["fsync", "O_DIRECT"], p["flush_method"], f"{k}-fm")
    out = _oltp_shown({"innodb_checksum_algorithm": algorithm, "innodb_flush_method": method}, "10s", p["scenario"])
    if out is None:
        return
    sec = out["frames"]["1s"]
    reads = float(sec["Innodb_buffer_pool_reads"].mean())
    hits = float(sec["os_page_cache_read_hits"].mean())
    _ck_commits(out, step, [("pages read /s", f"{reads:,.0f}"),
                            ("served by the page cache", f"{100 * hits / reads if reads else 0:.0f}%"),
                            ("checksum time in user threads",
                             f"{reads * page_checksum_s(algorithm, 16384):.2f} s/s")])
    figure_block("Latency percentiles (1 s)", latency_figure(sec),
                 sec[["time_s", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms"]],
                 f"learn-ck-{step}-latency")


# -- walk 6: the host's I/O scheduler (CFQ) on a SATA SSD -----------------------------------------

SATA_DATA = ("fio-plot's Samsung PM883 runs (fio 3.1, libaio, 60 s; shared/data/fio/fioplot-samsung-pm883), "
             "which ran under CFQ (docs/CALIBRATION.md: \"The host's block layer\")")

CFQ_STEPS = (
    Step("One process: CFQ stays out of the way", f"""
A SATA drive holds 32 commands (NCQ); the Linux 4.x block layer queues the rest, and its elevator
chooses what goes next. With one process submitting, CFQ has one queue and lets it keep every tag:
through CFQ or noop, one process 32 deep gets the drive's full rate. Measured on the PM883
({SATA_DATA}): 45.4K reads/s at 32 deep, p99.9 0.9 ms.""", {"procs": 1, "depth": 32}),
    Step("A few deep processes: slices", f"""
Four processes each 16 deep: CFQ gives one queue a slice (100 ms scaled so that the busy queues share
300 ms: 75 ms for four) with at most 8 requests on the drive (`cfq_quantum`), while the other three
wait. Their requests wait 3 x 75 = 225 ms, and the drive runs below its rate. Measured: p99.9 225.4
ms, 42.4K reads/s against 45.4K. Try 2 processes (one 100 ms slice) or 8 (7 x 37.5 ms).""",
         {"procs": 4, "depth": 16}),
    Step("Many shallow processes: preemption", f"""
Sixty-four processes each one deep: no queue keeps anything queued, so each arrival preempts the
active queue and goes to the front, and queues already waiting are passed over until arrivals pause.
Most requests wait for nothing; a few wait milliseconds. Measured: p50 0.77 ms, p99 11.1 ms.
Noop serves them in arrival order.""", {"procs": 64, "depth": 1}),
)


def _cfq_walk(step: int, k: str) -> None:
    from models.block_layer import BlockLayerConfig
    from models.device import builtin_profile_doc
    from sim.calibrate import simulate_job_on_host
    from sim.fio import FioJob

    p = CFQ_STEPS[step].preset
    c1, c2 = st.columns(2)
    procs = _preset_box(c1, "processes", [1, 2, 4, 8, 16, 64], p["procs"], f"{k}-procs")
    depth = _preset_box(c2, "I/Os each keeps in flight", [1, 4, 8, 16, 32, 64], p["depth"], f"{k}-depth")
    job = FioJob(source="learn", name="randread", fio_version="fio-3.1", rw="randread", block_bytes=4096,
                 iodepth=depth, numjobs=procs, direct=True, ioengine="libaio", read_share=1.0,
                 options={"iodepth": str(depth), "numjobs": str(procs)}, read=None, write=None, clones=procs)
    doc = builtin_profile_doc("samsung-pm883")
    rows = []
    with st.spinner("simulating the drive through noop and through CFQ..."):
        for elevator in ("none", "cfq"):
            r = simulate_job_on_host(doc, job, 0.0, BlockLayerConfig(elevator, 32))
            rows.append({"elevator": "noop" if elevator == "none" else "cfq", "reads/s": round(r.iops),
                         "p50 ms": round(r.lat_p50_s * 1e3, 2), "p99 ms": round(r.lat_p99_s * 1e3, 2),
                         "p99.9 ms": round(r.lat_p999_s * 1e3, 1)})
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(f"samsung-pm883 (fitted through CFQ), 4K random reads, {procs} x {depth} in flight, "
               "SATA queue depth 32, 128 requests; models/block_layer.py.")


WALKS = {
    "Per-inode write locks (IObench)": (IO_STEPS, _io_walk),
    "Buffer pool instances and sync flushing": (BP_STEPS, _bp_walk),
    "Micro-stalls hidden by averaging": (AVG_STEPS, _avg_walk),
    "One load on each server version": (VERSION_STEPS, _version_walk),
    "Checksums in the foreground": (CK_STEPS, _ck_walk),
    "The host's I/O scheduler (CFQ) on a SATA SSD": (CFQ_STEPS, _cfq_walk),
}


def render() -> None:
    st.title("Learn: the seed experiments, step by step")
    walk = st.selectbox("walk-through", list(WALKS), key="learn-walk")
    steps, body = WALKS[walk]
    titles = [f"{n + 1}. {s.title}" for n, s in enumerate(steps)]
    step = titles.index(st.radio("step", titles, horizontal=True, key=f"learn-step-{walk}"))
    text_col, sim_col = st.columns([1, 2])
    with text_col:
        st.subheader(steps[step].title)
        st.markdown(steps[step].text)
    with sim_col:
        # Keys per step: moving to a step sets its controls; the reader's changes stay with the step.
        body(step, f"learn-{list(WALKS).index(walk)}-{step}")
