"""The side-by-side compare, sub-agent lanes, run lists and keyboard sorting in real
Chromium (browser tier): what a user sees and can do on each page."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from looplab.chromium import CHROMIUM_ARGS, find_chromium
from looplab.report.dashboard.server import DashboardServer
from looplab.report.data.records import load_runs
from looplab.report.views.run_metrics import run_metrics
from looplab.traces.importers import import_runs, write_runs
from tests.report.test_report_browser import Watch

pytestmark = pytest.mark.browser

SESSION = (
    Path(__file__).resolve().parents[1]
    / "fixtures/graph/claude-code-sidechains/7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f.jsonl"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module."""
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def root(runs_root: Path, known_pair: Path, tmp_path: Path) -> Path:
    """The two-profile experiment, the known pair and a session with two sub-agents."""
    root = tmp_path / "root"
    shutil.copytree(runs_root / "quick", root / "quick")
    shutil.copytree(known_pair, root / "known")
    write_runs(import_runs("claude-code", SESSION)[1], root / "subagents")
    return root


def _sorted_by(page: Page, table: str, column: int) -> list[str]:
    return list(
        page.eval_on_selector_all(
            f"{table} tbody tr",
            f"rows => rows.map(r => r.cells[{column}].dataset.v ?? r.cells[{column}].textContent)",
        )
    )


def test_headers_sort_from_the_keyboard(root: Path, browser: Browser) -> None:
    """Tab reaches a header of the task page's table; Enter sorts ascending, Space
    descending, and aria-sort says which."""
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url + "task?name=coding%2Fnbugs-3")
        header = page.locator("#run-list thead th", has_text="time")
        assert header.get_attribute("tabindex") == "0"
        assert header.get_attribute("aria-sort") == "none"
        page.focus("#f-q")
        for _ in range(40):  # Tab through the form's controls to the table's headers
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.tagName") == "TH":
                break
        assert page.evaluate("document.activeElement.tagName") == "TH"
        header.focus()
        page.keyboard.press("Enter")
        assert header.get_attribute("aria-sort") == "ascending"
        times = [float(v) for v in _sorted_by(page, "#run-list", 7)]
        assert times == sorted(times) and len(times) == 2
        page.keyboard.press(" ")
        assert header.get_attribute("aria-sort") == "descending"
        assert [float(v) for v in _sorted_by(page, "#run-list", 7)] == sorted(times, reverse=True)
        watch.check()
        page.close()


def test_compare_page_deltas_equal_the_runs_numbers(root: Path, browser: Browser) -> None:
    """quick#slow-80 vs quick#fast-750: per task the A, B and delta cells equal the runs'
    own times and steps; the baseline link flips the sign."""
    runs = load_runs([root / "quick"])
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url + "compare?a=quick%23slow-80&b=quick%23fast-750")
        rows = page.locator("#sxs-b tbody tr")
        assert rows.count() == 3
        for i in range(3):
            row = rows.nth(i)
            task = row.get_attribute("data-task")
            cells = {
                (c.get_attribute("data-metric"), c.get_attribute("data-role")): c.get_attribute(
                    "data-v"
                )
                for c in row.locator("td[data-metric]").all()
            }
            (a,) = [r for r in runs if r.task == task and r.profile == "slow-80"]
            (b,) = [r for r in runs if r.task == task and r.profile == "fast-750"]
            ma, mb = run_metrics(a), run_metrics(b)
            assert float(cells["time_s", "a"] or 0) == pytest.approx(ma.time_s, rel=1e-6)
            assert float(cells["time_s", "b"] or 0) == pytest.approx(mb.time_s, rel=1e-6)
            assert float(cells["time_s", "d"] or 0) == pytest.approx(mb.time_s - ma.time_s, 1e-6)
            assert float(cells["steps", "d"] or 0) == mb.steps - ma.steps
            assert "improvement" in row.inner_text() or "regression" in row.inner_text()
        first = float(
            page.locator("#sxs-b tbody tr >> nth=0")
            .locator("td[data-role=d]")
            .first.get_attribute("data-v")
            or 0
        )
        with page.expect_navigation():
            page.click("a.pick-base")
        assert "base=1" in page.url and page.locator(".sides li.base").inner_text().startswith("B")
        flipped = page.locator("#sxs-a tbody tr >> nth=0").locator("td[data-role=d]").first
        assert float(flipped.get_attribute("data-v") or 0) == pytest.approx(-first)
        watch.check()
        page.close()


def test_run_page_draws_a_lane_group_per_sub_agent(root: Path, browser: Browser) -> None:
    """The session's run page: lanes named after both sub-agents, spawn and join links,
    the critical sub-run banded, the run tree chart, and the transcript grouped."""
    trace = next((root / "subagents").glob("*.jsonl")).name
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url + f"run/subagents/{trace}", width=1400)
        gantt = page.locator("figure[data-gantt]")
        labels = gantt.locator("svg text.tick").all_text_contents()
        assert any("Explore" in t and t.endswith("model") for t in labels), labels
        assert any("general-purpose" in t and t.endswith("tools") for t in labels), labels
        assert gantt.locator("line.link.spawn").count() == 2
        assert gantt.locator("line.link.join").count() == 2
        assert gantt.locator("rect.critical").count() >= 1
        assert page.locator("figure[data-chart^='tree:'] svg .mark").count() == 3
        assert page.locator("details.subrun").count() == 2
        assert page.inner_text("#filter-count") == ""  # was "0 of 0 runs shown"
        page.click("button[data-zoom='zoom in']")  # the redrawn chart keeps the lanes
        assert any("Explore" in t for t in gantt.locator("svg text.tick").all_text_contents())
        watch.check()
        page.close()


def test_run_list_filters_change_the_rows(root: Path, browser: Browser) -> None:
    """/runs: picking a profile and submitting keeps its runs only and puts the filter in
    the URL; a text search finds a run by its tool output."""
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url + "runs")
        total = page.locator("#run-list tbody tr").count()
        page.select_option("#f-profile", "slow-80")
        with page.expect_navigation():
            page.click("#run-filters button[type=submit]")
        assert "profile=slow-80" in page.url
        profiles = page.locator("#run-list tbody td:nth-child(6)").all_inner_texts()
        assert 0 < len(profiles) < total and set(profiles) == {"slow-80"}
        page.goto(server.url + "runs")
        page.fill("#f-q", "edit_file done")
        with page.expect_navigation():
            page.press("#f-q", "Enter")
        assert page.locator("#run-list tbody tr").count() == 1
        watch.check()
        page.close()


def test_report_file_tables_sort_from_the_keyboard(
    runs_root: Path, browser: Browser, tmp_path: Path
) -> None:
    """In the self-contained report file too: the runs table's headers take focus and
    sort on Enter, with aria-sort."""
    from looplab.report.build import write_report

    report = write_report([runs_root / "quick"], tmp_path / "report.html").path
    watch = Watch()
    page = watch.open(browser, report.as_uri())
    headers = page.locator("table.runs-table thead th")
    assert headers.count() > 3
    assert all(h.get_attribute("tabindex") == "0" for h in headers.all())
    task = headers.nth(0)
    task.focus()
    page.keyboard.press("Enter")
    assert task.get_attribute("aria-sort") == "ascending"
    column = page.eval_on_selector_all(
        "table.runs-table tbody tr", "rows => rows.map(r => r.cells[0].textContent.trim())"
    )
    assert column == sorted(column, key=str.lower)
    page.keyboard.press("Enter")
    assert task.get_attribute("aria-sort") == "descending"
    watch.check()
    page.close()


def test_index_at_390_px_keeps_the_headline_and_the_badge_clear(
    root: Path, browser: Browser
) -> None:
    """At 390 px every experiment's headline lies inside the screen, and the live badge
    sits in the title instead of over the content."""
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url, width=390)
        page.wait_for_selector("#live-badge")
        assert page.evaluate("document.getElementById('live-badge').parentElement.tagName") == "H1"
        boxes = [c.bounding_box() for c in page.locator("td.headline").all()]
        assert boxes and all(
            b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 390 for b in boxes
        )
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
        watch.check()
        page.close()
