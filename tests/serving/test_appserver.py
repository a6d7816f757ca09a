"""`looplab.serving`: one way to bind, serve, stop and guard a server (every looplab server).

Real loopback HTTP against a small Starlette app: a taken port is a clear ConfigError,
`serve_forever` serves until `stop()` and frees the port, the connection cap answers 503,
and `HostGuard` refuses a foreign Host header (HTTP 400, WebSocket 403).
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from looplab.errors import ConfigError
from looplab.serving.appserver import AppServer
from looplab.serving.hosts import HostGuard


def _app(gate: threading.Event | None = None) -> Starlette:
    """`GET /` answers `ok` (after `gate` is set, when given); `/ws` echoes one message."""

    def index(request: Request) -> Response:
        if gate is not None:
            gate.wait(30)
        return PlainTextResponse("ok")

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text(await websocket.receive_text())
        await websocket.close()

    return Starlette(routes=[Route("/", index), WebSocketRoute("/ws", echo)])


def test_a_taken_port_is_a_config_error_naming_the_flag() -> None:
    """Binding a port in use raises ConfigError naming the flag and the system's reason."""
    with AppServer(_app()) as first, pytest.raises(ConfigError) as refused:
        AppServer(_app(), port=first.port, port_flag="--port").bind()
    assert "--port" in str(refused.value)
    assert f"cannot bind 127.0.0.1:{first.port}: Address already in use" in str(refused.value)


def test_serve_forever_serves_until_stop_and_frees_the_port() -> None:
    """`serve_forever` in a thread answers from `bind()` on; `stop()` ends it, port closed."""
    server = AppServer(_app()).bind()
    assert server.url == f"http://127.0.0.1:{server.port}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    answer = httpx2.get(server.url, timeout=30)  # waits in the backlog until served
    assert (answer.status_code, answer.text) == (200, "ok")
    server.stop()
    thread.join(timeout=30)
    assert not thread.is_alive()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()


def test_connections_past_the_cap_get_503() -> None:
    """With `max_connections=3` and two requests held, a third connection (the cap, its
    own included) is answered 503 at once; the held two are served."""
    gate = threading.Event()
    with AppServer(_app(gate), max_connections=3) as server:
        held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2)]
        for conn in held:
            conn.sendall(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        time.sleep(0.3)
        started = time.perf_counter()
        third = httpx2.get(server.url, timeout=30)
        waited = time.perf_counter() - started
        gate.set()
        assert waited < 10
        assert third.status_code == 503
        for conn in held:
            assert conn.recv(64).startswith(b"HTTP/1.1 200")
            conn.close()


def test_host_guard_refuses_foreign_hosts() -> None:
    """The bound address at its port passes; another name or port gets 400 (WebSocket: 403)."""
    with AppServer(HostGuard(_app(), "127.0.0.1")) as server:
        port = server.port
        with httpx2.Client(timeout=30) as http:
            assert http.get(server.url).status_code == 200
            assert http.get(server.url, headers={"host": f"localhost:{port}"}).status_code == 200
            for host in ("evil.example", f"evil.example:{port}", "127.0.0.1:1", ""):
                refused = http.get(server.url, headers={"host": host})
                assert refused.status_code == 400, host
                assert "DNS rebinding" in refused.text
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(
                b"GET /ws HTTP/1.1\r\nhost: evil.example\r\nupgrade: websocket\r\n"
                b"connection: upgrade\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"sec-websocket-version: 13\r\n\r\n"
            )
            assert conn.recv(64).startswith(b"HTTP/1.1 403")


@pytest.mark.skipif(sys.platform != "linux", reason="the precise loop is Linux's (epoll)")
def test_a_signal_during_the_loops_construction_waits_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SIGTERM arriving while `precise_loop` builds the loop is handled once the loop is
    whole (looplab's handler raises: inside the constructor it left a half-made loop whose
    finaliser printed a traceback when a proxy was stopped as it started)."""
    from looplab.serving import timers

    seen: list[str] = []

    class Interrupted(timers.PreciseSelector):
        def __init__(self) -> None:
            super().__init__()
            os.kill(os.getpid(), signal.SIGTERM)  # delivered at once unless held
            seen.append("constructed")

    previous = signal.signal(signal.SIGTERM, lambda *_: seen.append("handled"))
    monkeypatch.setattr(timers, "PreciseSelector", Interrupted)
    try:
        loop = timers.precise_loop()
        loop.close()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == ["constructed", "handled"]
