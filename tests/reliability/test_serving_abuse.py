"""Serving under abuse: idle and half-sent connections, oversized bodies and heads (serve
and proxy).

Real loopback servers (`AppServer` with the simulator's app, and the pacing proxy's app
in front of it) with a 1 s read deadline: 250 sockets that send nothing or half a
request are all closed by the server; a body over the limit is answered 413 in OpenAI's
shape before it is read, and a head over the limit 431, while the server keeps answering
others.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from looplab.backends.proxy.app import create_proxy_app
from looplab.backends.proxy.core import Proxy
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.server import create_app
from looplab.latency.presets import resolve_profile
from looplab.serving.appserver import AppServer
from looplab.serving.guard import MAX_BODY_BYTES, MAX_HEAD_BYTES

pytestmark = [pytest.mark.reliability]

HALF_SENT = b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 500\r\n\r\n{"
ASK = {"model": "looplab-lorem", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}


@pytest.fixture(params=["serve", "proxy"])
def port(request: pytest.FixtureRequest) -> Iterator[int]:
    """A server with a 1 s read deadline: the simulator, or the proxy in front of one."""
    profile = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0"])
    if request.param == "serve":
        with AppServer(create_app(Simulator(profile)), read_timeout_s=1.0) as server:
            yield server.port
        return
    with SimulatorServer(profile) as upstream:
        proxy = Proxy(profile, upstream=upstream.base_url)
        app = create_proxy_app(proxy)
        with AppServer(app, lifespan="on", read_timeout_s=1.0) as server:
            yield server.port


def _post(port: int, body: bytes, headers: bytes = b"") -> bytes:
    """One raw POST of `body`; the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
        ).encode()
        # the server may answer and close before the whole body went out
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(head + headers + b"\r\n" + body)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
            if b"\r\n0\r\n\r\n" in chunk or (b"connection: close" in b"".join(chunks)):
                break
            if b'"choices"' in b"".join(chunks) and b"content-length" in b"".join(chunks):
                break
        return b"".join(chunks)


def test_idle_and_half_sent_connections_are_closed(port: int, campaign: Any) -> None:
    """250 sockets (half idle, half mid-request) are all closed by the read deadline."""
    sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(250)]
    for conn in sockets[::2]:
        conn.sendall(HALF_SENT)
    open_ = set(sockets)
    deadline = time.perf_counter() + 15
    while open_ and time.perf_counter() < deadline:
        readable, _, _ = select.select(list(open_), [], [], 0.5)
        for conn in readable:
            try:
                closed = conn.recv(1024) == b""
            except ConnectionResetError:
                closed = True
            if closed:
                open_.discard(conn)
    for conn in sockets:
        conn.close()
    campaign.add("sockets left open", len(open_))
    assert len(open_) == 0, f"{len(open_)} of 250 connections still open"
    answer = _post(port, json.dumps(ASK).encode())  # still serving
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


def test_oversized_body_is_413_before_it_is_read(port: int) -> None:
    """A body over the limit gets 413 (OpenAI's error shape); the server answers the next."""
    answer = _post(port, b"x" * (MAX_BODY_BYTES + 1))
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    error = json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]
    assert error["code"] == "request_too_large"
    assert str(MAX_BODY_BYTES) in error["message"]
    assert _post(port, json.dumps(ASK).encode()).startswith(b"HTTP/1.1 200")


def test_oversized_head_is_431_and_a_large_body_is_no_head(port: int) -> None:
    """A header past the head limit gets 431 (OpenAI's error shape) before the head ends;
    a request whose body is many times the head limit, sent in one write, is served."""
    answer = _post(port, b"{}", b"x-big: " + b"a" * (MAX_HEAD_BYTES + 1) + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    error = json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]
    assert error["code"] == "request_header_too_large"
    assert str(MAX_HEAD_BYTES) in error["message"]
    padded = {**ASK, "user": "u" * (8 * MAX_HEAD_BYTES)}
    answer = _post(port, json.dumps(padded).encode())
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


def test_a_client_hanging_up_mid_body_is_quiet(port: int, caplog: pytest.LogCaptureFixture) -> None:
    """A client that closes before its body is read leaves no traceback; serving goes on."""
    with caplog.at_level("WARNING"):
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", port)) as conn:
                conn.sendall(HALF_SENT)
                time.sleep(0.05)  # the handler is reading the body when the client goes
        time.sleep(0.3)
        answer = _post(port, json.dumps(ASK).encode())
    assert b" 200 " in answer.split(b"\r\n", 1)[0]
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "Exception in ASGI application" not in logged
    assert "ClientDisconnect" not in logged
