"""Reports and the dashboard in real Chromium (browser tier): drawn, interactive, offline,
error-free, and usable on a phone-width screen."""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route, sync_playwright

from looplab.chromium import CHROMIUM_ARGS, find_chromium
from looplab.report.build import write_report
from looplab.report.dashboard.server import DashboardServer

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module."""
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


class Watch:
    """A page's console errors and every request that left the file or the dashboard."""

    def __init__(self, allowed: tuple[str, ...] = ("file:", "data:", "blob:")) -> None:
        self.allowed = allowed
        self.errors: list[str] = []
        self.outside: list[str] = []

    def open(self, browser: Browser, url: str, width: int = 1280, **options: object) -> Page:
        """A new page at `url`; requests elsewhere are recorded and blocked."""
        page = browser.new_page(
            viewport={"width": width, "height": 1000}, accept_downloads=True, **options
        )
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", self._seen)
        page.route("**/*", self._route)
        page.goto(url)
        return page

    def _seen(self, request: object) -> None:
        url = str(getattr(request, "url", ""))
        if not url.startswith(self.allowed):
            self.outside.append(url)

    def _route(self, route: Route) -> None:
        if route.request.url.startswith(self.allowed):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def check(self) -> None:
        """No console error, no request outside."""
        assert self.errors == []
        assert self.outside == []


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


def _visible_rows(page: Page, selector: str) -> list[str]:
    return list(
        page.eval_on_selector_all(
            selector, "rows => rows.filter(r => r.offsetParent !== null).map(r => r.dataset.task)"
        )
    )


@pytest.fixture(scope="module")
def quick_report(runs_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the real two-profile experiment."""
    return write_report(
        [runs_root / "quick"], tmp_path_factory.mktemp("report") / "report.html"
    ).path


def test_report_renders_offline_without_errors(browser: Browser, quick_report: Path) -> None:
    """Every chart drawn, a run opens with timeline, icicle and transcript; no errors and
    no request leaves the file."""
    watch = Watch()
    page = watch.open(browser, quick_report.as_uri())
    drawn = _assert_charts_drawn(page, minimum=10)
    assert "faster decode" in page.inner_text(".sentence")
    assert page.locator("figure.chart:not([data-exports])").count() == 0  # all downloadable
    page.click("table.tasks .runs a >> nth=0")
    target = page.locator(".run:target")
    assert target.count() == 1 and target.is_visible()
    assert _assert_charts_drawn(page, minimum=drawn + 2) == drawn + 2
    assert target.locator(".transcript .tstep").count() >= 3
    watch.check()
    page.close()


def test_zoom_changes_the_visible_range(browser: Browser, quick_report: Path) -> None:
    """Zoom in halves the shown range, dragging zooms to the dragged span, reset restores."""
    watch = Watch()
    page = watch.open(browser, quick_report.as_uri())
    figure = page.locator('figure[data-chart="timeline"]')
    full = float(figure.get_attribute("data-x1") or 0)
    bars = figure.locator("svg rect.mark").count()
    figure.locator('button[data-zoom="zoom in"]').click()
    x0, x1 = (float(figure.get_attribute(a) or 0) for a in ("data-x0", "data-x1"))
    assert x1 - x0 == pytest.approx(full / 2, rel=1e-3)
    assert figure.locator("svg rect.mark").count() < bars
    assert "showing" in figure.locator(".range").inner_text()
    figure.locator('button[data-zoom="reset"]').click()
    box = figure.locator("svg").bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.5, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.7, y, steps=4)
    page.mouse.up()
    x0, x1 = (float(figure.get_attribute(a) or 0) for a in ("data-x0", "data-x1"))
    assert 0 < x0 < x1 < full and x1 - x0 < full / 3
    watch.check()
    page.close()


def test_filters_hide_rows_marks_and_columns(browser: Browser, quick_report: Path) -> None:
    """Task, profile, phase and duration filters hide what they say."""
    watch = Watch()
    page = watch.open(browser, quick_report.as_uri())
    runs = "table.runs-table tbody tr"
    assert len(_visible_rows(page, runs)) == 6
    page.select_option("#filter-task", "coding/nbugs-2")
    assert _visible_rows(page, runs) == ["coding/nbugs-2", "coding/nbugs-2"]
    assert _visible_rows(page, "table.tasks tbody tr") == ["coding/nbugs-2"]
    assert "2 of 6 runs shown" in page.inner_text("#filter-count")
    assert "the headline, statistics and claim check stay over all runs" in page.inner_text(
        "#filter-count"
    )
    page.select_option("#filter-task", "")
    page.uncheck('#filter-groups input[value="fast-750"]')
    assert page.locator('table.tasks th[data-group="fast-750"]').is_hidden()
    assert page.locator('figure[data-chart="compounding"] polyline[data-s="fast-750"]').is_hidden()
    page.check('#filter-groups input[value="fast-750"]')
    timeline = page.locator('figure[data-chart="timeline"]')
    decode = timeline.locator('svg rect[data-s="decode"]')
    assert decode.first.is_visible()
    page.uncheck('#filter-phases input[value="decode"]')
    assert decode.first.is_hidden()
    page.check('#filter-phases input[value="decode"]')
    page.fill("#filter-min", "1000")
    assert _visible_rows(page, runs) == []
    assert timeline.locator("svg rect.mark:visible").count() == 0
    watch.check()
    page.close()


def test_legend_toggle_sort_theme_and_icicle(browser: Browser, quick_report: Path) -> None:
    """A legend key hides its series; a header sorts; the theme toggles; a box zooms."""
    watch = Watch()
    page = watch.open(browser, quick_report.as_uri())
    figure = page.locator('figure[data-chart="compounding"]')
    figure.locator('.legend .key[data-s="slow-80"]').click()
    assert figure.locator('polyline[data-s="slow-80"]').is_hidden()
    fast = figure.locator('.legend .key[data-s="fast-750"]')
    fast.focus()  # a legend key is reachable and works from the keyboard
    assert fast.evaluate("k => k === document.activeElement && k.tabIndex === 0")
    page.keyboard.press("Enter")
    assert figure.locator('polyline[data-s="fast-750"]').is_hidden()
    assert fast.get_attribute("aria-pressed") == "false"
    page.keyboard.press(" ")
    assert figure.locator('polyline[data-s="fast-750"]').first.is_visible()
    header = page.locator("table.runs-table thead th", has_text="task").nth(1)
    header.click()
    header.click()
    times = page.eval_on_selector_all(
        "table.runs-table tbody tr td:nth-child(5)", "cells => cells.map(c => +c.dataset.v)"
    )
    assert times == sorted(times, reverse=True)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.click("#theme-toggle")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") != background
    anchor = page.locator('figure[data-chart="timeline"]').get_attribute("data-gantt") or ""
    page.goto(f"{quick_report.as_uri()}#{anchor.split()[0]}")
    flame = page.locator(".run:target figure[data-flame]")
    flame.locator('svg rect[data-p="0.0"]').click()
    assert flame.get_attribute("data-focus") == "0.0"
    watch.check()
    page.close()


def test_diff_view_shows_the_known_deltas(
    browser: Browser, known_pair: Path, tmp_path: Path
) -> None:
    """The known pair's diff: per-step decode deltas, B's extra step, the final gap."""
    result = write_report([known_pair], tmp_path / "known.html")
    key = result.model.diffs[0].key
    watch = Watch()
    page = watch.open(browser, result.path.as_uri())
    page.click(f'table.tasks a[href="#{key}"]')
    table = page.locator(f"#{key} table.diff")
    assert table.is_visible()
    heads = table.locator("thead th").all_inner_texts()
    decode = heads.index("Δ decode")
    rows = [r.locator("td").all_inner_texts() for r in table.locator("tbody tr").all()]
    assert [r[decode] for r in rows] == ["-1.50 s", "+250 ms", "-750 ms", "-250 ms"]
    assert [r[4] for r in rows] == ["same", "only in B", "same", "same"]
    assert [r[-1] for r in rows] == ["-1.50 s", "-400 ms", "-1.15 s", "-1.40 s"]
    watch.check()
    page.close()


def test_transcript_shows_a_known_tool_output(
    browser: Browser, known_pair: Path, tmp_path: Path
) -> None:
    """Run A's transcript shows its run_tests output beside the step's timing."""
    report = write_report([known_pair], tmp_path / "known.html").path
    watch = Watch()
    page = watch.open(browser, report.as_uri() + "#run-known-a")
    step = page.locator("#run-known-a .transcript .tstep", has_text="run_tests")
    assert step.count() == 1 and step.is_visible()
    assert "KNOWN-OUTPUT-42: 3 passed" in step.inner_text()
    assert "decode 1.00 s" in step.locator(".thead").inner_text()
    watch.check()
    page.close()


def test_export_downloads_parseable_csv(browser: Browser, quick_report: Path) -> None:
    """A table's, a chart's and a timeline's CSV download parse, with the shown rows."""
    watch = Watch()
    page = watch.open(browser, quick_report.as_uri())
    links = {
        "runs": 'a[data-export-name="runs"][data-export-format="csv"]',
        "compounding": 'a[data-export-name="compounding"][data-export-format="csv"]',
        "timeline": 'a[data-export-name="timeline"][data-export-format="csv"]',
    }
    parsed = {}
    for name, selector in links.items():
        with page.expect_download() as info:
            page.click(selector)
        path = info.value.path()
        assert info.value.suggested_filename == f"{name}.csv"
        parsed[name] = list(csv.reader(Path(path).read_text(encoding="utf-8").splitlines()))
    assert parsed["runs"][0][:3] == ["run_id", "group", "task"] and len(parsed["runs"]) == 7
    assert parsed["compounding"][0] == ["group", "x", "median", "p25", "p75", "n"]
    assert parsed["timeline"][0][:5] == ["run_id", "group", "task", "lane", "kind"]
    assert all(float(row[6]) >= float(row[5]) for row in parsed["timeline"][1:])
    watch.check()
    page.close()


def test_phone_width_does_not_overflow(browser: Browser, quick_report: Path) -> None:
    """At 390 px the page, an open run and an open diff fit the width."""
    watch = Watch()
    page = watch.open(browser, quick_report.as_uri(), width=390)
    anchors = [
        "",
        page.locator("section.diff-view").first.get_attribute("id") or "",
        (page.locator('figure[data-chart="timeline"]').get_attribute("data-gantt") or "").split()[
            0
        ],
    ]
    for anchor in anchors:
        page.goto(f"{quick_report.as_uri()}#{anchor}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (anchor, width)
    watch.check()
    page.close()


def test_without_scripts_the_static_charts_remain(browser: Browser, quick_report: Path) -> None:
    """Scripts off: every chart is still drawn, and no control of the script appears."""
    watch = Watch()
    page = watch.open(browser, quick_report.as_uri(), java_script_enabled=False)
    _assert_charts_drawn(page, minimum=10)
    assert page.locator("#toolbar *").count() == 0 and page.locator(".exports").count() == 0
    watch.check()
    page.close()


def test_imported_traces_render_with_estimated_marks(
    runs_root: Path, browser: Browser, tmp_path: Path
) -> None:
    """Own and imported runs in one report: all charts drawn, estimated values marked."""
    report = write_report(
        [runs_root / "quick", runs_root / "imported"], tmp_path / "mixed.html"
    ).path
    watch = Watch()
    page = watch.open(browser, report.as_uri())
    _assert_charts_drawn(page, minimum=10)
    assert page.locator("table.headline .est").count() >= 1
    assert page.locator('#time rect[fill="url(#hatch)"]').count() > 0
    assert page.locator('section.run rect[fill="url(#hatch)"]').count() > 0
    assert page.locator("polyline[stroke-dasharray]").count() > 0
    watch.check()
    page.close()


def test_dashboard_two_clicks_from_the_index_to_a_diff(
    runs_root: Path, known_pair: Path, browser: Browser, tmp_path: Path
) -> None:
    """Index -> a task -> a pair of its runs: the step-aligned diff; compare still works."""
    root = tmp_path / "root"
    shutil.copytree(runs_root / "quick", root / "quick")
    shutil.copytree(known_pair, root / "known")
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url)
        assert page.locator("a.report").all_inner_texts() == ["known", "quick"]
        page.click("a.task >> text=coding/known")
        page.click("a.pair >> nth=0")
        assert page.locator("table.diff").is_visible()
        assert "only in B" in page.inner_text("table.diff")
        page.goto(server.url)
        page.click("a.task >> text=coding/nbugs-3")
        page.click("a.pair >> nth=0")
        assert page.locator("table.diff tbody tr").count() >= 3
        page.click("p a >> text=all runs of coding/nbugs-3")
        page.click("td.id a >> nth=0")
        assert page.locator(".transcript .tstep").count() >= 3
        page.goto(server.url)
        page.click("a.report >> text=quick")
        _assert_charts_drawn(page, minimum=10)
        watch.check()
        page.close()


def test_dashboard_pickers_work_with_their_defaults(
    runs_root: Path, known_pair: Path, browser: Browser, tmp_path: Path
) -> None:
    """Experiments and runs have their own pickers, whose defaults differ: comparing and
    diffing straight from the index, without choosing, open a report and a diff."""
    root = tmp_path / "root"
    shutil.copytree(runs_root / "quick", root / "quick")
    shutil.copytree(known_pair, root / "known")
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url)
        picks = page.locator("#pick-a option").all_inner_texts()
        assert picks[0] == "known" and "quick" in picks and "quick · slow-80" in picks
        assert page.input_value("#pick-a") != page.input_value("#pick-b")
        assert all("·" in t for t in page.locator("#diff-a option").all_inner_texts())
        a, b = page.input_value("#diff-a"), page.input_value("#diff-b")
        assert a != b
        with page.expect_navigation():
            page.click("#compare")
        assert "/compare?" in page.url and page.locator("table.sxs tbody tr").count() > 0
        page.goto(server.url)
        with page.expect_navigation():
            page.click("#diff")
        assert "/diff?" in page.url and page.locator("table.diff").is_visible()
        assert page.locator("#filter-count").count() == 0  # no unrelated "0 of 0 runs" bar
        watch.check()
        page.close()


def test_dashboard_pages_fit_390_px(known_pair: Path, browser: Browser, tmp_path: Path) -> None:
    """At 390 px no dashboard page is wider than the screen, even with a long experiment
    name in the pickers (wide tables scroll inside their own box)."""
    root = tmp_path / "root"
    shutil.copytree(known_pair, root / "known")
    shutil.copytree(known_pair, root / ("a-very-long-experiment-directory-name-" * 3))
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url, width=390)
        for path in (
            "",
            "report/known",
            "run/known/traces/known-a.jsonl",
            "task?name=coding%2Fknown",
        ):
            page.goto(server.url + path)
            width = page.evaluate("document.scrollingElement.scrollWidth")
            assert width <= 390, (path, width)
        watch.check()
        page.close()


def test_dashboard_refreshes_a_running_experiment(
    known_pair: Path, browser: Browser, tmp_path: Path
) -> None:
    """A trace appearing, then finishing, under an open report reloads it with the run."""
    root = tmp_path / "root"
    shutil.copytree(known_pair, root / "known")
    source = (root / "known/traces/known-b.jsonl").read_text(encoding="utf-8").splitlines()
    lines = [line.replace('"known-b"', '"known-c"') for line in source]
    with DashboardServer(root) as server:
        watch = Watch(allowed=("data:", "blob:", server.url))
        page = watch.open(browser, server.url + "report/known")
        assert "2 runs" in page.inner_text(".sub")
        growing = root / "known/traces/known-c.jsonl"
        with page.expect_event("load", timeout=30_000):
            growing.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
        page.locator("#live-badge", has_text="running").wait_for(timeout=10_000)
        with page.expect_event("load", timeout=30_000):
            growing.write_text("\n".join(lines) + "\n", encoding="utf-8")
        assert "3 runs" in page.inner_text(".sub")
        watch.check()
        page.close()


def test_a_change_before_the_first_poll_still_reloads(
    known_pair: Path, browser: Browser, tmp_path: Path
) -> None:
    """A trace written after the page was built but before its first live poll answered
    reloads it (the page starts from the signature it was built from, not the first poll's)."""
    root = tmp_path / "root"
    shutil.copytree(known_pair, root / "known")
    with DashboardServer(root) as server:
        held: list[Route] = []
        page = browser.new_page()
        page.route(  # the first poll waits for the test; later ones go through
            "**/api/state*", lambda route: route.continue_() if held else held.append(route)
        )
        page.goto(server.url + "report/known")
        assert "2 runs" in page.inner_text(".sub")
        while not held:
            page.wait_for_timeout(20)
        source = (root / "known/traces/known-b.jsonl").read_text(encoding="utf-8")
        copy = source.replace('"known-b"', '"known-c"')
        (root / "known/traces/known-c.jsonl").write_text(copy, encoding="utf-8")
        with page.expect_event("load", timeout=15_000):
            held[0].continue_()
        assert "3 runs" in page.inner_text(".sub")
        page.close()


CONTROLS = """() => [...document.querySelectorAll(
    'a[href], button, select, input, textarea, summary, [role=button], [tabindex]')]
  .filter(el => el.offsetParent !== null && !el.disabled)
  .map(el => {
    el.focus();
    return {tag: el.tagName, text: (el.textContent || el.name || '').trim().slice(0, 40),
            tab: el.tabIndex, focused: document.activeElement === el};
  })"""
"""Every visible control, focused by script: is it keyboard-focusable (tabIndex >= 0)
and does it take the focus?"""


def _screen(page: Page, width: int, shot: Path) -> list[dict[str, object]]:
    """Screenshot the page at `width`; assert it fits; return its controls' focus check."""
    page.set_viewport_size({"width": width, "height": 900})
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 5_000  # a drawn page, not a blank one
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    return list(page.evaluate(CONTROLS))


@pytest.mark.parametrize("width", [1280, 390])
def test_report_and_dashboard_screens_fit_and_every_control_takes_focus(
    known_pair: Path, browser: Browser, quick_report: Path, tmp_path: Path, width: int
) -> None:
    """Screenshots of the report and of the dashboard's index, experiment and run pages at
    1280 and 390 px: nothing overflows, no console error, and every visible control is
    reachable by keyboard (tabIndex >= 0) and takes the focus."""
    shutil.copytree(known_pair, tmp_path / "root" / "known")
    watch = Watch()
    page = watch.open(browser, quick_report.as_uri(), width=width)
    controls = _screen(page, width, tmp_path / f"report-{width}.png")
    page.close()
    watch.check()
    with DashboardServer(tmp_path / "root") as server:
        served = Watch(allowed=("data:", "blob:", server.url))
        for path in ("", "report/known", "run/known/traces/known-a.jsonl"):
            page = served.open(browser, server.url + path, width=width)
            name = path.replace("/", "-") or "index"
            controls += _screen(page, width, tmp_path / f"dashboard-{name}-{width}.png")
            page.close()
        served.check()
    assert len(controls) > 20
    unreachable = [c for c in controls if int(str(c["tab"])) < 0 or not c["focused"]]
    assert unreachable == []
