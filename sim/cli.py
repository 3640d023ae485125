"""The `innosim` command: iobench, run, validate, profiles.

Bad input (arguments, scenario files, profiles) ends with one line on stderr naming the source,
the field and what is allowed, and exit code 2. Nothing is written before all input is checked.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path


from models.device import builtin_profile_names, load_profile
from models.errors import InputError

SUITES = ("iobench", "flushing", "versions")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(self.prog, "", message, f"see {self.prog} --help")


def _split(flag: str, text: str) -> list[str]:
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise InputError(flag, "", f"{text!r} is not a comma-separated list", "e.g. 1,4,16")
    return items


def _ints(flag: str, text: str) -> list[int]:
    out = []
    for t in _split(flag, text):
        if not t.isdigit():
            raise InputError(flag, "", f"{t!r} is not a whole number", "positive whole numbers, comma-separated")
        out.append(int(t))
    return out


# Command-line flags of `iobench` and the scenario keys they set.
_IOBENCH_FLAGS = {
    "--device": ("hardware", "device"),
    "--fs": ("hardware", "filesystem"),
    "--kernel": ("hardware", "kernel"),
    "--mount-options": ("hardware", "mount_options"),
    "--files": ("hardware", "data_files"),
    "--page-cache": ("hardware", "page_cache"),
    "--cpu-cores": ("hardware", "cpu_cores"),
    "--io-scheduler": ("hardware", "io_scheduler"),
    "--queue-depth": ("hardware", "queue_depth"),
    "--nr-requests": ("hardware", "nr_requests"),
    "--workload": ("workload", "pattern"),
    "--bs": ("workload", "block_size"),
    "--procs": ("workload", "processes"),
    "--mode": ("workload", "io_mode"),
    "--data-size": ("workload", "data_size"),
    "--duration": ("run", "duration"),
    "--warmup": ("run", "warmup"),
    "--seed": ("run", "seed"),
}


def _iobench_scenario(args):
    from sim.config import scenario_from_dict

    doc: dict = {"hardware": {}, "workload": {"kind": "iobench"}, "run": {}}
    raw = {
        "--device": args.device, "--fs": _split("--fs", args.fs), "--kernel": _split("--kernel", args.kernel),
        "--files": _ints("--files", args.files), "--workload": _split("--workload", args.workload),
        "--bs": _split("--bs", args.bs), "--procs": _ints("--procs", args.procs),
        "--mode": _split("--mode", args.mode), "--duration": args.duration, "--warmup": args.warmup,
        "--data-size": args.data_size, "--page-cache": args.page_cache,
        "--cpu-cores": int(args.cpu_cores) if args.cpu_cores.isdigit() else args.cpu_cores,
    }
    if args.seed is not None:
        if not args.seed.isdigit():
            raise InputError("--seed", "", f"{args.seed!r} is not a whole number", "0 or more")
        raw["--seed"] = int(args.seed)
    if args.mount_options is not None:
        raw["--mount-options"] = args.mount_options
    if args.io_scheduler is not None:
        raw["--io-scheduler"] = args.io_scheduler
    for flag, value in (("--queue-depth", args.queue_depth), ("--nr-requests", args.nr_requests)):
        if value is not None:
            if not value.isdigit():
                raise InputError(flag, "", f"{value!r} is not a whole number", "1 or more")
            raw[flag] = int(value)
    if raw["--fs"] == ["raw"] and args.mount_options is None:
        raw["--mount-options"] = ""
    for flag, value in raw.items():
        section, key = _IOBENCH_FLAGS[flag]
        doc[section][key] = [v.lower() if flag == "--workload" else v for v in value] \
            if isinstance(value, list) else value
    try:
        return scenario_from_dict(doc, "innosim iobench", name="iobench")
    except InputError as err:
        flag = next((f for f, sk in _IOBENCH_FLAGS.items() if err.field == f"{sk[0]}.{sk[1]}"), err.field)
        raise InputError(flag, "", err.problem, err.allowed) from None


def _cmd_iobench(args) -> int:
    from sim.iobench import cases_from_scenario, default_jobs, run_cases
    from sim.report import iobench_json, iobench_table

    scn = _iobench_scenario(args)
    if "raw" in scn.hardware.filesystem and len(scn.hardware.filesystem) > 1 \
            and args.mount_options is not None and args.mount_options.strip():
        print("innosim: note: mount options apply to ext4/xfs only, not to raw", file=sys.stderr)
    cases = cases_from_scenario(scn)
    results = run_cases(cases, jobs=args.jobs or default_jobs())
    print(iobench_json(results) if args.json else iobench_table(results))
    return 0


DEFAULT_SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "default.toml"


def _cmd_run(args) -> int:
    from sim.config import load_scenario
    from sim.iobench import cases_from_scenario, default_jobs, run_cases
    from sim.report import check_output_dir, iobench_json, iobench_series_csv, iobench_table, write_atomic

    scn = load_scenario(args.scenario or DEFAULT_SCENARIO, args.set or [], args.my_cnf or [], args.server_vars)
    out_dir = Path(args.output) if args.output else None
    if out_dir is not None:
        check_output_dir(out_dir, "-o")
    if scn.workload.kind == "oltp":
        return _run_oltp(scn, out_dir, args)
    if "server" in scn.present_sections:
        print(f"innosim: note: {scn.source}: [server] settings have no effect on an iobench workload",
              file=sys.stderr)
    cases = cases_from_scenario(scn)
    results = run_cases(cases, jobs=args.jobs or default_jobs())
    if out_dir is not None:                    # files first: a closed stdout must not lose them
        write_atomic(out_dir / "results.json", iobench_json(results) + "\n")
        write_atomic(out_dir / "series.csv", iobench_series_csv(results))
    print(f"scenario {scn.name} ({scn.source}): {len(cases)} run(s), device {scn.hardware.device}, "
          f"{scn.run.duration_s:g}s measured after {scn.run.warmup_s:g}s warm-up, seed {scn.run.seed}")
    print(iobench_json(results) if args.json else iobench_table(results))
    if out_dir is not None:
        print(f"wrote {out_dir / 'results.json'} and {out_dir / 'series.csv'}", file=sys.stderr)
    return 0


def _run_oltp(scn, out_dir, args) -> int:
    from sim.engine import Server
    from sim.metrics import series_frames, stalls, summary
    from sim.run_output import stall_table, summary_text, write_outputs

    srv = Server(scn)
    for w in srv.warnings:
        print(f"innosim: warning: {w}", file=sys.stderr)
    tty = sys.stderr.isatty()

    def progress(f: float) -> None:
        if tty:
            print(f"\rsimulating {scn.name}: {100 * f:5.1f}%", end="", file=sys.stderr, flush=True)

    result = srv.run(progress)
    if tty:
        print(file=sys.stderr)
    frames = series_frames(result)
    s = summary(result, frames)
    paths = write_outputs(result, out_dir, frames, s) if out_dir is not None else []   # before any print
    if args.json:
        print(json.dumps(s, indent=2))
    else:
        print(f"scenario {scn.name} ({scn.source}), seed {scn.run.seed}")
        print(summary_text(s))
        for key, label in (("1s", "1 s"), ("100ms", "100 ms")):
            if key in frames:
                print(f"\nstalls at {label} resolution:")
                print(stall_table(stalls(frames[key], scn.run.stall_threshold_pct, scn.server.version)))
    if out_dir is not None:
        print(f"wrote {len(paths)} files to {out_dir}", file=sys.stderr)
    return 0


def _cmd_sweep(args) -> int:
    from sim.config import read_scenario_doc, scenario_and_doc
    from sim.sweep import (Cache, SweepSpec, ci_table, default_cache_dir, display_frame, expand, parse_grid,
                           parse_range, point_notes, run_points, runs_table, write_tables)
    from sim.report import check_output_file

    src = args.scenario
    path = Path(src)
    base = read_scenario_doc(path)
    said: list[str] = []
    if args.my_cnf or args.server_vars:
        scn, base = scenario_and_doc(base, src, path.stem, args.set or [], args.my_cnf or [],
                                     server_vars=args.server_vars)
        said = list(scn.notes)
    grid = tuple(parse_grid(g) for g in args.grid or [])
    ranges = tuple(parse_range(r, base, src) for r in args.range or [])
    if ranges and not args.random:
        raise InputError("--range", "", "ranges need --random N (how many points to draw)", "--random 8")
    if args.random and not ranges:
        raise InputError("--random", "", "random points need at least one --range key=lo:hi",
                         "e.g. --range server.innodb_io_capacity=200:2000")
    if args.random < 0:
        raise InputError("--random", "", "must be 0 or more", ">= 0")
    if args.replicates < 1:
        raise InputError("--replicates", "", "must be 1 or more", ">= 1")
    if args.workers < 0:
        raise InputError("--workers", "", "must be 0 (all cores) or more", ">= 0")
    out = Path(args.output)
    if out.suffix != ".parquet":
        raise InputError(str(out), "-o", "the runs table is written as Parquet", "a path ending in .parquet")
    check_output_file(out, "-o", "a file path in an existing directory")
    spec = SweepSpec(grid=grid, ranges=ranges, random_n=args.random, replicates=args.replicates)
    keys = spec.keys
    points = expand(base, src, path.stem, spec, args.set or [])
    for note in dict.fromkeys(said + point_notes(points)):
        print(f"innosim: note: {note}", file=sys.stderr)
    cache = Cache(None if args.no_cache else Path(args.cache_dir) if args.cache_dir else default_cache_dir())
    t0 = time.perf_counter()
    rows = run_points(points, cache, workers=args.workers, dask_scheduler=args.dask_scheduler)
    runs = runs_table(points, rows, keys)
    ci = ci_table(runs, keys) if args.replicates > 1 else None
    paths = write_tables(runs, ci, out)
    if args.plot:
        from sim.sweep_plots import write_sweep_figures

        if len(keys) > 2:
            print("innosim: note: figures are drawn for one or two swept parameters; "
                  f"this sweep has {len(keys)}", file=sys.stderr)
        else:
            paths += write_sweep_figures(ci if ci is not None else ci_table(runs, keys), keys, out)
    view = display_frame(ci if ci is not None else runs, keys)
    cols = keys + (["runs", "tps_mean_mean", "tps_mean_ci95", "stalls_1s_s_mean", "latency_p99_ms_mean"]
                   if ci is not None else ["seed", "tps_mean", "stalls_1s_s", "latency_p99_ms"])
    with pd_display():
        # The swept settings keep their significant digits (cpu_per_txn is 0.0022 s, not 0.0).
        as_set = {k: (lambda v: f"{v:.6g}" if isinstance(v, float) else str(v)) for k in keys}
        print(view[cols].to_string(index=False, float_format=lambda v: f"{v:,.1f}", formatters=as_set))
    print(f"{len(points)} runs in {time.perf_counter() - t0:.1f} s; wrote " + ", ".join(str(p) for p in paths),
          file=sys.stderr)
    return 0


def pd_display():
    import pandas as pd

    return pd.option_context("display.width", 200, "display.max_columns", 50)


def _cmd_validate(args) -> int:
    if args.suite not in SUITES:
        raise InputError("innosim validate", "", f"{args.suite!r} is not a suite", ", ".join(SUITES))
    from sim.iobench import default_jobs
    from validation.common import progress_line

    jobs = args.jobs or default_jobs()
    if args.suite == "iobench":
        from validation import iobench as suite

        res = suite.run_suite(jobs=jobs)
    else:                                   # the scenario suites: a line as each run ends
        if args.suite == "versions":
            from validation import versions as suite
        else:
            from validation import flushing as suite
        res = suite.run_suite(jobs=jobs, progress=progress_line(args.suite))
    if args.json:
        print(json.dumps(res.to_json(), indent=2))
    else:
        print(suite.format_table(res))
    return 0 if res.ok else 1


def _cmd_calibrate(args) -> int:
    from models.block_layer import NR_REQUESTS, QUEUE_DEPTH_SATA, BlockLayerConfig
    from sim.calibrate import calibrate_fio, cfq_fingerprints, holdout_summary, report_rows
    from sim.fio import fio_files, read_fio_json
    from sim.report import check_output_file, format_rows, write_atomic

    if args.kind == "trace":
        return _calibrate_trace(args)
    if args.kind != "fio":
        raise InputError("innosim calibrate", "", f"{args.kind!r} is not a calibration kind", "fio or trace")
    if not args.files:
        raise InputError("innosim calibrate fio", "", "no fio files given", "one or more fio JSON files")
    out = Path(args.output) if args.output else None
    if out is not None:
        check_output_file(out, "-o", "a file path for the profile JSON, in an existing directory")
    jobs = [j for f in fio_files(args.files) for j in read_fio_json(f)]
    name = args.name or (out.stem if out else "fitted")
    host = None
    if args.host_elevator is not None:
        host = BlockLayerConfig(args.host_elevator, args.queue_depth, args.nr_requests).check(
            "innosim calibrate fio", {"queue_depth": "--queue-depth", "nr_requests": "--nr-requests"})
    elif args.queue_depth != QUEUE_DEPTH_SATA or args.nr_requests != NR_REQUESTS:
        raise InputError("innosim calibrate fio", "--queue-depth/--nr-requests",
                         "describe the host's block layer, so they need --host-elevator", "--host-elevator none or cfq")
    if args.workers < 0:
        raise InputError("innosim calibrate fio", "--workers", f"{args.workers} is not allowed",
                         "0 (all cores) or more")
    cal = calibrate_fio(jobs, args.holdout, name, "innosim calibrate fio: " + ", ".join(str(f) for f in args.files),
                        host, args.workers or os.cpu_count() or 1)
    if args.rotational:
        # Not in fio's output: the device's /sys/block/DEV/queue/rotational (MariaDB's neighbour flushing).
        cal.fit.profile["rotational"] = True
    rows = cal.holdout_rows
    if args.json:
        print(json.dumps({"profile": cal.fit.profile, "holdout_rows": rows,
                          **({"flush_rows": list(cal.flush_rows)} if cal.flush_rows else {})}, indent=2))
    else:
        header = ("job", "set", "IOPS meas", "IOPS fit", "mean us", "fit", "p50 us", "fit", "p99 us", "fit",
                  "p99.9 us", "fit")
        def num(x: float, fmt: str) -> str:
            return format(x, fmt) if math.isfinite(x) else "-"

        table = [(r["job"], r["set"], num(r["iops_measured"], ",.0f"), num(r["iops_fitted"], ",.0f"),
                  *(num(r[f"lat_{q}_us_{k}"], ".0f") for q in ("mean", "p50", "p99", "p999")
                    for k in ("measured", "fitted")))
                 for r in report_rows(cal)]
        print(format_rows(header, table))
        prof = cal.fit.profile
        print(f"\nunits {prof['parallelism']}"
              + (" behind a front end (one FIFO stage)" if prof.get("front_end") else "")
              + f", assignment {prof['unit_assignment']}, host path "
              f"{prof['host_overhead_s'] * 1e6:.1f} us, fio think time {cal.fit.think_s * 1e6:.1f} us")
        if prof.get("flush_s"):
            print(f"cache flush {prof['flush_s'] * 1e6:.1f} us (volatile write cache)")
        for f in cal.flush_rows:
            print(f"fdatasync ({f['set']}) {f['job']}: {f['writes_per_s_measured']:,.0f} writes/s measured, "
                  f"{f['writes_per_s_fitted']:,.0f} fitted; sync mean {f['sync_mean_us_measured']:.0f} us "
                  f"measured, {f['sync_mean_us_fitted']:.0f} fitted (p99 {f['sync_p99_us_measured']:.0f} us measured)")
        for h in holdout_summary(rows):
            print(f"held out ({args.holdout}): {h['metric']} within target on {h['within']} of {h['of']} jobs; "
                  f"median |error| {h['median_abs_error']:.1%}")
    if host is None:
        prints = cfq_fingerprints(jobs)
        if len(prints) >= 2:
            print(f"note: {len(prints)} jobs wait as CFQ's slices make them wait ({prints[0]}; ...): the host "
                  "that ran fio likely used CFQ. Fit again with --host-elevator cfq to model it.", file=sys.stderr)
    if out is not None:
        write_atomic(out, json.dumps(cal.fit.profile, indent=2) + "\n")
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _calibrate_trace(args) -> int:
    from sim.config import read_scenario_doc, scenario_and_doc, scenario_from_dict
    from sim.report import check_output_file, format_rows, write_atomic
    from sim.run_output import resolved_toml
    from sim.trace import merge, read_trace
    from sim.trace_fit import BLOCK_S, SERIES, fit_trace, overlay_figure, parse_fit, parse_series
    from sim.units import parse_duration_s

    def duration(flag: str, text: str) -> float:
        try:
            return parse_duration_s(text)
        except ValueError as err:
            raise InputError(flag, text, str(err), "a duration such as 30s or 2min") from None

    if not args.files:
        raise InputError("innosim calibrate trace", "", "no trace files given",
                         "sysbench / tpcc-mysql output, mysqladmin extended-status output or a CSV of samples")
    if not args.scenario:
        raise InputError("innosim calibrate trace", "--scenario", "is required",
                         "the scenario (server, hardware, workload) the trace was measured on")
    out = Path(args.output) if args.output else None
    if out is not None:
        if out.suffix != ".toml" and not out.is_dir():
            raise InputError(str(out), "-o", "the fitted scenario is TOML", "a file path ending in .toml")
        check_output_file(out, "-o", "a file path ending in .toml, in an existing directory")
    if args.plot:
        check_output_file(Path(args.plot), "--plot", "a PNG file path in an existing directory")
    fit = parse_fit(args.fit)
    series = parse_series(args.series)
    # The server the trace was measured on (--server-vars, --my-cnf): its settings go into the
    # document that is fitted.
    base, doc = scenario_and_doc(read_scenario_doc(Path(args.scenario)), args.scenario,
                                 option_files=args.my_cnf or [], server_vars=args.server_vars)
    if args.my_cnf or args.server_vars:
        for note in base.notes:
            print(f"note: {note}", file=sys.stderr)
    traces = [read_trace(f) for f in args.files]
    shifts = [duration("--shift", x) if not x.strip().startswith("-") else -duration("--shift", x.strip()[1:])
              for x in (args.shift or [])]
    if any(not float(x).is_integer() for x in shifts):
        raise InputError("--shift", ",".join(args.shift), "the frames are per second", "whole seconds, e.g. -2s")
    if shifts and len(shifts) != len(traces):
        raise InputError("--shift", ",".join(args.shift), f"{len(shifts)} shifts for {len(traces)} trace files",
                         "one --shift per trace file, in the order of the files (0 for the ones that stay)")
    trace = merge(traces, shifts or None)
    last_s = float(trace.frame["time_s"].max())
    duration_s = duration("--duration", args.duration) if args.duration else last_s
    warmup_s = duration("--warmup", args.warmup) if args.warmup else min(10.0, duration_s / 5)
    if duration_s > last_s + 1e-9:
        raise InputError("--duration", args.duration, f"is longer than the trace ({last_s:g} s)",
                         f"at most {last_s:g}s")
    if duration_s - warmup_s < 10:
        raise InputError("--warmup", args.warmup or "", "leaves less than 10 s of trace to fit",
                         "a warm-up well inside --duration")
    for tr in traces:
        print(tr.describe(), file=sys.stderr)
    t0 = time.perf_counter()
    res = fit_trace(doc, args.scenario, trace, fit, warmup_s, duration_s, max_evals=args.max_evals,
                    workers=args.workers, multistart=args.multistart,
                    progress=lambda text: print(f"fit [{time.perf_counter() - t0:6.0f} s] {text}", file=sys.stderr,
                                                flush=True), series=series)
    fitted = scenario_from_dict(doc, args.scenario, name=base.name + "-fitted", overrides=res.overrides())
    notes = trace.notes + res.notes            # what reading the files found, then what the fit did
    if args.json:
        print(json.dumps({"fitted": {k: {"value": float(v), "sd": float(sd)} for k, v, sd in
                                     zip(res.names, res.values, res.sd)},
                          "fixed": res.fixed, "series": res.series_error.to_dict(orient="records"),
                          "per_transaction": res.per_txn.to_dict(orient="records"),
                          "simulations": res.evaluations, "notes": notes}, indent=2))
    else:
        for n in notes:
            print(f"note: {n}")
        print(f"fitted on {warmup_s:g}-{duration_s:g} s of the trace, {res.evaluations} simulations of "
              f"{duration_s:g} s each:")
        print(format_rows(("parameter", "value", "sd"),
                          [(k, f"{v:.4g}", f"{sd:.2g}") for k, v, sd in zip(res.names, res.values, res.sd)]))
        print(f"\nfit error per series (means of {BLOCK_S} s windows; error relative to the measured mean):")
        print(format_rows(("series", "fitted", "measured mean", "simulated mean", "mean error %", "NRMS %"),
                          [(r.series, "yes" if r.fitted else "no (shown)", f"{r.measured_mean:,.4g}",
                            f"{r.simulated_mean:,.4g}", f"{r.mean_error_pct:+.1f}", f"{r.nrms_pct:.1f}")
                           for r in res.series_error.itertuples()]))
        unused = [SERIES[c] for c in SERIES if c not in trace.frame]
        if unused:
            print("not in the trace, not fitted: " + ", ".join(unused))
        if len(res.per_txn):
            print(f"\nper transaction over {warmup_s:g}-{duration_s:g} s (shown, not fitted; counted as the "
                  f"server counts them):")
            print(format_rows(("counter", "measured", "simulated", "simulated / measured"),
                              [(r.counter, f"{r.measured:,.4g}", f"{r.simulated:,.4g}",
                                "-" if r.ratio != r.ratio else f"{r.ratio:.2f}")
                               for r in res.per_txn.itertuples()]))
    header = (f"# fitted by innosim calibrate trace to {', '.join(map(str, args.files))}\n# "
              + "; ".join(f"{k} = {v:.4g} (sd {sd:.2g})" for k, v, sd in zip(res.names, res.values, res.sd)) + "\n")
    if out is not None:
        write_atomic(out, header + resolved_toml(fitted, base_dir=out.parent) + "\n")
        print(f"wrote {out}", file=sys.stderr)
    if args.plot:
        from sim.plots import _save

        _save(overlay_figure(res, warmup_s), Path(args.plot))
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _cmd_config(args) -> int:
    """The resolved settings of a scenario, where each came from, and the version's limits; no run."""
    from sim.config import applicable_keys, load_scenario, setting_text
    from sim.engine import preflight
    from sim.report import format_rows

    out = Path(args.output) if args.output else None
    if out is not None:
        from sim.report import check_output_file

        if out.suffix != ".toml":
            raise InputError(str(out), "-o", "the resolved scenario is written as TOML", "a path ending in .toml")
        check_output_file(out, "-o", "a file path in an existing directory")
    scn = load_scenario(args.scenario or DEFAULT_SCENARIO, args.set or [], args.my_cnf or [], args.server_vars)
    origins = dict(scn.origins)
    rows = [{"setting": f"{section}.{key}", "value": setting_text(scn, section, key),
             "from": origins[f"{section}.{key}"]}
            for section in ("server", "hardware", "workload", "run") for key in applicable_keys(scn, section)]
    limits = []
    warnings: list[str] = list(scn.notes)
    if scn.workload.kind == "oltp":
        checked = preflight(scn)
        warnings = checked.warnings
        lim = checked.limits
        limits = [{"limit": lim.name_of(f), "bytes": getattr(lim, f), "pct_of_redo": lim.pct(f)}
                  for f, _ in lim.names if getattr(lim, f) is not None]
        limits.append({"limit": "redo capacity (configured)", "bytes": lim.configured_bytes, "pct_of_redo": 100.0})
    if out is not None:
        from sim.report import write_atomic
        from sim.run_output import resolved_toml

        write_atomic(out, resolved_toml(scn, base_dir=out.parent, origins=True))
        print(f"wrote {out}", file=sys.stderr)
    if args.json:
        print(json.dumps({"scenario": scn.name, "source": scn.source, "version": scn.server.version,
                          "settings": rows, "notes": warnings, "limits": limits}, indent=2))
        return 0
    print(f"scenario {scn.name} ({scn.source}), {scn.server.version}, workload {scn.workload.kind}")
    print(format_rows(("setting", "value", "from"), [(r["setting"], r["value"], r["from"]) for r in rows]))
    if limits:
        print(f"\n{scn.server.version} limits (checkpoint age / modified age, of the configured redo):")
        print(format_rows(("limit", "MiB", "% of redo"), [(r["limit"], f"{r['bytes'] / 2**20:,.1f}",
                                                           f"{r['pct_of_redo']:.1f}") for r in limits]))
    for w in warnings:
        print(f"note: {w}")
    return 0


def _cmd_profiles(args) -> int:
    for name in builtin_profile_names():
        p = load_profile(name)
        print(f"{name}: {p.description}\n  source: {p.source}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="innosim", description="Discrete-event simulator of InnoDB flushing and filesystem I/O.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.required = True

    io = sub.add_parser("iobench", help="replay IObench-style random I/O on a device and filesystem")
    io.add_argument("--device", default="fusionio-2012", help="built-in profile name or JSON file")
    io.add_argument("--fs", default="xfs", help="raw, ext4, xfs (comma-separated for several)")
    io.add_argument("--kernel", default="2012", help="2012 or modern (comma-separated for several)")
    io.add_argument("--mode", default="direct", help="direct (O_DIRECT) or fsync (write()+fsync())")
    io.add_argument("--bs", default="4K,16K", help="block sizes, e.g. 4K,16K")
    io.add_argument("--procs", default="1,4,16,64,128,256", help="concurrent processes")
    io.add_argument("--files", default="1", help="data files the data set is spread over")
    io.add_argument("--workload", default="wrnd", help="rrnd, wrnd, rwrnd")
    io.add_argument("--mount-options", default=None, help="default by kernel era: 2012 noatime,nodiratime,nobarrier (the seed's); "
                    "modern noatime,nodiratime")
    io.add_argument("--data-size", default="128G", help="data set size")
    io.add_argument("--page-cache", default="0", help="page cache for buffered reads")
    io.add_argument("--cpu-cores", default="8", help="cores for the copies out of the page cache")
    io.add_argument("--io-scheduler", default=None,
                    help="the host's block layer between each process and the device: off (default: the "
                         "device alone), none (noop) or cfq (Linux 4.x legacy path, models/block_layer.py)")
    io.add_argument("--queue-depth", default=None, help="with --io-scheduler: tags the device has (default 32)")
    io.add_argument("--nr-requests", default=None, help="with --io-scheduler: request list size (default 128)")
    io.add_argument("--duration", default="0.2s", help="measured simulated time per run")
    io.add_argument("--warmup", default="0.05s", help="simulated warm-up before measuring")
    io.add_argument("--seed", default=None, help="random seed (default 1)")
    io.add_argument("--jobs", "--workers", dest="jobs", type=int, default=0,
                    help="worker processes (default: all cores)")
    io.add_argument("--json", action="store_true", help="print JSON instead of a table")
    io.set_defaults(func=_cmd_iobench)

    run = sub.add_parser("run", help="run a scenario file")
    run.add_argument("scenario", nargs="?", default=None,
                     help="scenario TOML file (default: scenarios/default.toml)")
    run.add_argument("--server-vars", metavar="FILE",
                     help="version and settings from a server's SHOW GLOBAL VARIABLES output (my.cnf and --set win)")
    run.add_argument("--my-cnf", action="append", metavar="FILE",
                     help="server settings from a MySQL/MariaDB option file (repeatable; --set wins)")
    run.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", help="override a setting")
    run.add_argument("-o", "--output", help="directory for the output files (series, stalls, summary, plots)")
    run.add_argument("--jobs", "--workers", dest="jobs", type=int, default=0,
                     help="worker processes (default: all cores)")
    run.add_argument("--json", action="store_true", help="print JSON instead of a table")
    run.set_defaults(func=_cmd_run)

    sw = sub.add_parser("sweep", help="run an oltp scenario over a grid or random points of settings")
    sw.add_argument("scenario", help="scenario TOML file (oltp)")
    sw.add_argument("--grid", action="append", metavar="SECTION.KEY=V1,V2,...", help="values of one setting")
    sw.add_argument("--random", type=int, default=0, metavar="N", help="N random points drawn in the --range boxes")
    sw.add_argument("--range", action="append", metavar="SECTION.KEY=LO:HI", help="range of one setting")
    sw.add_argument("--replicates", type=int, default=1, help="runs per point, seeds seed, seed+1, ...")
    sw.add_argument("--server-vars", metavar="FILE",
                    help="version and settings from a server's SHOW GLOBAL VARIABLES output, for every run")
    sw.add_argument("--my-cnf", action="append", metavar="FILE",
                    help="server settings from a MySQL/MariaDB option file for every run (repeatable)")
    sw.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", help="override a setting for every run")
    sw.add_argument("-o", "--output", default="sweep.parquet", help="runs table (Parquet; CSV beside it)")
    sw.add_argument("--workers", "--jobs", dest="workers", type=int, default=0,
                    help="local worker processes (default: all cores)")
    sw.add_argument("--dask-scheduler", metavar="tcp://HOST:PORT", help="run on a Dask distributed cluster")
    sw.add_argument("--cache-dir", help="run cache (default: $INNOSIM_CACHE_DIR or ~/.cache/innosim/runs)")
    sw.add_argument("--no-cache", action="store_true", help="neither read nor write the run cache")
    sw.add_argument("--plot", action="store_true", help="draw the standard figures beside the output")
    sw.set_defaults(func=_cmd_sweep)

    val = sub.add_parser("validate", help="compare the simulator with published figures")
    val.add_argument("suite", help="suite name: " + ", ".join(SUITES))
    val.add_argument("--json", action="store_true", help="print JSON")
    val.add_argument("--jobs", "--workers", dest="jobs", type=int, default=0,
                     help="worker processes (default: all cores)")
    val.set_defaults(func=_cmd_validate)

    cal = sub.add_parser("calibrate", help="fit a device profile to fio results, or workload quantities to a "
                                           "measured server trace")
    cal.add_argument("kind", help="fio or trace")
    cal.add_argument("files", nargs="*", help="fio JSON / json+ output files (or directories of *.json), or "
                                             "trace files: sysbench or tpcc-mysql output, mysqladmin "
                                             "extended-status output, CSV samples (gzip allowed)")
    cal.add_argument("-o", "--output", help="profile JSON (fio) or fitted scenario TOML (trace) to write")
    cal.add_argument("--scenario", help="trace: the scenario the trace was measured on")
    cal.add_argument("--fit", action="append", help="trace: a parameter to fit, key or key=lo:hi (repeatable; "
                                                    "default cpu_per_txn, pages_modified_per_txn, hot_data_pct)")
    cal.add_argument("--series", help="trace: series to match, of tps, checkpoint_age, pages_flushed, pages_read, "
                                      "redo (default: all the trace has; the others are still shown)")
    cal.add_argument("--server-vars", metavar="FILE",
                     help="trace: the measured server's SHOW GLOBAL VARIABLES output (version and settings)")
    cal.add_argument("--my-cnf", action="append", metavar="FILE", help="trace: the measured server's option file")
    cal.add_argument("--shift", action="append", help="trace: move a file's clock by this much (e.g. -2s), one per "
                                                      "file in order, when the files did not start together")
    cal.add_argument("--warmup", help="trace: seconds at the start left out of the fit (default 10s)")
    cal.add_argument("--duration", help="trace: seconds of the trace to fit (default all)")
    cal.add_argument("--max-evals", type=int, default=40, help="trace: most optimiser steps (default 40)")
    cal.add_argument("--multistart", action="store_true",
                     help="trace: fit again from cpu_per_txn = min(cores, users) / measured commits/s and keep "
                          "the better fit (twice the simulations)")
    cal.add_argument("--workers", "--jobs", dest="workers", type=int, default=0,
                     help="worker processes (default all cores): trace simulations, or fio job reruns")
    cal.add_argument("--plot", help="trace: overlay PNG of measured and simulated series")
    cal.add_argument("--name", help="profile name (default: the output file's stem)")
    cal.add_argument("--holdout", help="key=value of a fio job option: those jobs are predicted, not fitted")
    cal.add_argument("--json", action="store_true", help="print {profile, holdout_rows} as JSON")
    cal.add_argument("--host-elevator", choices=("none", "cfq"),
                     help="fio: the I/O scheduler of the host that ran fio (legacy block layer, Linux 4.x: "
                          "/sys/block/DEV/queue/scheduler); the jobs are then predicted through it "
                          "(models/block_layer.py). Without it the device alone is modelled")
    cal.add_argument("--queue-depth", type=int, default=32,
                     help="fio, with --host-elevator: requests the device holds at once "
                          "(/sys/block/DEV/device/queue_depth; SATA NCQ: 32)")
    cal.add_argument("--nr-requests", type=int, default=128,
                     help="fio, with --host-elevator: the request list's size (/sys/block/DEV/queue/nr_requests)")
    cal.add_argument("--rotational", action="store_true",
                     help="fio: the device reports itself rotational (/sys/block/DEV/queue/rotational = 1; "
                          "MariaDB then flushes neighbour pages); fio output cannot show it")
    cal.set_defaults(func=_cmd_calibrate)

    cfg = sub.add_parser("config", help="show a scenario's resolved settings, where each came from, and the "
                                        "server version's limits (no simulation)")
    cfg.add_argument("scenario", nargs="?", default=None,
                     help="scenario TOML file (default: scenarios/default.toml)")
    cfg.add_argument("--server-vars", metavar="FILE", help="version and settings from SHOW GLOBAL VARIABLES output")
    cfg.add_argument("--my-cnf", action="append", metavar="FILE", help="server settings from an option file")
    cfg.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", help="override a setting")
    cfg.add_argument("--json", action="store_true", help="print JSON")
    cfg.add_argument("-o", "--output", metavar="FILE.toml",
                     help="write the resolved scenario, each line commented with where its value came from")
    cfg.set_defaults(func=_cmd_config)

    prof = sub.add_parser("profiles", help="list built-in device profiles")
    prof.set_defaults(func=_cmd_profiles)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if getattr(args, "jobs", 0) is not None and getattr(args, "jobs", 0) < 0:
            raise InputError("--jobs", "", "must be 0 (all cores) or more", ">= 0")
        return args.func(args)
    except InputError as err:
        text = str(err)
        print(text if text.startswith("innosim") else f"innosim: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("innosim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of stdout went away (`| head`); output files were written before printing.
        # Point stdout at /dev/null so the interpreter's final flush does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as err:
        # Reading or writing a file failed after the up-front checks (disk full, removed folder).
        where = err.filename or "innosim"
        print(f"innosim: {where}: {err.strerror or err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
