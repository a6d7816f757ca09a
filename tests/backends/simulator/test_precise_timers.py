"""Servers wait on a loop with microsecond timers, and release no token before it is due."""

from __future__ import annotations

import asyncio
import socket
import statistics
import time

import httpx2
import openai
import pytest

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.serving.timers import PreciseSelector, has_precise_timers, precise_loop

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)


async def _lateness_s(delay: float, times: int) -> list[float]:
    out = []
    for _ in range(times):
        due = time.monotonic() + delay
        await asyncio.sleep(delay)
        out.append(time.monotonic() - due)
    return out


async def _on_precise_loop() -> bool:
    return has_precise_timers()


def test_a_ready_descriptor_ends_a_long_wait_at_once() -> None:
    """An event on a registered socket ends a 5 s wait at once, with that event."""
    selector = PreciseSelector()
    left, right = socket.socketpair()
    try:
        selector.register(left, 1)
        right.send(b"x")
        start = time.monotonic()
        ready = selector.select(5.0)
        assert time.monotonic() - start < 2.0
        assert [key.fileobj for key, _ in ready] == [left]
    finally:
        selector.close()
        left.close()
        right.close()


def test_timers_are_finer_than_the_stock_loops_milliseconds() -> None:
    """A 3.3 ms sleep: the stock loop rounds epoll's timeout up to 4 ms (>= 0.7 ms late),
    the precise loop ends nearer its due time, never before it."""
    stock = asyncio.run(_lateness_s(0.0033, 15))
    with asyncio.Runner(loop_factory=precise_loop) as runner:
        precise = runner.run(_lateness_s(0.0033, 15))
        assert runner.run(_on_precise_loop())
    assert min(precise) > -1e-6  # the loop's clock resolution
    assert statistics.median(precise) < statistics.median(stock)
    assert not asyncio.run(_on_precise_loop())


def test_no_token_is_released_before_its_due_time() -> None:
    """Every slot of a real stream (stock openai client, real loopback HTTP) goes out at or
    after its intended time: no lead, no early release to catch up."""
    profile = resolve_profile(
        "fast-750", ["ttft_s=0.05", "decode_tps=750", "prefill_tps=null", "output_tokens=60"]
    )

    async def main() -> list[list[float]]:
        async with SimulatorServer(profile) as server:
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
            rows = []
            for turn in range(3):
                raw = await client.chat.completions.with_raw_response.create(
                    model="looplab-lorem",
                    messages=[{"role": "user", "content": f"Write a long answer {turn}."}],
                    stream=True,
                    max_tokens=60,
                )
                async for _ in raw.parse():
                    pass
                request_id = raw.headers["x-looplab-request-id"]
                async with httpx2.AsyncClient() as http:
                    answer = await http.get(
                        f"{server.base_url}/looplab/requests/{request_id}/timing"
                    )
                rows += answer.json()["releases"]
            await client.close()
            return rows

    releases = asyncio.run(main())
    assert len(releases) >= 3 * 20  # 60 slots each, a few per chunk at most
    early = [(i, a) for _, _, i, a in releases if a < i - 1e-6]  # records round to 0.1 us
    assert early == []
