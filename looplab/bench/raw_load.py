"""The load generator's third client: raw HTTP/1.1 on a socket, the server's floor.

`looplab bench backend` and `bench proxy` measure TTFT error = (first content chunk
seen by the client - request sent by the client) - the server's intended TTFT. Part of
it is the client's own per-request work, which no server can remove: the stock `openai`
client builds and validates its request (options, headers, pydantic models) before
anything is sent and parses each chunk into pydantic objects after it arrives; httpx
adds its connection-pool and h11 steps after the moment the instrumented client stamps
as sent. This client does none of that: the request's bytes are built before `sent` is
stamped, written in one `write` on a kept-alive connection, and the reply is read as
raw SSE lines (`json.loads` of each). What it sees is the server's part (its request
path, release lateness and write) plus loopback and this process's scheduling, so the
gap between it and another client in the same cell is that client's own overhead.

Same request shape as the other clients (`looplab.bench.stock_load.bench_prompt`,
`max_tokens`, the usage chunk); rows in the load generator's row format.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import urlsplit

from looplab.bench.failures import CLOSED_EARLY, failure_reason
from looplab.bench.stock_load import bench_prompt
from looplab.errors import BackendError

__all__ = ["raw_streams"]


async def raw_streams(
    base_url: str,
    model: str,
    starts: dict[int, float],
    *,
    rounds: int,
    tag: str,
    prompt_words: int = 0,
    max_tokens: int | None = None,
) -> list[dict[str, Any]]:
    """Run the streams of `starts` (stream `i` from `starts[i]`, `rounds` requests back to
    back, one connection each, first warmed by a 1-token request); rows in the load
    generator's row format (`looplab.bench.loadgen`).

    Raises:
        BackendError: a reply that is not a 200 event stream, or a connection that failed
            (its reason named: `looplab.bench.failures`).
    """
    url = urlsplit(base_url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    path = url.path.rstrip("/") + "/chat/completions"
    rows: list[dict[str, Any]] = []

    async def stream(index: int) -> None:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError as exc:
            raise BackendError(f"raw bench client: {failure_reason(exc)}") from None
        try:
            head = f"POST {path} HTTP/1.1\r\nhost: {host}:{port}\r\n"
            await _one(reader, writer, head, _body(model, f"warm {index}", 1))
            await asyncio.sleep(max(0.0, starts[index] - time.perf_counter()))
            for turn in range(rounds):
                prompt = bench_prompt(f"{tag} {index}-{turn}", prompt_words)
                rows.append(await _one(reader, writer, head, _body(model, prompt, max_tokens)))
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            raise BackendError(f"raw bench client: {failure_reason(exc)}") from None
        finally:
            writer.close()

    await asyncio.gather(*(stream(i) for i in sorted(starts)))
    return rows


def _body(model: str, prompt: str, max_tokens: int | None) -> bytes:
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return json.dumps(body).encode()


async def _one(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: str, body: bytes
) -> dict[str, Any]:
    """One streamed request: bytes built first, then `sent`, one write, raw SSE lines."""
    request = (
        f"{head}content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body
    sent = time.perf_counter()
    writer.write(request)
    status = await reader.readline()
    if not status:
        raise BackendError(f"raw bench client: {CLOSED_EARLY}")
    if b" 200 " not in status:
        raise BackendError(f"raw bench client: {status.decode(errors='replace').strip()}")
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    reply = _Reply()
    while not reply.done:
        size_line = await reader.readline()
        size = int(size_line.strip() or b"0", 16)
        data = await reader.readexactly(size + 2)  # the chunk and its CRLF
        if size == 0:
            break
        reply.read(data, time.perf_counter())
    if reply.done:  # the terminal chunk after [DONE]
        await reader.readexactly(len(b"0\r\n\r\n"))
    times = reply.chunk_times
    return {
        "scheduled": sent,
        "sent": sent,
        "first_token": times[0] if times else None,
        "last_token": times[-1] if times else None,
        "end": time.perf_counter(),
        "chunk_times": times,
        "finish_reason": reply.finish,
        "prompt_tokens": reply.usage.get("prompt_tokens"),
        "completion_tokens": reply.usage.get("completion_tokens"),
        "reasoning_tokens": (reply.usage.get("completion_tokens_details") or {}).get(
            "reasoning_tokens"
        ),
        "visible_chunks": len(times),
        "request_id": headers.get("x-request-id"),
        "looplab_id": headers.get("x-looplab-request-id"),
    }


class _Reply:
    """What the SSE lines of one reply said, and when its content chunks were read."""

    def __init__(self) -> None:
        self.chunk_times: list[float] = []
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.done = False
        self._rest = b""

    def read(self, data: bytes, now: float) -> None:
        """Take one HTTP chunk (an SSE line it ends inside waits for the next chunk)."""
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        for line in lines:
            if not line.startswith(b"data: "):
                continue
            if line.startswith(b"data: [DONE]"):
                self.done = True
                continue
            event = json.loads(line[6:])
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content") or delta.get("tool_calls"):
                    self.chunk_times.append(now)
                self.finish = choice.get("finish_reason") or self.finish
            if event.get("usage"):
                self.usage = event["usage"]
