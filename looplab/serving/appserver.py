"""`AppServer`: any ASGI app on real loopback HTTP in a background thread with its own event
loop, and `app_config`, the uvicorn settings every looplab server uses (the guarded protocol,
the precise timers). `serve`, the proxy, `collect` and the in-process simulator run on it."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from types import TracebackType
from typing import Self

import uvicorn
from starlette.applications import Starlette

from looplab.errors import BackendError
from looplab.serving.guard import (
    MAX_BODY_BYTES,
    READ_TIMEOUT_S,
    QuietWebSocketProtocol,
    guarded_protocol,
    listening_socket,
    quiet_hangups,
)
from looplab.serving.timers import run_server

__all__ = ["DRAIN_S", "AppServer", "app_config"]

DRAIN_S = 5.0
"""Default seconds a stopping server lets in-flight streams finish before closing them."""


def app_config(
    app: Starlette,
    *,
    host: str,
    port: int,
    lifespan: str = "off",
    read_timeout_s: float = READ_TIMEOUT_S,
    max_body_bytes: int = MAX_BODY_BYTES,
    drain_s: float = DRAIN_S,
) -> uvicorn.Config:
    """The uvicorn settings looplab serves with: asyncio loop, httptools guarded by a read
    deadline and a body limit (`looplab.serving.guard`), no access log.

    An asyncio loop on purpose: its timers never fire early, which the pacer relies on
    (libuv-based loops round timers to whole milliseconds both ways). `timers.run_server`
    runs it with microsecond timer resolution (`timers.PreciseSelector`). On shutdown
    in-flight requests and streams get `drain_s` seconds to finish, then are cancelled
    (uvicorn's `timeout_graceful_shutdown`).
    """
    return uvicorn.Config(
        quiet_hangups(app),
        host=host,
        port=port,
        loop="asyncio",
        http=guarded_protocol(read_timeout_s, max_body_bytes),
        ws=QuietWebSocketProtocol,
        lifespan=lifespan,  # type: ignore[arg-type]
        access_log=False,
        log_level="warning",
        timeout_keep_alive=30,
        backlog=4096,
        timeout_graceful_shutdown=drain_s,  # type: ignore[arg-type]  # typed int, any number works
    )


class AppServer:
    """An ASGI app on real loopback HTTP, in a background thread with its own event loop.

    Args:
        app: the ASGI app.
        host: interface to bind; loopback by default.
        port: 0 picks a free ephemeral port.
        name: thread name prefix.
        lifespan: uvicorn's lifespan mode (`on` when the app has start-up/shut-down work).
        read_timeout_s: seconds a connection has to send a whole request
            (`looplab.serving.guard`).
        max_body_bytes: largest request body served (413 above it).
    """

    def __init__(
        self,
        app: Starlette,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "looplab-server",
        lifespan: str = "off",
        read_timeout_s: float = READ_TIMEOUT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self._app = app
        self._read_timeout_s = read_timeout_s
        self._max_body_bytes = max_body_bytes
        self._name = name
        self._lifespan = lifespan
        self._host = host
        self._port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def port(self) -> int:
        """The bound port (valid after `start()`)."""
        if self._socket is None:
            raise BackendError("simulator server is not started")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/v1`, for OpenAI clients."""
        return f"http://{self._host}:{self.port}/v1"

    def start(self, timeout_s: float = 10.0) -> Self:
        """Bind, start serving in a thread, and return once requests are accepted.

        Raises:
            BackendError: when the server does not come up within `timeout_s`.
        """
        sock = listening_socket(self._host)
        sock.bind((self._host, self._port))
        sock.set_inheritable(True)
        self._socket = sock
        config = app_config(
            self._app,
            host=self._host,
            port=self.port,
            lifespan=self._lifespan,
            read_timeout_s=self._read_timeout_s,
            max_body_bytes=self._max_body_bytes,
        )
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(
            target=lambda: run_server(server, [sock]),
            name=f"{self._name}-{self.port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.perf_counter() + timeout_s
        while not server.started:
            if time.perf_counter() > deadline or not self._thread.is_alive():
                self.stop()
                raise BackendError(f"{self._name} did not start within {timeout_s} s")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving and join the thread; idempotent."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)
