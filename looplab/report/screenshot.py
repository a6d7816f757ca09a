"""PNG screenshots of reports in a real Chromium (Playwright), for docs and tests.

Targets (`SCREENSHOT_TARGETS`): `top` (the page's top, headline first), `diff` (the
first step-aligned diff), `transcript` (the featured pair's last run with a transcript:
its timeline, where the time goes, and the transcript's first steps).
"""

from __future__ import annotations

from pathlib import Path

from looplab.chromium import CHROMIUM_ARGS, INSTALL_FIX, require_chromium
from looplab.errors import PrerequisiteError

__all__ = ["SCREENSHOT_TARGETS", "screenshot"]

SCREENSHOT_TARGETS: dict[str, str] = {
    "top": "",
    "diff": "(document.querySelector('section.diff-view') || {}).id || ''",
    "transcript": (
        "(() => { const f = document.querySelector('figure[data-chart=timeline]');"
        " const ids = f ? f.dataset.gantt.split(' ').reverse() : [];"
        " return ids.find(id => document.getElementById(id)?.querySelector('.transcript'))"
        " || ''; })()"
    ),
}
"""Target -> a script giving the id of the section to open (empty: the page's top)."""


def screenshot(
    page_path: Path,
    output: Path,
    *,
    width: int = 1280,
    height: int = 2000,
    full: bool = False,
    at: str = "top",
) -> Path:
    """Open `page_path` in headless Chromium and save a PNG of `at` (`SCREENSHOT_TARGETS`),
    `height` pixels tall (or the whole page with `full`).

    Raises:
        PrerequisiteError: no usable Chromium (`looplab.chromium` says where it looks).
    """
    from playwright.sync_api import Error, sync_playwright

    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as playwright:
            executable = require_chromium(playwright_path=playwright.chromium.executable_path)
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(page_path.resolve().as_uri())
                anchor = str(page.evaluate(SCREENSHOT_TARGETS[at])) if at != "top" else ""
                if anchor:
                    page.goto(f"{page_path.resolve().as_uri()}#{anchor}")
                    page.wait_for_timeout(200)
                page.screenshot(path=str(output), full_page=full)
            finally:
                browser.close()
    except Error as exc:
        raise PrerequisiteError(
            f"cannot run Chromium for the screenshot: {str(exc).splitlines()[0]}",
            fix=INSTALL_FIX,
        ) from None
    return output
