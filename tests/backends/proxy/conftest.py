"""Fixtures: a fast simulator upstream, proxies in front of it, a header-capturing upstream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer

UPSTREAM_FAST = ["decode_tps=20000", "ttft_s=0", "prefill_tps=null", "output_tokens=120"]
"""A simulator upstream far faster than any profile the tests pace to."""


@pytest.fixture
def upstream() -> Iterator[SimulatorServer]:
    """A simulator at 20,000 tok/s with no TTFT, 120-token replies."""
    with SimulatorServer(resolve_profile("fast-750", UPSTREAM_FAST)) as server:
        yield server


class CapturingUpstream(AppServer):
    """An OpenAI-shaped upstream that records the headers of every request it gets."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

        async def chat(request: Request) -> Response:
            self.seen.append(dict(request.headers))
            body = json.loads(await request.body())
            if body.get("stream"):
                return StreamingResponse(_sse(), media_type="text/event-stream")
            return JSONResponse(_completion())

        super().__init__(Starlette(routes=[Route("/v1/chat/completions", chat,
                                                 methods=["POST"])]))  # fmt: skip


def _completion() -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }  # fmt: skip


async def _sse() -> Any:
    head = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    for delta in ({"role": "assistant", "content": ""}, {"content": "ok then"}):
        chunk = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        yield f"data: {json.dumps(chunk)}\n\n".encode()
    usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    yield f"data: {json.dumps({**head, 'choices': [], 'usage': usage})}\n\n".encode()
    yield b"data: [DONE]\n\n"


@pytest.fixture
def capturing_upstream() -> Iterator[CapturingUpstream]:
    """An upstream that records request headers (for the credentials tests)."""
    with CapturingUpstream() as server:
        yield server
