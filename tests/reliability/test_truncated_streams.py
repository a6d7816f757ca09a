"""A stream the upstream closes before its end is an error, never a short answer (issue 47,
finding 2).

An upstream on loopback streams three content chunks and then closes cleanly (no
finish_reason, no `[DONE]`), or closes in the middle of a fourth event's JSON. The real
openai client, through a real `ProxyServer --record`, must raise (an in-band SSE error
naming the truncation) after the three tokens; the recording marks the exchange
`truncated`, and replaying it raises the same way. A whole stream still ends cleanly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.proxy.recordings import read_exchange, read_index
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer

pytestmark = [pytest.mark.reliability]

PROFILE = resolve_profile("fast-750", ["decode_tps=100000", "ttft_s=0", "prefill_tps=null"])


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    data = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [choice]}  # fmt: skip
    return f"data: {json.dumps(data)}\n\n".encode()


def _app() -> Starlette:
    """Three chunks, then: `whole` ends properly, `clean` closes, `midline` cuts a JSON line."""

    async def chat(request: Request) -> Response:
        model = json.loads(await request.body())["model"]

        async def stream() -> Any:
            for word in ("one ", "two ", "three "):
                yield _chunk({"content": word})
            if model == "whole":
                yield _chunk({}, "stop")
                yield b"data: [DONE]\n\n"
            elif model == "midline":
                yield _chunk({"content": "four"})[:40]

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def _ask(base_url: str, model: str) -> tuple[str, str | None]:
    """(text received, the error's message or None) of one streamed call."""
    client = openai.OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, timeout=20)
    text = ""
    try:
        stream = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "count"}], stream=True
        )
        for chunk in stream:
            text += "".join(c.delta.content or "" for c in chunk.choices)
        return text, None
    except openai.APIError as exc:
        return text, str(exc.message)
    finally:
        client.close()


@pytest.mark.parametrize("model", ["clean", "midline"])
def test_a_truncated_stream_is_an_error_recorded_as_truncated(
    model: str, tmp_path: Path, campaign: Any
) -> None:
    """Cut after 3 chunks (cleanly, or mid-JSON): the openai client raises after the three
    tokens; the recording marks it `truncated`; its replay raises the same way."""
    store = tmp_path / "rec"
    with (
        AppServer(_app(), name="cut-upstream") as upstream,
        ProxyServer(PROFILE, upstream=upstream.base_url, record=store) as proxy,
    ):
        text, error = _ask(proxy.base_url, model)
        call = proxy.proxy.history.calls[-1]
    campaign.add("proxy truncated streams")
    campaign.add("proxy truncated streams passed silently", 0 if error else 1)
    assert text == "one two three "
    assert error is not None and "before its end" in error, error
    assert call.error and "truncated" in call.error
    entries, _ = read_index(store)
    assert entries[0].get("truncated") is True
    exchange = read_exchange(store, entries[0]["file"])
    assert "closed the stream" in exchange["truncated"]
    assert ("mid-event" in exchange["truncated"]) == (model == "midline")
    with ProxyServer(PROFILE, replay=store) as replay:
        replayed, again = _ask(replay.base_url, model)
    assert replayed == "one two three " and again is not None and "before its end" in again


def test_a_whole_stream_ends_cleanly(tmp_path: Path) -> None:
    """A stream with its finish_reason and `[DONE]` is no error and is not marked."""
    store = tmp_path / "rec"
    with (
        AppServer(_app(), name="whole-upstream") as upstream,
        ProxyServer(PROFILE, upstream=upstream.base_url, record=store) as proxy,
    ):
        text, error = _ask(proxy.base_url, "whole")
    assert (text, error) == ("one two three ", None)
    entries, _ = read_index(store)
    assert "truncated" not in entries[0]
    assert "truncated" not in read_exchange(store, entries[0]["file"])
