"""App speed as a user sees it: `streamlit run app.py` headless on 127.0.0.1, Debian's Chromium
driven by Playwright, the What-if page's Run clicked, and the time until the seventh figure is
shown in the browser. A fresh server per run (cold cache). Needs /usr/bin/chromium and the
playwright package (dev dependencies; `.ci/run` installs chromium).
Prints: whatif_default_browser wall_s=<median> runs=<n> (each: ...)
Usage: python benchmarks/app_speed_browser.py [--runs 5]
"""

from __future__ import annotations

import argparse
import platform
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_run(pw) -> float:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        browser = pw.chromium.launch(executable_path=CHROMIUM,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
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
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    walls = []
    with sync_playwright() as pw:
        for _ in range(args.runs):
            walls.append(one_run(pw))
    print(f"# {platform.machine()}, Python {platform.python_version()}; scenarios/default.toml, cold cache, "
          f"Chromium via Playwright, click to the seventh figure shown")
    print(f"whatif_default_browser wall_s={statistics.median(walls):.2f} runs={len(walls)} "
          f"(each: {', '.join(f'{w:.2f}' for w in walls)})")


if __name__ == "__main__":
    main()
