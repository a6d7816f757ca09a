"""Reports and the dashboard in real Chromium (browser tier): drawn, error-free, navigable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from looplab.chromium import CHROMIUM_ARGS, find_chromium
from looplab.report.build import write_report
from looplab.report.server import DashboardServer

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module."""
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def _open(browser: Browser, url: str, errors: list[str]) -> Page:
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page


def _assert_charts_drawn(page: Page, minimum: int) -> int:
    """Every visible chart has a laid-out SVG with data marks; returns how many charts."""
    charts = page.eval_on_selector_all(
        "figure.chart",
        """figs => figs.filter(f => f.offsetParent !== null).map(f => {
            const svg = f.querySelector('svg'); const box = svg.getBoundingClientRect();
            return {name: f.dataset.chart, w: box.width, h: box.height,
                    marks: svg.querySelectorAll('.mark').length};
        })""",
    )
    assert len(charts) >= minimum
    empty = [c for c in charts if c["w"] < 200 or c["h"] < 100 or c["marks"] == 0]
    assert empty == [], empty
    return len(charts)


def test_report_renders_in_chromium(runs_root: Path, browser: Browser, tmp_path: Path) -> None:
    """No console errors, every chart drawn, a run's timeline opens; screenshot kept."""
    report = write_report([runs_root / "quick"], tmp_path / "report.html").path
    errors: list[str] = []
    page = _open(browser, report.as_uri(), errors)
    drawn = _assert_charts_drawn(page, minimum=10)
    assert "faster decode" in page.inner_text(".sentence")
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 50_000
    page.click("table.tasks .runs a >> nth=0")
    target = page.locator(".run:target")
    assert target.count() == 1 and target.is_visible()
    assert _assert_charts_drawn(page, minimum=drawn + 1) == drawn + 1
    assert errors == []
    page.close()


def test_imported_traces_render_with_estimated_marks(
    runs_root: Path, browser: Browser, tmp_path: Path
) -> None:
    """Own and imported runs in one report: all charts drawn, estimated values marked."""
    report = write_report(
        [runs_root / "quick", runs_root / "imported"], tmp_path / "mixed.html"
    ).path
    errors: list[str] = []
    page = _open(browser, report.as_uri(), errors)
    _assert_charts_drawn(page, minimum=10)
    assert page.locator("table.headline .est").count() >= 1
    assert page.locator('#timeline rect[fill="url(#hatch)"]').count() > 0
    assert page.locator("polyline[stroke-dasharray]").count() > 0
    page.screenshot(path=str(tmp_path / "mixed.png"), full_page=True)
    assert errors == []
    page.close()


def test_dashboard_lists_opens_and_compares(runs_root: Path, browser: Browser) -> None:
    """The index lists both experiments; a report opens; two inputs compare side by side."""
    with DashboardServer(runs_root) as server:
        errors: list[str] = []
        page = _open(browser, server.url, errors)
        listed = page.locator("a.report").all_inner_texts()
        assert listed == ["imported", "quick"]
        page.click("a.report >> text=quick")
        _assert_charts_drawn(page, minimum=10)
        page.goto(server.url)
        page.select_option("#pick-a", "quick")
        page.select_option("#pick-b", "imported")
        page.click("#compare")
        page.wait_for_load_state()
        heads = page.locator("table.headline tbody tr").all_inner_texts()
        assert any("quick · slow-80" in h for h in heads)
        assert any("imported · import:mini-swe-agent" in h for h in heads)
        _assert_charts_drawn(page, minimum=10)
        assert errors == []
        page.close()
