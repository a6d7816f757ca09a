"""`looplab bench browser`: what a trace screenshot costs next to what a browser action
already does (its accessibility snapshot), on a text-and-form page filling the viewport,
and what each observation kind the model can be shown costs to capture (`observation
aria | screenshot | marks | dom`: size is the PNG's bytes, or the text's).

Each capture runs `reps` times in one real Chromium (`BrowserSession`); the table gives
p50 / p95 milliseconds and the median image size, so `agent.trace_screenshots`' cost per
action (inside the action's timed span) is printed, not assumed.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from looplab.stats.order import quantile
from looplab.tools.browser import TRACE_JPEG_QUALITY, page_snapshot, trace_screenshot
from looplab.tools.observation import OBSERVERS, observe_page

__all__ = ["CaptureRow", "run_browser_bench"]

_ROWS = "".join(
    f"<tr><td>order {i}</td><td>{'lorem ipsum dolor ' * 3}</td><td><input value='{i}'></td></tr>"
    for i in range(40)
)
PAGE = f"<html><body><h1>Orders</h1><form><table>{_ROWS}</table></form></body></html>"
"""A page of text, a table and inputs, taller than the viewport."""


@dataclass(frozen=True)
class CaptureRow:
    """One kind of capture: its latency and output size."""

    name: str
    p50_ms: float
    p95_ms: float
    bytes_p50: int


async def _time(name: str, reps: int, capture: Callable[[], Awaitable[Any]]) -> CaptureRow:
    times: list[float] = []
    sizes: list[int] = []
    for _ in range(reps):
        started = time.perf_counter()
        out = await capture()
        times.append((time.perf_counter() - started) * 1000)
        sizes.append(len(out))
    return CaptureRow(
        name, quantile(times, 0.5), quantile(times, 0.95), int(statistics.median(sizes))
    )


def _observed(page: Any, kind: str) -> Callable[[], Awaitable[bytes]]:
    """One observation of `kind`; its size is the image's bytes, or the text's."""

    async def capture() -> bytes:
        seen = await observe_page(page, kind)
        return seen.image or seen.text.encode()

    return capture


async def _bench(reps: int) -> list[CaptureRow]:
    from looplab.sandboxes.browser import BrowserSession

    browser = await BrowserSession.start()
    try:
        page = browser.page
        await page.set_content(PAGE)
        return [
            await _time("aria snapshot (every action)", reps, lambda: page_snapshot(page)),
            await _time(
                f"trace screenshot, JPEG q{TRACE_JPEG_QUALITY}",
                reps,
                lambda: trace_screenshot(page),
            ),
            await _time("screenshot tool, PNG", reps, lambda: page.screenshot(type="png")),
            *[
                await _time(f"observation {kind}", reps, _observed(page, kind))
                for kind in OBSERVERS
            ],
        ]
    finally:
        await browser.close()


def run_browser_bench(reps: int) -> list[CaptureRow]:
    """Time the captures `reps` times each in one Chromium (needs the browser tier)."""
    return asyncio.run(_bench(reps))
