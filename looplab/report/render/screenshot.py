"""PNG screenshots of reports in a real Chromium (Playwright), for docs and tests.

Targets (`SCREENSHOT_TARGETS`): `top` (the page's top, headline first), `diff` (the
featured task's step-aligned diff, else the first one), `transcript` (the featured pair's
last run with a transcript: its timeline, where the time goes, and the transcript's first
steps). A section is photographed from its top, `height` pixels down.
"""

from __future__ import annotations

from pathlib import Path

from looplab.chromium import CHROMIUM_ARGS, INSTALL_FIX, require_chromium
from looplab.errors import PrerequisiteError

__all__ = ["SCREENSHOT_TARGETS", "screenshot"]

SCREENSHOT_TARGETS: dict[str, str] = {
    "top": "",
    "diff": (
        "((document.querySelector('#timeline a[href^=\"#diff-\"]') || {}).hash || '#'"
        " + ((document.querySelector('section.diff-view') || {}).id || '')).slice(1)"
    ),
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
    from playwright.sync_api import Error, FloatRect, sync_playwright

    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as playwright:
            executable = require_chromium(playwright_path=playwright.chromium.executable_path)
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(page_path.resolve().as_uri())
                anchor = str(page.evaluate(SCREENSHOT_TARGETS[at])) if at != "top" else ""
                box = None
                if anchor:
                    page.goto(f"{page_path.resolve().as_uri()}#{anchor}")
                    box = page.locator(f"[id='{anchor}']").bounding_box()
                if box is not None and not full:
                    top = box["y"] + page.evaluate("window.scrollY") - 8
                    clip = FloatRect(x=0, y=top, width=width, height=height)
                    page.screenshot(path=str(output), full_page=True, clip=clip)
                else:
                    page.screenshot(path=str(output), full_page=full)
            finally:
                browser.close()
    except Error as exc:
        raise PrerequisiteError(
            f"cannot run Chromium for the screenshot: {str(exc).splitlines()[0]}",
            fix=INSTALL_FIX,
        ) from None
    return output
