"""Redo writes per transaction: live captures at several sysbench thread counts beside the engine.

For each capture directory (validation/live/capture.py OUT --threads N; its samples.csv[.gz] and
capture.json), the measured commits a second and the server's Innodb_log_writes and
Innodb_data_fsyncs per transaction after the warm-up, beside a run of the scenario with
workload.users = N (same seed, `--seconds` simulated) counted the same way (models.fil counts them
as MariaDB does; sim.trace_fit.per_transaction divides them). With innodb_flush_log_at_trx_commit = 1 every commit needs its redo durable;
fewer redo writes than transactions means several commits shared one write (log_write_up_to's
group commit). Where the capture has the server threads' scheduling counters (capture.py
writes them since 2026-11-29), their mean run-queue wait each time one ran is printed too, beside
the simulated redo writer's mean wait for a core each time it woke (models.run_queue), and how
regular the simulated commits come (the coefficient of variation of the gaps between commit
requests; 1 for a Poisson stream).

Usage: python validation/live/group_commit.py CAPTURE_DIR... [--scenario scenarios/live-logsize-96m.toml]
    [--warmup 15] [--seconds 40]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from models.errors import InputError  # noqa: E402
from sim.config import load_scenario  # noqa: E402
from sim.engine import Server  # noqa: E402
from sim.metrics import frame  # noqa: E402
from sim.trace import read_trace  # noqa: E402
from sim.trace_fit import per_transaction  # noqa: E402

COUNTERS = ("Innodb_log_writes", "Innodb_data_fsyncs")


def commits_per_s(df, warmup_s: float) -> float:
    """Commits a second over the seconds after `warmup_s`."""
    after = df[df["time_s"] > warmup_s]
    span = float(after["time_s"].max() - warmup_s)
    return float(after["tps"].sum()) / span if span > 0 else float("nan")


def measured(capture: Path, warmup_s: float):
    """(threads, the capture's per-second frame, its run-queue wait a run in us)."""
    try:
        threads = int(json.loads((capture / "capture.json").read_text())["settings"]["threads"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise InputError(str(capture / "capture.json"), "settings.threads", f"cannot be read ({err})",
                         "a capture.py output directory") from None
    samples = next((capture / n for n in ("samples.csv.gz", "samples.csv") if (capture / n).exists()), None)
    if samples is None:
        raise InputError(str(capture), "samples.csv", "not found", "a capture.py output directory")
    return threads, read_trace(samples).frame, runq_wait_us(samples, warmup_s)


def runq_wait_us(samples: Path, warmup_s: float) -> float:
    """The server threads' mean wait in a run queue each time one ran, after `warmup_s` (the
    kit's server_runq_wait_ns and server_runs columns, from schedstat); NaN without them."""
    raw = samples.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8", "replace")
    rows = [r for r in csv.DictReader(io.StringIO(text))
            if r.get("server_runs") and float(r.get("time_s") or 0) > warmup_s]
    if len(rows) < 2:
        return float("nan")
    runs = float(rows[-1]["server_runs"]) - float(rows[0]["server_runs"])
    wait = float(rows[-1]["server_runq_wait_ns"]) - float(rows[0]["server_runq_wait_ns"])
    return wait / runs / 1e3 if runs > 0 else float("nan")


def simulated(scenario: str, users: int, seconds: float):
    """The 1 s frame of the scenario run with `users` threads, the redo writer's mean wait for a
    core each time it woke (models.run_queue; over the whole run, in us) and the coefficient of
    variation of the gaps between commit requests."""
    scn = load_scenario(scenario, overrides=[f"workload.users={users}", f"run.duration={seconds}s"])
    srv = Server(scn)
    res = srv.run()
    return frame(res, 1.0), srv.users.writer.mean_core_wait_s() * 1e6, srv.users.commit_gaps.cv()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("captures", nargs="+")
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "live-logsize-96m.toml"))
    ap.add_argument("--warmup", type=float, default=15.0, help="seconds left out at the start (default 15)")
    ap.add_argument("--seconds", type=float, default=40.0, help="simulated seconds per run (default 40)")
    args = ap.parse_args()
    try:
        rows = []
        for c in args.captures:
            threads, mf, rq = measured(Path(c), args.warmup)
            sf, sim_rq, sim_cv = simulated(args.scenario, threads, args.seconds)
            per = per_transaction(mf, sf, args.warmup, math.inf).set_index("column")
            m = {"tps": commits_per_s(mf, args.warmup), "runq_wait_us": rq}
            s = {"tps": commits_per_s(sf, args.warmup), "runq_wait_us": sim_rq, "gap_cv": sim_cv}
            for col in COUNTERS:
                m[col], s[col] = ((per.at[col, "measured"], per.at[col, "simulated"]) if col in per.index
                                  else (math.nan, math.nan))
            rows.append((Path(c).name, threads, m, s))
    except InputError as err:
        print(f"group_commit: {err}", file=sys.stderr)
        return 2
    print("capture  threads  tps meas  tps sim  log writes/txn meas  sim  data fsyncs/txn meas  sim  "
          "run-queue wait us/run meas  sim (redo writer)  commit gap cv sim")
    for name, threads, m, s in sorted(rows, key=lambda r: r[1]):
        rq = m["runq_wait_us"]
        print(f"{name}  {threads:>7}  {m['tps']:>8,.0f}  {s['tps']:>7,.0f}  "
              f"{m['Innodb_log_writes']:>19.3f}  {s['Innodb_log_writes']:.3f}  "
              f"{m['Innodb_data_fsyncs']:>20.3f}  {s['Innodb_data_fsyncs']:.3f}  "
              f"{'-' if math.isnan(rq) else format(rq, '.0f'):>26}  {s['runq_wait_us']:>17.0f}  {s['gap_cv']:>17.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
