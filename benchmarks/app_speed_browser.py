"""App speed as a user sees it: `streamlit run app.py` headless on 127.0.0.1, Debian's Chromium
driven by Playwright, the What-if page's Run clicked, and the time until the seventh figure is
shown in the browser. A fresh server per run (cold cache). Needs /usr/bin/chromium and the
playwright package (dev dependencies; `.ci/run` installs chromium).
Prints: whatif_default_browser wall_s=<median> runs=<n> (each: ...)
Usage: python benchmarks/app_speed_browser.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sim.app.headless import launch, serve  # noqa: E402
from machine import header  # noqa: E402


def one_run(pw) -> float:
    with serve() as url:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 5600})
        page.goto(url)
        button = page.get_by_role("button", name="Run")
        button.wait_for(timeout=60_000)
        time.sleep(1.0)                                   # the page settles (imports done) before the click
        t0 = time.perf_counter()
        button.click()
        page.locator("[data-testid='stImage'] img").nth(6).wait_for(timeout=120_000)
        page.wait_for_function("() => [...document.querySelectorAll(\"[data-testid='stImage'] img\")]"
                               ".slice(0, 7).every(i => i.complete && i.naturalWidth > 0)", timeout=60_000)
        wall = time.perf_counter() - t0
        browser.close()
        return wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    walls = []
    with sync_playwright() as pw:
        for _ in range(args.runs):
            walls.append(one_run(pw))
    print(header("scenarios/default.toml, cold cache, Chromium via Playwright, click to the seventh figure shown"))
    print(f"whatif_default_browser wall_s={statistics.median(walls):.2f} runs={len(walls)} "
          f"(each: {', '.join(f'{w:.2f}' for w in walls)})")


if __name__ == "__main__":
    main()
