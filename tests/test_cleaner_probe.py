"""validation/live/cleaner_probe.py without a server: its query, summary and errors."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "validation" / "live"))
import cleaner_probe  # noqa: E402


def _row(t, lru, adaptive, free, commits):
    return {"t": t, "buffer_LRU_batch_num_scan": lru, "buffer_flush_adaptive": adaptive,
            "buffer_flush_adaptive_total_pages": 500.0 * adaptive, "buffer_flush_background": 0.0,
            "Innodb_buffer_pool_pages_free": free, "Com_commit": commits}


def test_query_asks_for_every_counter_and_ends_with_a_marker():
    q = cleaner_probe.query()
    for name in cleaner_probe.METRICS + cleaner_probe.STATUS:
        assert f"'{name}'" in q
    assert q.rstrip().endswith("SELECT 'END';")


def test_summary_counts_passes_and_gaps():
    rows = [_row(0.0, 0, 0, 1500, 0)]
    lru = adaptive = 0
    for k in range(1, 101):                       # 10 s at 0.1 s; an LRU pass every 0.3 s
        if k % 3 == 0:
            lru += 1
        if k % 50 == 0:
            adaptive += 1
        rows.append(_row(k * 0.1, lru, adaptive, 800 + (k % 7) * 100, 1000 * k * 0.1))
    s = cleaner_probe.summary(rows)
    assert s["lru_batches_per_s"] == pytest.approx(3.3, abs=0.05)
    assert s["adaptive_batches_per_s"] == pytest.approx(0.2)
    assert s["adaptive_pages_per_batch"] == pytest.approx(500.0)
    assert s["lru_gap_s_median_p90_max"][0] == pytest.approx(0.3)
    assert s["free_pages_min_p5_median"][0] == 800 and s["commits_per_s"] == pytest.approx(1000.0)
    # k = 50 and 100 (adaptive): the samples before are k = 49 and 99, free 800 + 0 and 800 + 1 x 100.
    assert s["free_before_adaptive_pass_median"] == 900
    assert cleaner_probe.summary(rows[:1]) == {}


def test_no_server_is_one_clear_message_and_exit_2(tmp_path):
    with pytest.raises(cleaner_probe.ProbeError, match="no server socket"):
        if cleaner_probe.shutil.which("mariadb") or cleaner_probe.shutil.which("mysql"):
            cleaner_probe.probe(tmp_path, 1.0, 0.1, wait_s=0.3)
        else:
            raise cleaner_probe.ProbeError("no server socket (no client here either)")
    r = subprocess.run([sys.executable, str(ROOT / "validation/live/cleaner_probe.py"), str(tmp_path),
                        str(tmp_path / "o.json.gz"), "--interval", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--interval" in r.stderr


def test_shipped_probe_run_reads_back():
    path = ROOT / "validation/live/log-size-384m-probe/cleaner_probe.json.gz"
    data = json.load(gzip.open(path, "rt"))
    s = cleaner_probe.summary(data["rows"])
    assert s["lru_batches_per_s"] > 2 and 0.1 < s["adaptive_batches_per_s"] < 0.5
    # At 20 ms the adaptive passes start where the LRU passes are woken: the free list near
    # innodb_lru_scan_depth / 2 (768).
    fine = json.load(gzip.open(ROOT / "validation/live/log-size-384m-probe-20ms/cleaner_probe.json.gz", "rt"))
    s20 = cleaner_probe.summary(fine["rows"])
    assert 700 <= s20["free_before_adaptive_pass_median"] <= 850
