"""App speed: wall time of the What-if page running the default scenario, cold cache, from the
click to the last figure (streamlit AppTest, one fresh process per run).
Prints: whatif_default wall_s=<median> runs=<n> (each run: ...)
Usage: python benchmarks/app_speed.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import header

ROOT = Path(__file__).resolve().parent.parent
CHILD = r"""
import json, time
from streamlit.testing.v1 import AppTest
def page():
    from sim.app import whatif
    whatif.render()
at = AppTest.from_function(page, default_timeout=300).run()
t0 = time.perf_counter()
at.button[0].click().run()
wall = time.perf_counter() - t0
assert not at.exception and len(at.get("image")) == 7
print(json.dumps({"wall_s": wall}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        child = Path(tmp) / "app_speed_child.py"          # AppTest.from_function reads the source file
        child.write_text(CHILD)
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, str(child)], cwd=ROOT, capture_output=True, text=True,
                                 check=True)
            walls.append(json.loads(out.stdout.strip().splitlines()[-1])["wall_s"])
    print(header("scenarios/default.toml, cold cache"))
    print(f"whatif_default wall_s={statistics.median(walls):.2f} runs={len(walls)} "
          f"(each: {', '.join(f'{w:.2f}' for w in walls)})")


if __name__ == "__main__":
    main()
