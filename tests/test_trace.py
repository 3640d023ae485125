"""Trace readers (sysbench, tpcc-mysql, mysqladmin, CSV samples): per-second frames, what each file
lacks, and clear errors for bad input."""

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.errors import InputError
from sim.trace import merge, per_second, read_trace, read_trace_bytes, sniff

SYSBENCH = """sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 16
Report intermediate results every 1 second(s)

Threads started!

[ 1s ] thds: 16 tps: 1770.34 qps: 35459.70 (r/w/o: 24834.68/7084.34/3540.67) lat (ms,95%): 12.75 err/s: 0.00 reconn/s: 0.00
[ 2s ] thds: 16 tps: 1750.70 qps: 35006.04 (r/w/o: 24496.85/7007.80/3501.40) lat (ms,95%): 13.70 err/s: 0.00 reconn/s: 0.00
[ 3s ] thds: 16 tps: 0.00 qps: 0.00 (r/w/o: 0.00/0.00/0.00) lat (ms,95%): 0.00 err/s: 0.00 reconn/s: 0.00
[ 4s ] thds: 16 tps: 1698.32 qps: 33951.40 (r/w/o: 23770.48/6785.28/3395.64) lat (ms,95%): 13.95 err/s: 0.00 reconn/s: 0.00
SQL statistics:
    transactions:                        5219   (1304.75 per sec.)
"""

TPCC = """***************************************
*** ###easy### TPC-C Load Generator ***
***************************************
<Parameters>
  [warehouse]: 10
  [connection]: 10
RAMP-UP TIME.(100 sec.)

MEASURING START.

  10, trx: 1365, 95%: 149.731, 99%: 192.421, max_rt: 375.631, 1366|268.011, 137|38.219, 136|480.100, 137|600.300
  20, trx: 1400, 95%: 120.000, 99%: 180.000, max_rt: 300.000, 1398|200.000, 140|30.000, 140|400.000, 140|500.000

STOPPING THREADS..........
"""


def mysqladmin(blocks: list[dict]) -> str:
    out = []
    for b in blocks:
        out.append("+----------------------+--------+")
        out.append("| Variable_name        | Value  |")
        out.append("+----------------------+--------+")
        out += [f"| {k:<20} | {v:<6} |" for k, v in b.items()]
        out.append("+----------------------+--------+")
    return "\n".join(out) + "\n"


def write(tmp_path, name, text, gz=False):
    p = tmp_path / name
    p.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return p


def test_sysbench_per_second_and_lacks(tmp_path):
    tr = read_trace(write(tmp_path, "sb.txt", SYSBENCH, gz=True))
    assert tr.kind == "sysbench" and tr.interval_s == 1.0
    f = tr.frame
    assert list(f["time_s"]) == [1.0, 2.0, 3.0, 4.0]
    assert list(f["tps"]) == [1770.34, 1750.70, 0.0, 1698.32]
    assert f["latency_p95_ms"].iloc[1] == 13.70 and f["threads"].iloc[0] == 16
    # A client trace has no server counters: the report says so.
    assert set(tr.lacks) == {"log_lsn_checkpoint_age", "Innodb_buffer_pool_pages_dirty", "pages_flushed",
                             "Innodb_os_log_written"}
    assert "lacks checkpoint age" in tr.describe()


def test_sysbench_ten_second_reports_fill_each_second():
    text = "\n".join(f"[ {t}s ] thds: 8 tps: {v:.2f} qps: 1.00 (r/w/o: 1.00/0.00/0.00) lat (ms,99%): 5.00 "
                     "err/s: 0.00 reconn/s: 0.00" for t, v in ((10, 100.0), (20, 200.0)))
    tr = read_trace_bytes(text.encode(), "sb10.txt")
    assert tr.interval_s == 10.0 and len(tr.frame) == 20
    assert (tr.frame["tps"].iloc[:10] == 100.0).all() and (tr.frame["tps"].iloc[10:] == 200.0).all()
    assert "latency_p99_ms" in tr.frame


def test_sysbench_rate_output_gives_the_queue():
    """sysbench --rate prints `queue length: N, concurrency: M` after each report line
    (db_report_intermediate); the reader takes it as the trx_queue and concurrency columns."""
    lines = []
    for t, tps, q in ((1, 500.0, 0), (2, 120.0, 380), (3, 880.0, 0)):
        lines.append(f"[ {t}s ] thds: 16 tps: {tps:.2f} qps: 1.00 (r/w/o: 1.00/0.00/0.00) lat (ms,95%): 9.00 "
                     "err/s: 0.00 reconn/s: 0.00")
        lines.append(f"[ {t}s ] queue length: {q}, concurrency: {16 if q else 3}")
    tr = read_trace_bytes("\n".join(lines).encode(), "sb-rate.txt")
    assert list(tr.frame["tps"]) == [500.0, 120.0, 880.0]
    assert list(tr.frame["trx_queue"]) == [0.0, 380.0, 0.0]
    assert list(tr.frame["concurrency"]) == [3.0, 16.0, 3.0]
    assert "trx_queue" not in read_trace_bytes(SYSBENCH.encode(), "sb.txt").frame


def test_tpcc_counts_every_transaction_type():
    tr = read_trace_bytes(TPCC.encode(), "tpcc.txt")
    assert tr.kind == "tpcc-mysql" and tr.interval_s == 10.0
    f = tr.frame
    assert len(f) == 20
    assert f["tps"].iloc[0] == pytest.approx((1365 + 1366 + 137 + 136 + 137) / 10)
    assert f["new_order_per_s"].iloc[15] == pytest.approx(140.0)
    assert f["latency_p99_ms"].iloc[0] == 192.421 and f["latency_max_ms"].iloc[19] == 300.0
    assert any("new-order" in n for n in tr.notes)


def test_tpcc_phase_column_of_forks():
    text = "  10, rampup, trx: 5, 95%: 1.0, 99%: 2.0, max_rt: 3.0, 5|1.0, 1|1.0, 1|1.0, 1|1.0\n" \
           "  20, measure, trx: 9, 95%: 1.0, 99%: 2.0, max_rt: 3.0, 9|1.0, 1|1.0, 1|1.0, 1|1.0\n"
    f = read_trace_bytes(text.encode(), "fork.txt").frame
    assert f["rampup"].iloc[0] and not f["rampup"].iloc[15]


def test_mysqladmin_relative_rebuilds_gauges_and_rates():
    first = {"Uptime": 5000, "Com_commit": 100000, "Innodb_os_log_written": 10 ** 9,
             "Innodb_buffer_pool_pages_dirty": 1000, "Innodb_checkpoint_age": 5000000,
             "Innodb_buffer_pool_pages_flushed": 50000}
    deltas = [{"Uptime": 1, "Com_commit": 1500, "Innodb_os_log_written": 3000000,
               "Innodb_buffer_pool_pages_dirty": 50 * (k + 1), "Innodb_checkpoint_age": 100000,
               "Innodb_buffer_pool_pages_flushed": 400} for k in range(3)]
    tr = read_trace_bytes(mysqladmin([first] + deltas).encode(), "ma.txt")
    f = tr.frame
    assert tr.kind == "mysqladmin" and tr.interval_s == 1.0 and len(f) == 3
    assert list(f["tps"]) == [1500.0] * 3 and list(f["pages_flushed"]) == [400.0] * 3
    assert list(f["Innodb_buffer_pool_pages_dirty"]) == [1050.0, 1150.0, 1300.0]    # levels, not changes
    assert list(f["log_lsn_checkpoint_age"]) == [5100000.0, 5200000.0, 5300000.0]
    assert tr.lacks == ["latency"]


def test_mysqladmin_absolute_tables_and_ten_second_interval():
    blocks = [{"Uptime": 100 + 10 * k, "Com_commit": 1000 * k, "Innodb_buffer_pool_pages_dirty": 7} for k in range(3)]
    tr = read_trace_bytes(mysqladmin(blocks).encode(), "abs.txt")
    assert tr.interval_s == 10.0 and len(tr.frame) == 20
    assert (tr.frame["tps"] == 100.0).all() and (tr.frame["Innodb_buffer_pool_pages_dirty"] == 7).all()
    assert any("absolute tables" in n for n in tr.notes)


def test_samples_csv_counters_gauges_and_lsn_pair():
    rows = ["timestamp,Com_commit,Innodb_os_log_written,Innodb_lsn_current,Innodb_lsn_last_checkpoint,"
            "buffer_flush_adaptive_total_pages,Innodb_buffer_pool_pages_dirty"]
    for k in range(5):
        rows.append(f"{1700000000 + k}.002,{k * 2000},{k * 4000000},{10 ** 8 + k * 4000000},{10 ** 8 + k * 1000000},"
                    f"{k * 300},{900 + k}")
    tr = read_trace_bytes(("\n".join(rows) + "\n").encode(), "s.csv")
    f = tr.frame
    assert tr.kind == "samples" and list(f["time_s"]) == [1.0, 2.0, 3.0, 4.0]
    assert (f["tps"] == 2000.0).all() and (f["Innodb_os_log_written"] == 4000000.0).all()
    assert (f["buffer_flush_adaptive_total_pages"] == 300.0).all()
    assert list(f["log_lsn_checkpoint_age"]) == [3000000.0, 6000000.0, 9000000.0, 12000000.0]
    assert "pages_flushed" in tr.lacks
    assert any("Innodb_lsn_current" in n for n in tr.notes)


def test_samples_csv_iso_times():
    text = "time,Com_commit\n2026-11-22T10:00:00,0\n2026-11-22T10:00:01,10\n2026-11-22T10:00:02,30\n"
    f = read_trace_bytes(text.encode(), "iso.csv").frame
    assert list(f["tps"]) == [10.0, 20.0]


def test_merge_takes_each_column_from_the_first_trace_that_has_it():
    client = read_trace_bytes(SYSBENCH.encode(), "sb.txt")
    rows = ["time_s,Com_commit,Innodb_checkpoint_age"] + [f"{k},{k * 1000},{k * 10}" for k in range(5)]
    server = read_trace_bytes(("\n".join(rows) + "\n").encode(), "s.csv")
    m = merge([client, server])
    assert list(m.frame["tps"]) == list(client.frame["tps"])        # the client's throughput wins
    assert list(m.frame["log_lsn_checkpoint_age"]) == [10.0, 20.0, 30.0, 40.0]
    assert "log_lsn_checkpoint_age" not in m.lacks


@pytest.mark.parametrize("data, needle", [
    (b"\x00\x01\x02binary junk", "binary"),
    (b"hello world\n", "not a recognised trace"),
    (b"[ 1s ] thds: 4 tps: 10.00 qps: garbage\n", "line 1"),
    # A number with two decimal points (found by mutating the live example; it raised ValueError).
    (b"[ 1s ] thds: 4 tps: 23.521172.68 qps: 470.43 (r/w/o: 329.30/94.09/47.04) lat (ms,95%): 1.00 "
     b"err/s: 0.00 reconn/s: 0.00\n", "line 1"),
    (b"  10, trx: 5, 95%: 1.0.0, 99%: 2.0, max_rt: 3.0, 5|1.0, 1|1, 1|1, 1|1\n", "line 1"),
    (b"  10, trx: 5, 95%: 1.0, 99%: 2.0, max_rt: 3.0, 5|1.0\n", "line 1"),
    (b"  20, trx: 5, 95%: 1, 99%: 2, max_rt: 3, 1|1, 1|1, 1|1, 1|1\n"
     b"  10, trx: 5, 95%: 1, 99%: 2, max_rt: 3, 1|1, 1|1, 1|1, 1|1\n", "do not increase"),
    (b"| Variable_name | Value |\n| Uptime | 5 |\n", "at least two"),
    (b"time_s,Com_commit\n0,1\n1,2,3\n", "line 3"),
    (b"time_s,Com_commit\n0,1\n", "fewer than two samples"),
    (b"time_s,foo\n0,1\n1,2\n2,3\n", "no SHOW GLOBAL STATUS"),
    (b"time_s,Com_commit\n0,1\n0,2\n1,3\n", "does not increase"),
    (b"time,Com_commit\nyesterday,1\n2026-01-01T00:00:01,2\n2026-01-01T00:00:02,3\n", "line 2"),
    (b"\x1f\x8b\x08truncated", "gzip"),
])
def test_bad_traces_get_one_clear_error(data, needle):
    with pytest.raises(InputError, match=needle) as exc:
        read_trace_bytes(data, "bad.txt")
    assert "bad.txt" in str(exc.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot be read"):
        read_trace(tmp_path / "nope.txt")


def test_sniff():
    assert sniff(SYSBENCH) == "sysbench" and sniff(TPCC) == "tpcc-mysql"
    assert sniff(mysqladmin([{"Uptime": 1}])) == "mysqladmin" and sniff("time_s,Com_commit\n") == "samples"


@settings(max_examples=40, deadline=None)
@given(widths=st.lists(st.integers(1, 5), min_size=1, max_size=8),
       rates=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=8, max_size=8))
def test_per_second_keeps_every_interval_total(widths, rates):
    # Nothing lost: a rate held over its interval's seconds sums back to the interval's count.
    end = np.cumsum(widths).astype(float)
    r = np.array(rates[:len(widths)])
    f = per_second(end, {"x": r}, {})
    assert len(f) == int(end[-1])
    assert f["x"].sum() == pytest.approx(float((r * np.array(widths)).sum()), rel=1e-9, abs=1e-6)


def test_per_second_tolerates_sample_jitter():
    f = per_second(np.array([0.98, 2.01, 3.2]), {"x": np.array([1.0, 2.0, 3.0])}, {"g": np.array([10.0, 20.0, 30.0])})
    assert list(f["x"]) == [1.0, 2.0, 3.0]
    assert isinstance(f, pd.DataFrame) and f["g"].iloc[0] == pytest.approx(10.0 + 10 * (1 - 0.98) / (2.01 - 0.98))


EXAMPLE = Path(__file__).resolve().parent.parent / "validation" / "live" / "example"


def test_live_capture_example_reads_and_its_sources_agree():
    client = read_trace(EXAMPLE / "sysbench.txt")
    server = read_trace(EXAMPLE / "samples.csv.gz")
    admin = read_trace(EXAMPLE / "mysqladmin.txt.gz")
    assert (client.kind, server.kind, admin.kind) == ("sysbench", "samples", "mysqladmin")
    m = merge([client, server])
    assert m.lacks == []                                   # client + server: every core quantity
    after = lambda f: f[f["time_s"] > 20]                  # noqa: E731
    # Three views of one run agree on its throughput: sysbench, Com_commit sampled, mysqladmin -r.
    tps = after(client.frame)["tps"].mean()
    assert tps == pytest.approx(1398.3, abs=0.5)
    assert after(server.frame)["tps"].mean() == pytest.approx(tps, rel=0.01)
    assert after(admin.frame)["tps"].mean() == pytest.approx(tps, rel=0.01)
    f = after(m.frame)
    assert f["log_lsn_checkpoint_age"].mean() == pytest.approx(71.2e6, rel=0.01)
    assert (f["log_lsn_checkpoint_age"] < f["checkpoint_max_age_bytes"]).all()
    assert f["Innodb_os_log_written"].sum() / f["tps"].sum() == pytest.approx(3753, rel=0.01)


def test_merge_shifts_a_files_clock():
    client = read_trace_bytes(SYSBENCH.encode(), "sb.txt")
    rows = ["time_s,Com_commit,Innodb_checkpoint_age"] + [f"{k},{k * 1000},{k * 10}" for k in range(7)]
    server = read_trace_bytes(("\n".join(rows) + "\n").encode(), "s.csv")
    m = merge([client, server], [0.0, -2.0])       # the sampler started 2 s before the client
    f = m.frame.set_index("time_s")
    assert f.loc[1.0, "log_lsn_checkpoint_age"] == 30.0 and f.loc[1.0, "tps"] == 1770.34
    assert (m.frame["time_s"] > 0).all()
    assert any("-2 s" in n for n in m.notes)


@pytest.mark.parametrize("text, lines", [
    (SYSBENCH.split("SQL statistics")[0].rstrip("\n")[:-40], 3),
    (TPCC.split("\n\nSTOPPING")[0][:-30] + "", 1),
])
def test_an_unterminated_last_line_cut_short_is_left_out_with_a_note(text, lines):
    """A file copied while the benchmark still wrote it ends in part of a line: that line is left
    out, with a note naming it; the rest is read as usual."""
    assert not text.endswith("\n")
    tr = read_trace_bytes(text.encode(), "live.txt")
    n = text.count("\n") + 1
    assert [x for x in tr.notes if "left out" in x] == [
        f"live.txt line {n} left out: it ends the file without a newline, cut short "
        "(a file copied while the benchmark still wrote it)"]
    assert len(tr.frame) == lines * (1 if tr.kind == "sysbench" else 10)


def test_a_bad_line_is_refused_when_the_file_goes_on_or_ends_with_a_newline():
    cut = SYSBENCH.split("SQL statistics")[0].rstrip("\n")[:-40]
    with pytest.raises(InputError, match="line 12"):
        read_trace_bytes((cut + "\n").encode(), "t.txt")                   # ended properly: a bad line
    lines = SYSBENCH.splitlines()
    lines[9] = lines[9][:-40]                                               # cut in the middle of the file
    with pytest.raises(InputError, match="line 10"):
        read_trace_bytes("\n".join(lines).encode(), "t.txt")


def test_trace_notes_reach_the_fit_output(tmp_path, monkeypatch, capsys):
    """What reading the trace found (here a cut last line) is printed with the fit's notes."""
    import sim.cli as cli
    from sim.trace_fit import FitResult

    text = SYSBENCH.split("SQL statistics")[0].rstrip("\n")[:-40]
    trace = write(tmp_path, "sb.txt", "\n".join(text.splitlines()[:9]) + "\n" + "\n".join(
        f"[ {s}s ] thds: 16 tps: 1750.70 qps: 35006.04 (r/w/o: 24496.85/7007.80/3501.40) lat (ms,95%): 13.70 "
        "err/s: 0.00 reconn/s: 0.00" for s in range(1, 31)) + "\n[ 31s ] thds: 16 tps: 17")
    scn = write(tmp_path, "s.toml", '[workload]\nkind = "oltp"\nwarehouses = 1\n')
    seen = {}

    def fake_fit(doc, src, tr, fit, warmup_s, duration_s, **kw):
        seen["notes"] = list(tr.notes)
        return FitResult(["workload.cpu_per_txn"], np.array([0.001]), np.array([0.0]), {},
                         pd.DataFrame({"series": [], "fitted": [], "measured_mean": [], "simulated_mean": [],
                                       "mean_error_pct": [], "nrms_pct": []}),
                         tr.frame, tr.frame, 1, ["the fit's own note"])

    monkeypatch.setattr("sim.trace_fit.fit_trace", fake_fit)
    code = cli.main(["calibrate", "trace", str(trace), "--scenario", str(scn), "--fit", "workload.cpu_per_txn",
                     "--duration", "30s", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    notes = __import__("json").loads(out)["notes"]
    assert notes[0].endswith("line 40 left out: it ends the file without a newline, cut short "
                             "(a file copied while the benchmark still wrote it)")
    assert notes[-1] == "the fit's own note"
