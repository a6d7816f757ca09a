"""Serving under abuse: the HTTP protocol `serve`, the proxy and every in-process server use.

uvicorn's httptools protocol with three limits it lacks:

- **read deadline**: a connection must deliver a whole request within `read_timeout_s`
  of opening (or of its previous response). uvicorn arms its keep-alive timer only after
  a response and cancels it on any byte, so a socket that never sends, or sends half a
  request, stays open for ever (250 of 250 idle sockets were still open after 30 s).
  Once a request is complete the deadline is off: a long stream is not cut.
- **body limit**: a request body over `max_body_bytes` (by `content-length`, or counted
  as a chunked body arrives) is answered 413 in OpenAI's error shape and the connection
  closed, before the body is buffered or parsed (a 50 MB body froze the event loop for
  5.3 s while it was parsed, stalling every other stream's pacing).
- **head limit**: a request whose line and headers pass `max_head_bytes` before they end
  is answered 431 the same way (httptools buffers a header of any size: a 20 MB one was
  read whole and served; h11, which the dashboard ran on before, stopped at 16 KiB).
  A head that ends is measured by its parsed URL and headers; one that does not yet is
  counted by the bytes of every socket read that ended inside it, so at most the limit
  plus one read (256 KiB) is ever buffered.

It also stamps each request's **arrival**: the `time.perf_counter()` of the socket read
that completed the request (its last byte), in the ASGI scope under `ARRIVED_KEY`
(`arrival(scope)`). The simulator and the proxy start a request's schedule there, not
when their handler runs: on a busy event loop the handler starts one task hop, the
routing and the body hand-off later, and every stream's pacing callbacks queued ahead of
it delay it further; that wait is the server's and counts toward TTFT.

And it has one rule for a client that **hangs up before its request body is read**
(`quiet_hangups`, wrapped around every app `inprocess.app_config` serves): there is
nobody left to answer, so starlette's `ClientDisconnect` ends the request quietly instead
of reaching uvicorn, which prints a traceback (a Ctrl-C of `looplab run` mid-request
printed one on the console).

WebSocket text that is not UTF-8 is closed with 1007 quietly (`QuietWebSocketProtocol`,
uvicorn's websockets-sansio protocol, which logs that as a traceback of its own).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Mapping
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

__all__ = [
    "ARRIVED_KEY",
    "MAX_BODY_BYTES",
    "MAX_HEAD_BYTES",
    "READ_TIMEOUT_S",
    "GuardedHttpProtocol",
    "arrival",
    "guarded_protocol",
    "listening_socket",
    "quiet_hangups",
]

MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body served (16 MiB: millions of prompt tokens, dozens of images)."""
MAX_HEAD_BYTES = 64 * 1024
"""Largest request line plus headers served (64 KiB; an OpenAI client's are under 2 KiB)."""
READ_TIMEOUT_S = 15.0
"""Seconds a connection has to send a whole request (idle or half-sent: closed)."""
ARRIVED_KEY = "looplab.arrived_s"
"""ASGI scope key of the request's arrival (`time.perf_counter()` seconds)."""


def quiet_hangups(app: ASGIApp) -> ASGIApp:
    """`app`, with a client's hang-up before its body was read ending the request quietly
    (there is nobody to answer) instead of as a traceback."""

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await app(scope, receive, send)
        except ClientDisconnect:
            return

    return served


def arrival(scope: Mapping[str, Any]) -> float | None:
    """When the request's last byte was read (`ARRIVED_KEY`), or None (another server)."""
    value = scope.get(ARRIVED_KEY)
    return value if isinstance(value, float) else None


class GuardedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with the read deadline, the body and the head limits."""

    read_timeout_s = READ_TIMEOUT_S
    max_body_bytes = MAX_BODY_BYTES
    max_head_bytes = MAX_HEAD_BYTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._body_bytes = 0
        self._head_bytes = 0
        self._in_head = False
        self._refused = False
        self._read_at = 0.0

    # uvicorn's own signature narrows BaseTransport to Transport the same way
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._read_at = time.perf_counter()  # before parsing: the read that completes a request
        if self._refused:
            return
        super().data_received(data)
        if self._in_head and not self._refused:  # this read ended inside a request head
            self._head_bytes += len(data)
            if self._head_bytes > self.max_head_bytes:
                self._refuse_head()

    def on_message_begin(self) -> None:
        self._body_bytes = 0
        self._head_bytes = 0
        self._in_head = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._in_head = False
        head = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if head > self.max_head_bytes:
            self._refuse_head()
            return
        length = dict(self.headers).get(b"content-length", b"0")
        if length.isdigit() and int(length) > self.max_body_bytes:
            self._refuse_body()
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self._body_bytes += len(body)
        if self._body_bytes > self.max_body_bytes:
            if self.cycle is not None:  # the app sees a client that went away
                self.cycle.disconnected = True
                self.cycle.message_event.set()
            self._refuse_body()
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm()  # a whole request: the app may take as long as it streams
        # the app's scope (its handler reads the key after the body); a pipelined request
        # waits for the one before it as in a queue, so it is timed from its handler.
        # uvicorn types the scope as a closed TypedDict; ASGI lets a server add keys.
        if self.cycle is not None and not self.pipeline:
            self.cycle.scope[ARRIVED_KEY] = self._read_at  # type: ignore[literal-required]
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request has the same deadline

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.read_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def _refuse_head(self) -> None:
        limit = self.max_head_bytes
        self._refuse(
            "431 Request Header Fields Too Large",
            "request_header_too_large",
            f"The request line and headers are larger than this server's limit of {limit} bytes.",
        )

    def _refuse_body(self) -> None:
        limit = self.max_body_bytes
        self._refuse(
            "413 Request Entity Too Large",
            "request_too_large",
            f"The request body is larger than this server's limit of {limit} bytes.",
        )

    def _refuse(self, status: str, code: str, message: str) -> None:
        """Answer `status` with an OpenAI-shaped error and close, once."""
        if self._refused:
            return
        self._refused = True
        self._disarm()
        body = json.dumps(
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": None,
                    "code": code,
                }
            }
        ).encode()
        head = (
            f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        ).encode()
        self.transport.write(head + body)
        self.transport.close()


def guarded_protocol(
    read_timeout_s: float = READ_TIMEOUT_S,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_head_bytes: int = MAX_HEAD_BYTES,
) -> type[asyncio.Protocol]:
    """The `GuardedHttpProtocol` class with these limits (what uvicorn's `http=` takes)."""
    limits = {
        "read_timeout_s": read_timeout_s,
        "max_body_bytes": max_body_bytes,
        "max_head_bytes": max_head_bytes,
    }
    return type("GuardedHttpProtocol", (GuardedHttpProtocol,), limits)


def listening_socket(host: str) -> socket.socket:
    """A TCP socket for a server on `host` (IPv4 or IPv6), SO_REUSEADDR set, not bound.

    It is made with `proto=IPPROTO_TCP` on purpose: asyncio disables Nagle's algorithm
    (TCP_NODELAY) only on sockets whose `proto` says TCP, and accepted sockets inherit the
    listening socket's. With `proto=0`, two small writes in a row (two WebSocket events)
    waited for the client's delayed ACK: 40 ms per Responses WebSocket turn on loopback.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    return sock


class QuietWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's websockets-sansio protocol; a text message that is not UTF-8 closes the
    connection with 1007 (invalid frame payload data) and no traceback in the log."""

    def send_receive_event_to_app(self) -> None:
        """Hand a whole message to the app (uvicorn's), checking text is UTF-8 first."""
        if self.curr_msg_data_type == "text" and not self.close_sent:
            try:
                b"".join(self.frames).decode()
            except UnicodeDecodeError:
                self.frames = []
                self.conn.send_close(1007, "text frames must be UTF-8")
                self.handle_parser_exception()
                return
        super().send_receive_event_to_app()
