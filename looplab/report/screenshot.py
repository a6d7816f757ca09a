"""PNG screenshots of reports in a real Chromium (Playwright), for docs and tests."""

from __future__ import annotations

from pathlib import Path

from looplab.chromium import CHROMIUM_ARGS, INSTALL_FIX, require_chromium
from looplab.errors import PrerequisiteError

__all__ = ["screenshot"]


def screenshot(
    page_path: Path, output: Path, *, width: int = 1280, height: int = 2000, full: bool = False
) -> Path:
    """Open `page_path` in headless Chromium and save a PNG of its top (or all of it).

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
                page.screenshot(path=str(output), full_page=full)
            finally:
                browser.close()
    except Error as exc:
        raise PrerequisiteError(
            f"cannot run Chromium for the screenshot: {str(exc).splitlines()[0]}",
            fix=INSTALL_FIX,
        ) from None
    return output
