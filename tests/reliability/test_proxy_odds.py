"""The proxy's odd cases (issue 47, finding 8): bodyless statuses, injected SSE fields,
hard links, unbounded replies and upstreams that trickle.

Recordings are made by hand (one chat exchange, its index line) and opened as `proxy
--replay` opens them; the size cap and the total deadline are tried against real
upstreams on loopback (one that streams 100 MB lazily, one that sends a byte every
0.2 s) through a real `ProxyServer` and the stock openai client.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.proxy.recordings import RecordingError
from looplab.backends.proxy.store import Recording, request_hash
from looplab.backends.proxy.upstream import RecordedSource, ReplyLimits
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer

pytestmark = [pytest.mark.reliability]

PROFILE = resolve_profile("fast-750", ["decode_tps=100000", "ttft_s=0", "prefill_tps=null"])
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
DIGEST = request_hash("chat", REQUEST)
CHUNK = json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                    "choices": [{"index": 0, "delta": {"content": "hello"},
                                 "finish_reason": "stop"}]})  # fmt: skip


def _recording(
    directory: Path, *, status: int = 200, event: str | None = None, link: Path | None = None
) -> Path:
    """A one-exchange streamed recording (its status and first event's name as given; its
    exchange file a hard link to `link` when given)."""
    name = f"exchanges/{DIGEST}.0.json"
    (directory / "exchanges").mkdir(parents=True)
    events = [{"t": 0.0, "event": event, "data": CHUNK}, {"event": None, "data": "[DONE]"}]
    exchange = {"format": "looplab-proxy-1", "endpoint": "chat", "hash": DIGEST,
                "request": dict(REQUEST), "stream": True, "status": status,
                "events": events}  # fmt: skip
    if link is not None:
        link.write_text(json.dumps(exchange), encoding="utf-8")
        os.link(link, directory / name)
    else:
        (directory / name).write_text(json.dumps(exchange), encoding="utf-8")
    line = {"step": 0, "hash": DIGEST, "endpoint": "chat", "stream": True, "file": name}
    (directory / "index.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    return directory


def _stream(base_url: str, model: str = "m") -> tuple[str, Exception | None]:
    """(text, the error raised or None) of one streamed call through the stock client."""
    client = openai.OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, timeout=30)
    text = ""
    try:
        for chunk in client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hi"}], stream=True
        ):
            text += "".join(c.delta.content or "" for c in chunk.choices)
        return text, None
    except openai.APIError as exc:
        return text, exc
    finally:
        client.close()


def test_a_recorded_204_is_a_clean_502(tmp_path: Path) -> None:
    """A recorded 204 (a status with no body) is answered 502 `upstream_no_reply`, not a
    204 with a body (an ASGI 'content longer than Content-Length' traceback)."""
    store = _recording(tmp_path / "rec", status=204)
    with ProxyServer(PROFILE, replay=store) as proxy:
        text, error = _stream(proxy.base_url)
    assert isinstance(error, openai.APIStatusError) and error.status_code == 502, error
    assert "upstream_no_reply" in str(error.body) and "HTTP 204" in error.message
    assert text == ""


def test_a_recorded_101_is_refused_at_start(tmp_path: Path) -> None:
    """A 1xx is not a final reply: the recording is refused naming its status field."""
    store = _recording(tmp_path / "rec", status=101)
    with pytest.raises(RecordingError, match="field 'status' must be a final HTTP status"):
        Recording(store)


@pytest.mark.parametrize("name", ["x\ndata: injected", "x\revent: other"])
def test_a_line_break_in_an_event_name_is_refused(tmp_path: Path, name: str) -> None:
    """CR or LF in a recorded event name would add a field line: refused, named."""
    store = _recording(tmp_path / "rec", event=name)
    with pytest.raises(RecordingError, match=r"events\[0\]\.event must be one line"):
        Recording(store)


async def test_a_line_break_in_recorded_data_stays_data() -> None:
    """A CR in recorded data starts another `data:` line, never a field of its own."""
    source = RecordedSource(200, [{"event": None, "data": "a\revent: evil\r\nb"}])
    lines = [line async for line, _ in source.lines()]
    assert lines == ["data: a", "data: event: evil", "data: b", ""]


def test_a_hard_link_in_a_recording_is_refused(tmp_path: Path) -> None:
    """An exchange file with a second name (outside the recording) is refused, named."""
    store = _recording(tmp_path / "rec", link=tmp_path / "outside.json")
    with pytest.raises(RecordingError, match="a hard link"):
        Recording(store)


def _big_app(sent: list[int]) -> Starlette:
    """100 MB lazily (64 KiB chunks, 1 ms apart, until the reader hangs up; `sent` counts
    the bytes): one JSON body, or one SSE stream of content chunks."""

    async def chat(request: Request) -> Response:
        stream = json.loads(await request.body()).get("stream")
        piece = (
            ('data: {"choices":[{"index":0,"delta":{"content":"' + "x" * 65400 + '"}}]}\n\n')
            if stream
            else " " * 65536
        ).encode()

        async def body() -> Any:
            if not stream:
                yield b'{"choices": []'
            for _ in range(1600):
                if await request.is_disconnected():
                    return
                sent[0] += len(piece)
                yield piece
                await asyncio.sleep(0.001)
            if not stream:
                yield b"}"

        kind = "text/event-stream" if stream else "application/json"
        return StreamingResponse(body(), media_type=kind)

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_reply_over_the_cap_is_cut(stream: bool) -> None:
    """A 100 MB reply with a 1 MiB cap: 502 `upstream_reply_too_large` (in-band for a
    stream), and the proxy stopped reading long before the end (bounded memory)."""
    sent = [0]
    with (
        AppServer(_big_app(sent), name="big-upstream") as upstream,
        ProxyServer(PROFILE, upstream=upstream.base_url, max_reply_bytes=1 << 20) as proxy,
    ):
        if stream:
            _, error = _stream(proxy.base_url)
        else:
            client = openai.OpenAI(base_url=proxy.base_url, api_key="E", max_retries=0)
            try:
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}]
                )
                error = None
            except openai.APIError as exc:
                error = exc
            client.close()
    assert isinstance(error, openai.APIError), error
    assert "upstream_reply_too_large" in str(error.body) and "1048576-byte cap" in error.message
    assert sent[0] < 20 << 20, sent[0]  # of 100 MB: the proxy hung up


def test_a_stream_over_the_token_slot_cap_is_cut() -> None:
    """Dense text (64 KiB of one letter per event, ~8k slots each) under the byte cap:
    the slot cap (20,000 here) cuts it with 502 `upstream_reply_too_large` long before
    the byte cap would (64 MiB of it held ~16M slots, 2.8 GB)."""
    sent = [0]
    with (
        AppServer(_big_app(sent), name="dense-upstream") as upstream,
        ProxyServer(PROFILE, upstream=upstream.base_url) as proxy,
    ):
        proxy.proxy.clients.limits = ReplyLimits(max_tokens=20_000)
        _, error = _stream(proxy.base_url)
    assert isinstance(error, openai.APIError), error
    assert "upstream_reply_too_large" in str(error.body) and "20000 token slots" in error.message
    assert sent[0] < 20 << 20, sent[0]


def _trickle_app() -> Starlette:
    """A stream that sends one byte every 0.2 s, for ever."""

    async def chat(request: Request) -> Response:
        async def body() -> Any:
            yield b'data: {"choices":[{"index":0,"delta":{"content":"'
            while True:
                await asyncio.sleep(0.2)
                yield b"x"

        return StreamingResponse(body(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def test_a_trickling_upstream_meets_the_total_deadline() -> None:
    """A byte every 0.2 s never trips the 1 s per-read timeout; the 1.5 s total deadline
    ends the request with 504 `upstream_timeout` naming it, within ~2 s."""
    with (
        AppServer(_trickle_app(), name="trickle-upstream") as upstream,
        ProxyServer(
            PROFILE, upstream=upstream.base_url, upstream_timeout_s=1.0, upstream_deadline_s=1.5
        ) as proxy,
    ):
        start = time.perf_counter()
        _, error = _stream(proxy.base_url)
        took = time.perf_counter() - start
    assert isinstance(error, openai.APIError), error
    assert "upstream_timeout" in str(error.body), error
    assert "total deadline of 1.5 s" in error.message
    assert 1.4 < took < 6.0, took
