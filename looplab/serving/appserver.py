"""`AppServer`: any ASGI app on real HTTP, bound, started and stopped one way, in a background
thread with its own event loop (`start`/`stop`) or in the caller's (`serve_forever`), and
`app_config`, the uvicorn settings every looplab server uses (the guarded protocol, the
precise timers, the drain). `serve`, the proxy, `collect`, the dashboard and the
in-process simulator run on it."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from types import TracebackType
from typing import Self

import uvicorn
from starlette.types import ASGIApp

from looplab.errors import BackendError, ConfigError
from looplab.serving.guard import (
    MAX_BODY_BYTES,
    MAX_HEAD_BYTES,
    READ_TIMEOUT_S,
    QuietWebSocketProtocol,
    guarded_protocol,
    listening_socket,
    quiet_hangups,
)
from looplab.serving.timers import run_server

__all__ = ["BACKLOG", "DRAIN_S", "AppServer", "app_config"]

DRAIN_S = 5.0
"""Default seconds a stopping server lets in-flight streams finish before closing them."""
BACKLOG = 4096
"""Connections the kernel queues for a bound server before it accepts them (capped by
`net.core.somaxconn`)."""


def app_config(
    app: ASGIApp,
    *,
    host: str,
    port: int,
    lifespan: str = "off",
    read_timeout_s: float = READ_TIMEOUT_S,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_head_bytes: int = MAX_HEAD_BYTES,
    drain_s: float = DRAIN_S,
    max_connections: int | None = None,
) -> uvicorn.Config:
    """The uvicorn settings looplab serves with: asyncio loop, httptools guarded by a read
    deadline, a body and a head limit (`looplab.serving.guard`), no access log; with
    `max_connections`, a request that arrives while that many connections (its own
    included) or requests are open is answered 503 (uvicorn's `limit_concurrency`).

    An asyncio loop on purpose: its timers never fire early, which the pacer relies on
    (libuv-based loops round timers to whole milliseconds both ways). `timers.run_server`
    runs it with microsecond timer resolution (`timers.PreciseSelector`). On shutdown
    in-flight requests and streams get `drain_s` seconds to finish, then are cancelled
    (uvicorn's `timeout_graceful_shutdown`). A connection idle after a response is closed
    by the read deadline (`read_timeout_s`), before uvicorn's own keep-alive timeout.
    """
    return uvicorn.Config(
        quiet_hangups(app),
        host=host,
        port=port,
        loop="asyncio",
        http=guarded_protocol(read_timeout_s, max_body_bytes, max_head_bytes),
        ws=QuietWebSocketProtocol,
        lifespan=lifespan,  # type: ignore[arg-type]
        access_log=False,
        log_level="warning",
        timeout_keep_alive=30,
        limit_concurrency=max_connections,
        backlog=BACKLOG,
        timeout_graceful_shutdown=drain_s,  # type: ignore[arg-type]  # typed int, any number works
    )


class AppServer:
    """An ASGI app on real HTTP: bound (`bind`, or at `start`), served from a background
    thread with its own event loop (`start`/`stop`, a context manager) or from the calling
    thread until a signal (`serve_forever`, the CLI's servers).

    Args:
        app: the ASGI app.
        host: interface to bind; loopback by default.
        port: 0 picks a free ephemeral port.
        name: thread name prefix, and the server's name in errors.
        lifespan: uvicorn's lifespan mode (`on` when the app has start-up/shut-down work).
        read_timeout_s: seconds a connection has to send a whole request, from its opening
            or its previous response; then it is closed (`looplab.serving.guard`).
        max_body_bytes: largest request body served (413 above it).
        drain_s: on stop or a signal, seconds in-flight requests get to finish (`DRAIN_S`).
        max_connections: a request that arrives while this many connections are open (its
            own included) is answered 503; None: no cap.
        port_flag: the flag or field named when the port cannot be bound.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "looplab-server",
        lifespan: str = "off",
        read_timeout_s: float = READ_TIMEOUT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
        drain_s: float = DRAIN_S,
        max_connections: int | None = None,
        port_flag: str = "--port",
    ) -> None:
        self._app = app
        self._lifespan = lifespan
        self._read_timeout_s = read_timeout_s
        self._max_body_bytes = max_body_bytes
        self._drain_s = drain_s
        self._max_connections = max_connections
        self._name = name
        self._port_flag = port_flag
        self.host = host
        self._port = port
        self._bound: int | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._done: threading.Event | None = None
        """Set when `serve_forever` has returned."""

    @property
    def port(self) -> int:
        """The bound port (valid from `bind()` or `start()` on, and after `stop()`)."""
        if self._bound is None:
            raise BackendError(f"{self._name} is not bound yet (call start() or bind())")
        return self._bound

    @property
    def url(self) -> str:
        """`http://<host>:<port>/` (an IPv6 host in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    @property
    def base_url(self) -> str:
        """`<url>v1`, for OpenAI clients."""
        return f"{self.url}v1"

    def bind(self) -> Self:
        """Bind and listen (idempotent while bound): from here a client that connects waits
        in the backlog until the server accepts, instead of being refused.

        Raises:
            ConfigError: the address cannot be bound (names `port_flag` and the reason).
        """
        if self._socket is not None:
            return self
        sock = listening_socket(self.host)
        try:
            sock.bind((self.host, self._port))
        except OSError as exc:
            sock.close()
            raise ConfigError(
                f"cannot bind {self.host}:{self._port}: {exc.strerror}", field=self._port_flag
            ) from None
        sock.listen(BACKLOG)
        self._socket = sock
        self._bound = int(sock.getsockname()[1])
        return self

    def start(self, timeout_s: float = 10.0) -> Self:
        """Bind (unless bound), start serving in a thread, and return once requests are
        accepted.

        Raises:
            ConfigError: the address cannot be bound.
            BackendError: when the server does not come up within `timeout_s`.
        """
        server, sock = self._prepare()
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

    def serve_forever(self) -> None:
        """Bind (unless bound) and serve in this thread until `stop()` (from another
        thread) or, in the main thread, Ctrl-C or SIGTERM: uvicorn then lets in-flight
        requests drain for `drain_s` and re-raises the signal (KeyboardInterrupt). The
        socket is closed either way.

        Raises:
            ConfigError: the address cannot be bound.
        """
        server, sock = self._prepare()
        done = self._done = threading.Event()
        try:
            run_server(server, [sock])
        finally:
            self._close()
            done.set()

    def stop(self) -> None:
        """Stop serving (in-flight requests drain for up to `drain_s`), wait for the
        serving thread and close the socket; idempotent."""
        if self._server is not None:
            self._server.should_exit = True
        wait_s = 10 + self._drain_s
        if self._thread is not None:
            self._thread.join(timeout=wait_s)
        elif self._done is not None and self._server is not None:
            self._done.wait(timeout=wait_s)  # `serve_forever` in another thread
        self._close()
        self._thread = None

    def _prepare(self) -> tuple[uvicorn.Server, socket.socket]:
        self.bind()
        assert self._socket is not None
        config = app_config(
            self._app,
            host=self.host,
            port=self.port,
            lifespan=self._lifespan,
            read_timeout_s=self._read_timeout_s,
            max_body_bytes=self._max_body_bytes,
            drain_s=self._drain_s,
            max_connections=self._max_connections,
        )
        self._server = uvicorn.Server(config)
        return self._server, self._socket

    def _close(self) -> None:
        if self._socket is not None:
            self._socket.close()
        self._socket = None
        self._server = None

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
