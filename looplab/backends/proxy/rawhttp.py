"""The proxy's upstream client for plain-HTTP upstreams: HTTP/1.1 on kept-alive sockets.

A pacing proxy in front of an upstream whose TTFT equals its own profile's is late by
its own hop: the time to send the request on and to get the first token back. Through
httpx that hop's two legs took 0.85 + 0.53 ms on a quiet 2-core VM (its pool, request
model and h11 steps); this client builds the request's bytes in one piece, writes them in
one `write`, and parses the reply with httptools (C): 0.62 + 0.41 ms. Those legs were
stamped by hand (medians of 12, CLOCK_MONOTONIC across processes); `looplab bench proxy`
prints the whole hop as the added TTFT at upstream TTFT 0.3 s (raw client ~0.9-1.1 ms).

It speaks only what the proxy needs: `POST`/`GET` with a body of known length, replies
with a `Content-Length`, chunked, or ended by close; no TLS, redirects, cookies,
compression or proxies. `UpstreamClients` picks it for `http://` upstreams that no
`HTTP_PROXY`-style variable routes elsewhere and httpx for the rest, so `https://` APIs
keep httpx's TLS, proxy and HTTP/2 handling. The surface is the subset of
`httpx2.AsyncClient.stream` the proxy uses (`UpstreamClient`).

Connections: one request at a time each, returned to the pool when a reply was read to
its end and the server keeps the connection. A kept connection the server has closed is
dropped before use; one it closes as the request goes out (no reply byte came) is
dropped and the request sent again on the next kept or a fresh connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.request
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import httptools

__all__ = ["RawHttpError", "RawPool", "RawResponse", "UpstreamClient", "uses_raw_client"]

_CHUNK = 65536
_BREAKS = {"\r", "\n"}


class RawHttpError(OSError):
    """The upstream connection failed or answered something that is not HTTP/1.x."""


class UpstreamClient(Protocol):
    """The part of `httpx2.AsyncClient` the proxy's upstream source uses."""

    def stream(
        self, method: str, url: str, *, content: bytes, headers: Mapping[str, str]
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        """Send a request; the context gives its response once the headers are in."""
        ...


def uses_raw_client(upstream: str) -> bool:
    """Whether `upstream` goes through `RawPool`: plain http, no proxy variable for it."""
    url = urlsplit(upstream)
    if url.scheme != "http":
        return False
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get("http") or proxies.get("all")):
        return True
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    return bool(bypass(url.netloc))


@dataclass(eq=False)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter


@dataclass(eq=False)
class RawResponse:
    """One reply being read; `httpx2.Response`'s names for what the proxy uses."""

    _connection: _Connection
    _read_timeout_s: float
    status_code: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    _body: list[bytes] = field(default_factory=list)
    _headers_done: bool = False
    _keep_alive: bool = False
    _parser: Any = field(init=False)

    def __post_init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)

    # httptools callbacks -------------------------------------------------------------
    def on_header(self, name: bytes, value: bytes) -> None:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text

    def on_headers_complete(self) -> None:
        self._headers_done = True
        self.status_code = int(self._parser.get_status_code())
        self._keep_alive = bool(self._parser.should_keep_alive())

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self.complete = True

    # reading -------------------------------------------------------------------------
    async def _feed(self) -> bool:
        """Read once and parse; False at the end of the connection."""
        async with asyncio.timeout(self._read_timeout_s):
            data = await self._connection.reader.read(_CHUNK)
        try:
            if data:
                self._parser.feed_data(data)
            elif not self.complete and self._headers_done:
                # end of a reply delimited by close (no length, not chunked)
                if self._keep_alive:
                    raise RawHttpError("the upstream closed the connection mid-reply")
                self.complete = True
        except httptools.HttpParserError as exc:
            raise RawHttpError(f"the upstream's reply is not HTTP/1.1: {exc}") from None
        return bool(data)

    async def read_head(self) -> None:
        """Read until the status line and headers are in."""
        while not self._headers_done:
            if not await self._feed():
                raise RawHttpError("the upstream closed the connection before replying")

    def _take(self) -> bytes:
        data = b"".join(self._body)
        self._body.clear()
        return data

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives."""
        while True:
            if self._body:
                yield self._take()
            if self.complete or not await self._feed():
                break
        if self._body:
            yield self._take()

    async def aiter_lines(self) -> AsyncIterator[str]:
        """The body's lines (split at `\\n`, a trailing `\\r` dropped) as they arrive."""
        pending = b""
        async for data in self.aiter_bytes():
            pending += data
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line.removesuffix(b"\r").decode("utf-8", "replace")
        if pending:
            yield pending.removesuffix(b"\r").decode("utf-8", "replace")

    async def aread(self) -> bytes:
        """The whole body."""
        return b"".join([data async for data in self.aiter_bytes()])

    def reusable(self) -> bool:
        """Read to its end on a connection the server keeps open."""
        return self.complete and self._keep_alive


class RawPool:
    """Kept-alive HTTP/1.1 connections to plain-http upstreams (see the module docstring).

    Args:
        connect_timeout_s: seconds to open a connection.
        read_timeout_s: seconds any one read may wait.
        max_idle: idle connections kept per host.
    """

    def __init__(
        self, connect_timeout_s: float = 10.0, read_timeout_s: float = 600.0, max_idle: int = 128
    ) -> None:
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.max_idle = max_idle
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    @contextlib.asynccontextmanager
    async def stream(
        self, method: str, url: str, *, content: bytes, headers: Mapping[str, str]
    ) -> AsyncIterator[RawResponse]:
        """Send `method url` with `content`; yield the response once its headers are in.

        Raises:
            RawHttpError: the connection failed or the reply is not HTTP/1.x.
        """
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise RawHttpError(f"the raw upstream client speaks plain http only, not {url}")
        host = (parts.hostname, parts.port or 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        request = _request_bytes(method, target, parts.netloc, content, headers)
        response = await self._send(host, request)
        try:
            yield response
        finally:
            self._done(host, response)

    async def _send(self, host: tuple[str, int], request: bytes) -> RawResponse:
        idle = self._idle.get(host, [])
        while idle and (idle[-1].reader.at_eof() or idle[-1].writer.is_closing()):
            idle.pop().writer.close()  # the upstream closed it while it was idle
        while True:
            reused = bool(idle)
            connection = idle.pop() if reused else await self._connect(host)
            response = RawResponse(connection, self.read_timeout_s)
            try:
                connection.writer.write(request)
                await connection.writer.drain()  # at once unless a big body fills the buffer
                await response.read_head()
                return response
            except (OSError, RawHttpError):
                connection.writer.close()
                if not reused or response.status_code:
                    raise
                # a kept connection the upstream had closed: once more on a fresh one

    async def _connect(self, host: tuple[str, int]) -> _Connection:
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                reader, writer = await asyncio.open_connection(*host, limit=_CHUNK)
        except TimeoutError:
            raise RawHttpError(
                f"connecting to {host[0]}:{host[1]} took over {self.connect_timeout_s:g} s"
            ) from None
        except OSError as exc:
            raise RawHttpError(f"cannot connect to {host[0]}:{host[1]}: {exc}") from None
        return _Connection(reader, writer)

    def _done(self, host: tuple[str, int], response: RawResponse) -> None:
        connection = response._connection
        idle = self._idle.setdefault(host, [])
        if response.reusable() and len(idle) < self.max_idle and not connection.reader.at_eof():
            idle.append(connection)
        else:
            connection.writer.close()

    async def aclose(self) -> None:
        """Close every idle connection."""
        for idle in self._idle.values():
            for connection in idle:
                connection.writer.close()
        self._idle.clear()


def _request_bytes(
    method: str, target: str, netloc: str, content: bytes, headers: Mapping[str, str]
) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"host: {netloc}"]
    lines += [
        f"{name}: {value}" for name, value in headers.items() if not _BREAKS & set(name + value)
    ]
    lines += [f"content-length: {len(content)}", "", ""]
    return "\r\n".join(lines).encode("latin-1") + content
