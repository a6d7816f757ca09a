"""A request is timed from its arrival at the server, not from when its handler runs."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import openai
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from looplab.backends.proxy.app import create_proxy_app
from looplab.backends.proxy.core import Proxy
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.server import create_app
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)

TTFT_S = 0.5
HELD_S = 0.3
PROFILE = [f"ttft_s={TTFT_S}", "decode_tps=2000", "prefill_tps=null", "output_tokens=20"]


class _HeldHandler:
    """An ASGI app in front of ours that holds every HTTP request `HELD_S` before passing
    it on: what a busy event loop (other streams' pacing, routing, a slow middleware) does
    to a request whose bytes the server has already read."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            await asyncio.sleep(HELD_S)
        await self.app(scope, receive, send)


def _server(path: str, upstream: SimulatorServer) -> tuple[AppServer, Any]:
    """The `serve` or `proxy` app behind `_HeldHandler`, and what records its requests."""
    if path == "serve":
        simulator = Simulator(resolve_profile("fast-750", PROFILE))
        app = create_app(simulator)
        app.add_middleware(_HeldHandler)
        return AppServer(app), simulator
    proxy = Proxy(resolve_profile("slow-80", PROFILE), upstream=upstream.base_url)
    app = create_proxy_app(proxy)
    app.add_middleware(_HeldHandler)
    return AppServer(app, lifespan="on"), proxy


async def _first_content_s(client: openai.AsyncOpenAI) -> tuple[float, float]:
    """(call time, first content chunk time) of one streamed request, as benchmarks time it."""
    start = time.perf_counter()
    stream = await client.chat.completions.create(
        model="looplab-lorem",
        messages=[{"role": "user", "content": "Write a long answer about latency."}],
        stream=True,
        stream_options={"include_usage": True},
        max_tokens=100,
    )
    first = None
    async for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
    assert first is not None
    return start, first


@pytest.mark.parametrize("path", ["serve", "proxy"])
async def test_a_held_handler_does_not_delay_the_first_token(path: str) -> None:
    """Through the stock openai client, TTFT is the profile's even when the handler starts
    `HELD_S` after the request arrived: the schedule starts at arrival (before the fix it
    started in the handler, and the client saw TTFT + HELD_S)."""
    fast = resolve_profile("fast-750", ["ttft_s=0", "decode_tps=20000", "prefill_tps=null"])
    with SimulatorServer(fast) as upstream:
        server, recorder = _server(path, upstream)
        with server:
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
            await _first_content_s(client)  # connection and first-use costs
            start, first = await _first_content_s(client)
            await client.close()
    ttft = first - start
    assert ttft >= TTFT_S
    # held requests were late by HELD_S (0.3 s); half of it is room for a loaded machine
    assert ttft < TTFT_S + HELD_S / 2, ttft
    # the server's own zero point is at most the client's hand-off plus loopback, not HELD_S
    received = (
        next(reversed(recorder.timings.values()))["received_clock_s"]
        if path == "serve"
        else recorder.history.calls[-1].received
    )
    assert start <= received < start + HELD_S / 2
