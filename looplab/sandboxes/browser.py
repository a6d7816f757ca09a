"""`BrowserSession`: one headless Chromium page driven by Playwright, on this host.

The browser runs on the host, not in the sandbox: the sandbox image has no Chromium and
no Playwright, and a host browser is shared by both sandbox kinds. It reaches a web app
that runs inside the sandbox on a loopback port: a local sandbox with network `bridge`
shares the host's network (the app listens on 127.0.0.1 directly); a docker sandbox
publishes the app's port on 127.0.0.1 only (`DockerSandbox.published_port`), which adds
the engine's port proxy to every request (measured: see tools/README.md).

Which Chromium and with which flags: `looplab.chromium` (`BrowserConfig.executable`
first when set). Launching costs ~0.4-0.8 s and is setup, not task time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from looplab.chromium import CHROMIUM_ARGS, require_chromium
from looplab.config import StrictModel
from looplab.errors import PrerequisiteError

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

__all__ = ["BrowserConfig", "BrowserSession"]


class BrowserConfig(StrictModel):
    """How the computer-use agent's browser is launched."""

    executable: str | None = None
    """Chromium binary; None: the first found by `looplab.chromium.find_chromium`."""
    args: list[str] = Field(default_factory=lambda: list(CHROMIUM_ARGS))
    """Command-line flags of the browser."""
    headless: bool = True
    """Run without a window."""
    viewport_width: int = Field(default=1280, ge=200)
    """Page width in CSS pixels (screenshots have this size)."""
    viewport_height: int = Field(default=800, ge=200)
    """Page height in CSS pixels."""
    action_timeout_s: float = Field(default=5.0, gt=0)
    """Longest a click, type, press or select may wait for its element."""
    navigation_timeout_s: float = Field(default=15.0, gt=0)
    """Longest a page load may take."""


class BrowserSession:
    """A started browser with one page; use `BrowserSession.start` and `close`.

    Attributes:
        page: the page every browser tool acts on.
        executable: the Chromium binary in use.
        config: how it was launched.
    """

    def __init__(
        self,
        playwright: Playwright,
        browser: Browser,
        context: BrowserContext,
        page: Page,
        executable: str,
        config: BrowserConfig,
    ) -> None:
        """Use `BrowserSession.start`; this only stores what it made."""
        self._playwright = playwright
        self._browser = browser
        self._context = context
        self.page = page
        self.executable = executable
        self.config = config
        self._closed = False

    @classmethod
    async def start(cls, config: BrowserConfig | None = None) -> BrowserSession:
        """Launch Chromium and open a blank page.

        Raises:
            PrerequisiteError: no Chromium, or the playwright package is missing.
        """
        config = config or BrowserConfig()
        try:
            from playwright.async_api import async_playwright
        except ImportError as exc:  # an optional runtime piece: say how to get it
            raise PrerequisiteError(
                "the computer-use tools need the playwright package", fix="pip install playwright"
            ) from exc
        playwright = await async_playwright().start()
        try:
            executable = require_chromium(config.executable, playwright.chromium.executable_path)
            browser = await playwright.chromium.launch(
                executable_path=executable, args=config.args, headless=config.headless
            )
            viewport: Any = {"width": config.viewport_width, "height": config.viewport_height}
            context = await browser.new_context(viewport=viewport)
            context.set_default_timeout(config.action_timeout_s * 1000)
            context.set_default_navigation_timeout(config.navigation_timeout_s * 1000)
            page = await context.new_page()
        except BaseException:
            await playwright.stop()
            raise
        return cls(playwright, browser, context, page, executable, config)

    async def page_text(self, url: str) -> str:
        """Open `url` and return the rendered page's visible text (the coding agent's browse)."""
        await self.page.goto(url, wait_until="load")
        text: str = await self.page.locator("body").inner_text()
        return text

    async def close(self) -> None:
        """Close the browser and stop Playwright; calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._context.close()
            await self._browser.close()
        finally:
            await self._playwright.stop()
