"""One real-browser run of the app: streamlit headless on 127.0.0.1, Chromium driven by Playwright,
the default scenario run from the What-if page and compared on the Compare page, the Learn page's
first walk-through, a small sweep run from the Sweep page, and every other page opened;
screenshots saved under artifacts/.

Needs the playwright Python package (a dev dependency) and Debian's chromium at /usr/bin/chromium
(`.ci/run` installs it when missing). Without them the test is skipped locally, and fails in CI
(CI=true) so a missing browser cannot pass unnoticed."""

import os
from pathlib import Path

import pytest

from sim.app.headless import CHROMIUM, ROOT, launch, serve

SHOT = ROOT / "artifacts" / "whatif-default.png"


def _need(ok: bool, why: str) -> None:
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"{why} (CI must run the browser test)")
        pytest.skip(why)


@pytest.mark.slow
def test_browser_runs_the_default_scenario_and_saves_a_screenshot():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    _need(sync_playwright is not None, "the playwright package is not installed")
    _need(Path(CHROMIUM).exists(), f"{CHROMIUM} is missing (apt-get install chromium)")
    with serve() as url, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 5600})
        page.goto(url)
        page.get_by_role("button", name="Run").click()
        page.get_by_text("Stalls at 1 s", exact=True).wait_for(timeout=120_000)
        page.locator("[data-testid='stImage'] img").nth(6).wait_for(timeout=60_000)
        # Waited for like the images: once the seventh image was in the page before any metric.
        page.locator("[data-testid='stMetric']").nth(5).wait_for(timeout=60_000)
        assert page.locator("[data-testid='stMetric']").count() == 6
        assert page.locator("[data-testid='stException']").count() == 0
        SHOT.parent.mkdir(exist_ok=True)
        # The app scrolls inside its main block, so the viewport is made tall enough for every chart.
        page.screenshot(path=str(SHOT), full_page=True)
        # Compare: A (8 instances) is the run just made, served from the cache; B (1 instance) runs.
        page.goto(f"{url}/compare")
        page.get_by_role("button", name="Run both").click()
        page.get_by_text("Summary, A against B").wait_for(timeout=120_000)
        page.locator("[data-testid='stImage'] img").nth(4).wait_for(timeout=60_000)
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(ROOT / "artifacts" / "compare-default.png"), full_page=True)
        # Learn: the first walk-through runs its simulation as the page opens.
        page.goto(f"{url}/learn")
        page.locator("[data-testid='stImage'] img").first.wait_for(timeout=60_000)
        assert page.locator("[data-testid='stException']").count() == 0
        page.screenshot(path=str(ROOT / "artifacts" / "learn-io.png"), full_page=True)
        # Sweep: a small sweep run from the page (innosim sweep in a child of the server).
        page.goto(f"{url}/sweep")
        dur = page.get_by_role("textbox", name="run.duration of each run")
        dur.fill("2s")
        dur.press("Enter")
        page.get_by_role("button", name="Run sweep").click()
        page.locator("[data-testid='stImage'] img").nth(1).wait_for(timeout=180_000)
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stAlertContentError']").count() == 0
        page.screenshot(path=str(ROOT / "artifacts" / "sweep-small.png"), full_page=True)
        for path, title in (("sweep", "Sweep: a region of settings"),
                            ("calibrate", "Calibrate: your device from fio results"),
                            ("iobench", "IObench what-if: device and filesystem")):
            page.goto(f"{url}/{path}")
            page.get_by_role("heading", name=title).wait_for(timeout=30_000)
            assert page.locator("[data-testid='stException']").count() == 0, path
        browser.close()
        assert SHOT.stat().st_size > 50_000
