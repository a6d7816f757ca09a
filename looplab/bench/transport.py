"""`looplab bench transport`: per-round-trip overhead of each transport, on loopback.

A `looplab serve` process answers every call at once (no TTFT, no prefill, a one-token
reply at a very high rate, all per-call overheads 0), so what the client measures is the
transport and the two programs' own work. Through the real `openai` client, per round trip
(client sends a Responses request -> client has parsed `response.completed`):

| transport        | how                                                              |
|------------------|------------------------------------------------------------------|
| `http-new`       | `responses.create(stream=True)`, a new TCP connection each call  |
|                  | (httpx pool with no keep-alive)                                  |
| `http-keepalive` | the same on one kept-alive connection                            |
| `websocket`      | `responses.connect()` once, one `response.create` per call       |

The rounds of the transports are interleaved (a, b, c, a, b, c, ...) so a load spike on
the shared machine hits all of them alike. Medians and p90 in ms, ratio to keep-alive.

`projected_ms(rtt_s)` adds the wire round trips a call costs at a network RTT (loopback
has none): a new HTTPS connection pays TCP + TLS 1.3 + the request (3), a kept-alive
connection or a WebSocket the request only (1). That is an arithmetic projection, not a
measurement.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

import httpx2
import openai

from looplab.bench.loadgen import ServerProcess
from looplab.errors import BackendError
from looplab.stats.order import quantile

__all__ = ["TRANSPORT_WIRE_TRIPS", "TransportCell", "run_transport_bench"]

TRANSPORT_WIRE_TRIPS: dict[str, int] = {"http-new": 3, "http-keepalive": 1, "websocket": 1}
"""Network round trips per call on a real network: TCP + TLS 1.3 + request for a new
HTTPS connection; the request alone on an open connection."""

INSTANT = [
    "decode_tps=1000000",
    "ttft_s=0",
    "prefill_tps=null",
    "output_tokens=1",
    "reasoning_tokens=0",
    "network_rtt_s=0",
    "request_overhead_s=0",
    "websocket_overhead_s=0",
]
"""Profile overrides that make the simulated model answer at once."""

_MODEL = "looplab-lorem"


@dataclass
class TransportCell:
    """One transport's round trips; times in ms."""

    transport: str
    rounds: int
    median_ms: float
    p90_ms: float
    ratio_to_keepalive: float = 1.0

    def projected_ms(self, rtt_s: float) -> float:
        """Median per call at a network RTT of `rtt_s` (see the module doc)."""
        return self.median_ms + TRANSPORT_WIRE_TRIPS[self.transport] * rtt_s * 1000

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return asdict(self)


RoundTrip = Callable[[], Awaitable[None]]


async def _http_round(client: openai.AsyncOpenAI) -> None:
    stream = await client.responses.create(model=_MODEL, input="ping", stream=True)
    async for event in stream:
        if event.type == "response.completed":
            break
    await stream.close()


async def _ws_round(connection: Any) -> None:
    await connection.response.create(model=_MODEL, input="ping")
    async for event in connection:
        if event.type == "response.completed":
            return
        if event.type == "error":
            raise BackendError(f"bench server refused a WebSocket turn: {event}")
    raise BackendError("bench server closed the WebSocket mid-turn")


async def _measure(base_url: str, rounds: int, warmup: int) -> dict[str, list[float]]:
    """Interleaved round-trip times (s) of each transport against `base_url`."""
    fresh = httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0))
    new_conn = openai.AsyncOpenAI(
        base_url=base_url, api_key="k", http_client=fresh, default_headers={"connection": "close"}
    )
    kept = openai.AsyncOpenAI(base_url=base_url, api_key="k")
    times: dict[str, list[float]] = {name: [] for name in TRANSPORT_WIRE_TRIPS}
    try:
        async with kept.responses.connect() as connection:
            trips: dict[str, RoundTrip] = {
                "http-new": lambda: _http_round(new_conn),
                "http-keepalive": lambda: _http_round(kept),
                "websocket": lambda: _ws_round(connection),
            }
            for index in range(warmup + rounds):
                for name, trip in trips.items():
                    started = time.perf_counter()
                    await trip()
                    if index >= warmup:
                        times[name].append(time.perf_counter() - started)
    finally:
        await new_conn.close()
        await kept.close()
    return times


def run_transport_bench(
    rounds: int = 200, warmup: int = 20, server_args: list[str] | None = None
) -> list[TransportCell]:
    """Measure each transport's round trip against a fresh `looplab serve` process.

    Args:
        rounds: measured calls per transport.
        warmup: calls per transport made first and not counted.
        server_args: extra `looplab serve` arguments (default: the `INSTANT` profile).

    Raises:
        BackendError: the server did not start or refused a call.
    """
    args = server_args or [arg for item in INSTANT for arg in ("--profile-set", item)]
    with ServerProcess(["serve", "--profile", "fast-750", *args]) as server:
        times = asyncio.run(_measure(server.base_url, rounds, warmup))
    cells = [
        TransportCell(
            transport=name,
            rounds=len(values),
            median_ms=statistics.median(values) * 1000,
            p90_ms=quantile(values, 0.9) * 1000,
        )
        for name, values in times.items()
    ]
    keepalive = next(c for c in cells if c.transport == "http-keepalive").median_ms
    for cell in cells:
        cell.ratio_to_keepalive = cell.median_ms / keepalive
    return cells
