"""Waiting for a page's own data requests before it is described to the model.

A page that builds its content in JavaScript (fetch JSON, then build the DOM) is not
finished at its `load` event: its data requests are still in flight. Like Playwright MCP
and browser-use, the browser tools wait for them: `watch` counts the page's fetch/XHR
requests from the first action on, and `settle` (called before every snapshot) waits until
none is in flight, lets the page's callbacks run, and repeats while the callbacks start
new requests, for at most `SETTLE_TIMEOUT_S`. Until a page has made a data request this
costs nothing, so pages rendered on the server keep their timing; after that, one round
trip to the page (a request the last action started is reported by its end).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from playwright.async_api import Page, Request

__all__ = ["SETTLE_TIMEOUT_S", "settle", "watch"]

SETTLE_TIMEOUT_S = 10.0
"""Longest `settle` waits for data requests (a slow backend's page is then described as it is)."""
_DATA_TYPES = frozenset({"fetch", "xhr"})
_YIELD_TO_CALLBACKS = "() => new Promise(done => setTimeout(done, 0))"


class _InFlight:
    """The page's data requests that have not finished yet."""

    def __init__(self) -> None:
        self.requests: set[Request] = set()
        self.seen = False
        self.idle = asyncio.Event()
        self.idle.set()

    def started(self, request: Request) -> None:
        if request.resource_type in _DATA_TYPES:
            self.requests.add(request)
            self.seen = True
            self.idle.clear()

    def ended(self, request: Request) -> None:
        self.requests.discard(request)
        if not self.requests:
            self.idle.set()


_WATCHED: WeakKeyDictionary[Page, _InFlight] = WeakKeyDictionary()


def watch(page: Page) -> None:
    """Start counting `page`'s data requests (once per page; later calls do nothing)."""
    if page in _WATCHED:
        return
    flight = _InFlight()
    _WATCHED[page] = flight
    page.on("request", flight.started)
    page.on("requestfinished", flight.ended)
    page.on("requestfailed", flight.ended)


async def settle(page: Page, timeout_s: float = SETTLE_TIMEOUT_S) -> None:
    """Wait until `page` has no data request in flight and its callbacks have run."""
    flight = _WATCHED.get(page)
    if flight is None or not flight.seen:
        return
    deadline = time.perf_counter() + timeout_s
    # one round trip: a request the last action started has been reported by its end
    await page.evaluate(_YIELD_TO_CALLBACKS)
    while not flight.idle.is_set():
        left = deadline - time.perf_counter()
        if left <= 0:
            return
        try:
            await asyncio.wait_for(flight.idle.wait(), left)
        except TimeoutError:
            return
        # the response is in; its .then() callbacks build the DOM (and may fetch again)
        await page.evaluate(_YIELD_TO_CALLBACKS)
