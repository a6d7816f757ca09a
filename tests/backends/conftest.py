"""Fixtures: the simulator on real loopback HTTP at test-friendly speeds."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import pytest

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

FAST = ["decode_tps=5000", "ttft_s=0", "prefill_tps=null", "output_tokens=40"]
"""Overrides that make a stream take milliseconds."""

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "run_tests",
            "description": "Run pytest in the sandbox.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "verbose": {"type": "boolean"}},
                "required": ["path", "verbose"],
            },
        },
    }
]


@pytest.fixture
def tools() -> list[dict[str, Any]]:
    """One function tool with a string and a boolean argument."""
    return TOOLS


@pytest.fixture
def fast_server() -> Iterator[SimulatorServer]:
    """A simulator at 5000 tok/s with no TTFT, on an ephemeral loopback port."""
    with SimulatorServer(resolve_profile("fast-750", FAST)) as server:
        yield server


@pytest.fixture
async def openai_client(fast_server: SimulatorServer) -> AsyncIterator[openai.AsyncOpenAI]:
    """The real openai client pointed at `fast_server`."""
    client = openai.AsyncOpenAI(base_url=fast_server.base_url, api_key="unused", max_retries=0)
    yield client
    await client.close()


@pytest.fixture
def fast_server_url(fast_server: SimulatorServer) -> str:
    """`fast_server`'s base URL."""
    return fast_server.base_url
