"""WebSocket frames of any kind, to `serve` and to the proxy: an error event or a proper
close code, never an ASGI traceback or a socket dropped without a close frame (issue 36,
finding 9).

A raw WebSocket client (RFC 6455 framing over a loopback socket, so it can send what no
library sends: a binary frame, text that is not UTF-8) talks to a real `SimulatorServer`
and a real `ProxyServer`. The proxy's upstream is a loopback server whose Responses stream
carries a line that is not JSON, or a `response.completed` without a response object.
Each case records the events received and the close code; the server's log must hold no
traceback.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import socket
import struct
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer

pytestmark = [pytest.mark.reliability]

TEXT, BINARY, CLOSE = 0x1, 0x2, 0x8
_CREATED = {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}


class RawWebSocket:
    """A minimal RFC 6455 client on a blocking loopback socket."""

    def __init__(self, base_url: str) -> None:
        host, port = base_url.split("//")[1].split("/")[0].split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=15)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET /v1/responses HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._recv()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        assert b" 101 " in head.split(b"\r\n")[0], head

    def _recv(self) -> bytes:
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        return data

    def _take(self, n: int) -> bytes:
        while len(self.buffer) < n:
            self.buffer += self._recv()
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def send(self, opcode: int, payload: bytes) -> None:
        """One masked frame."""
        mask = os.urandom(4)
        size = len(payload)
        head = bytes([0x80 | opcode])
        if size < 126:
            head += bytes([0x80 | size])
        else:
            head += bytes([0x80 | 126]) + struct.pack(">H", size)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def frame(self) -> tuple[int, bytes]:
        """The next frame from the server (opcode, payload)."""
        first, second = self._take(2)
        size = second & 0x7F
        if size == 126:
            size = struct.unpack(">H", self._take(2))[0]
        elif size == 127:
            size = struct.unpack(">Q", self._take(8))[0]
        return first & 0x0F, self._take(size)

    def session(
        self, opcode: int, payload: bytes, close: bool
    ) -> tuple[list[dict[str, Any]], int | None]:
        """Send one frame; the events received and the close code (None: the socket was
        dropped without a close frame). After an `error` or terminal event, this side
        closes with 1000 when `close`."""
        events: list[dict[str, Any]] = []
        self.send(opcode, payload)
        try:
            while True:
                kind, data = self.frame()
                if kind == CLOSE:
                    return events, struct.unpack(">H", data[:2])[0] if len(data) >= 2 else 1005
                if kind == TEXT:
                    events.append(json.loads(data))
                    if close and events[-1].get("type") in ("error", "response.completed"):
                        self.send(CLOSE, struct.pack(">H", 1000))
        except (EOFError, OSError):
            return events, None
        finally:
            self.sock.close()


def _sse(*events: str) -> Response:
    async def body() -> AsyncIterator[bytes]:
        for event in events:
            yield event.encode()

    return StreamingResponse(body(), media_type="text/event-stream")


def _upstream_app() -> Starlette:
    """A Responses upstream whose stream breaks the format, chosen by the model."""

    async def responses(request: Request) -> Response:
        model = (await request.json()).get("model")
        created = f"event: response.created\ndata: {json.dumps(_CREATED)}\n\n"
        if model == "garbage":
            return _sse(created, "data: <html>upstream fell over</html>\n\n")
        return _sse(created, 'event: response.completed\ndata: {"type": "response.completed"}\n\n')

    return Starlette(routes=[Route("/v1/responses", responses, methods=["POST"])])


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    """`serve` and the proxy (in front of the format-breaking upstream), by name."""
    profile = resolve_profile("fast-750", ["ttft_s=0.01"])
    with (
        SimulatorServer(profile) as serve,
        AppServer(_upstream_app(), name="bad-sse") as upstream,
        ProxyServer(profile, upstream=upstream.base_url) as proxy,
    ):
        yield {"serve": serve.base_url, "proxy": proxy.base_url}


def _create(model: str) -> bytes:
    return json.dumps({"type": "response.create", "model": model, "input": "hi"}).encode()


CASES: list[tuple[str, str, int, bytes, bool, tuple[int, ...]]] = [
    (server, name, opcode, payload, error, codes)
    for server in ("serve", "proxy")
    for name, opcode, payload, error, codes in [
        ("binary frame", BINARY, _create("m"), False, (1003,)),
        ("invalid UTF-8", TEXT, b'{"type": "\xff\xfe"}', False, (1007,)),
        ("not JSON", TEXT, b"hello", True, (1000,)),
        ("a JSON list", TEXT, b"[1, 2]", True, (1000,)),
    ]
] + [
    ("proxy", "upstream SSE line not JSON", TEXT, _create("garbage"), True, (1011,)),
    ("proxy", "response.completed without object", TEXT, _create("hollow"), True, (1000, 1011)),
]
"""(server, case, opcode, payload, an error event expected, close codes allowed)."""


@pytest.mark.parametrize(
    ("server", "name", "opcode", "payload", "error", "codes"),
    CASES,
    ids=[f"{c[0]}: {c[1]}" for c in CASES],
)
def test_any_frame_gets_an_error_event_or_a_close_code(
    servers: dict[str, str],
    caplog: pytest.LogCaptureFixture,
    campaign: Any,
    server: str,
    name: str,
    opcode: int,
    payload: bytes,
    error: bool,
    codes: tuple[int, ...],
) -> None:
    """The frame is answered with an `error` event (when the message could be read) and
    the connection ends with a close frame of a fitting code; no traceback is logged."""
    caplog.set_level(logging.ERROR)
    events, code = RawWebSocket(servers[server]).session(opcode, payload, 1000 in codes)
    traceback = [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    errors = [e for e in events if e.get("type") == "error"]
    ok = code in codes and bool(errors) == error and not traceback
    campaign.add("websocket frame cases")
    campaign.add("websocket frame failures", 0 if ok else 1)
    assert ok, (events, code, traceback)
    if server == "proxy" and name.startswith("upstream"):
        assert "upstream" in errors[0]["error"]["message"]
