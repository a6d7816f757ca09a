"""PNG screenshots of reports in a real Chromium (Playwright), for docs and tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from looplab.errors import PrerequisiteError

__all__ = ["CHROMIUM_ARGS", "find_chromium", "screenshot"]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-sync",
]
"""Flags for a quiet, offline, container-friendly Chromium."""


def find_chromium() -> str | None:
    """A Chromium binary: $LOOPLAB_CHROMIUM, `chromium` on PATH, /usr/bin/chromium; else None
    (Playwright's own browser is then used, if installed)."""
    for candidate in (
        os.environ.get("LOOPLAB_CHROMIUM"),
        shutil.which("chromium"),
        "/usr/bin/chromium",
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def screenshot(
    page_path: Path, output: Path, *, width: int = 1280, height: int = 2000, full: bool = False
) -> Path:
    """Open `page_path` in headless Chromium and save a PNG of its top (or all of it).

    Raises:
        PrerequisiteError: no usable Chromium.
    """
    from playwright.sync_api import Error, sync_playwright

    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=find_chromium(), args=CHROMIUM_ARGS
            )
            try:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(page_path.resolve().as_uri())
                page.screenshot(path=str(output), full_page=full)
            finally:
                browser.close()
    except Error as exc:
        raise PrerequisiteError(
            f"cannot run Chromium for the screenshot: {str(exc).splitlines()[0]}",
            fix="apt-get install -y chromium (or set LOOPLAB_CHROMIUM=/path/to/chrome)",
        ) from None
    return output
