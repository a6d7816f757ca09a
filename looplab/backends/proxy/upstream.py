"""Where a proxied reply comes from: the upstream over HTTP, or a recording.

A `Source` opens one exchange and then gives either SSE lines (streaming) or the whole
body, stamping when each line arrived. `HttpUpstream` forwards the client's request to
any OpenAI-compatible API; `RecordedSource` serves a recorded exchange with every line
"arrived" at once (the profile alone sets the pace).

Credentials: the client's headers are forwarded as they came (hop-by-hop headers
excepted), so `Authorization`, `OpenAI-Organization`, `api-key` and the like reach the
upstream; with `api_key` set (the proxy's `--api-key-env`) the upstream gets that key
instead. Neither is ever stored on a record, logged or written to disk.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2

from looplab.backends.proxy.rawhttp import RawHttpError, RawPool, UpstreamClient, uses_raw_client
from looplab.backends.simulator.protocol import ApiError

__all__ = [
    "HttpUpstream",
    "RecordedSource",
    "Source",
    "UpstreamClients",
    "error_body",
    "passed_headers",
]

_HOP_BY_HOP = {
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "proxy-connection",
    "accept-encoding",
}

_BACK = ("x-request-id", "openai-processing-ms", "openai-version", "retry-after")
"""Upstream response headers passed back to the client (plus `x-ratelimit-*`)."""


def passed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream response headers the client gets back."""
    return {
        k: v
        for k, v in headers.items()
        if k.lower() in _BACK or k.lower().startswith("x-ratelimit")
    }


class Source(Protocol):
    """One exchange's reply: status, headers, then lines or the body."""

    status: int
    headers: dict[str, str]
    sent: float
    """When the request left (clock seconds)."""

    async def open(self) -> None:
        """Send the request; return once the status and headers are known."""
        ...

    def lines(self) -> AsyncIterator[tuple[str, float]]:
        """SSE lines with their arrival times."""
        ...

    async def body(self) -> bytes:
        """The whole body (non-streaming replies and errors)."""
        ...

    async def close(self) -> None:
        """Release the connection."""
        ...


class UpstreamClients:
    """The proxy's connection pools to `upstream`, each made on first use (on the serving
    loop): httpx for everything, the raw HTTP/1.1 pool for replies from a plain-http
    upstream (`rawhttp.uses_raw_client`: a shorter hop)."""

    def __init__(self, upstream: str | None) -> None:
        self.upstream = upstream
        self.raw = upstream is not None and uses_raw_client(upstream)
        """Replies come over `RawPool` (decided once: the proxy variables are read here)."""
        self._http: httpx2.AsyncClient | None = None
        self._raw: RawPool | None = None

    def http(self) -> httpx2.AsyncClient:
        """The httpx pool."""
        if self._http is None:
            self._http = httpx2.AsyncClient(
                timeout=httpx2.Timeout(600.0, connect=10.0),
                limits=httpx2.Limits(max_connections=512, max_keepalive_connections=128),
            )
        return self._http

    def for_replies(self) -> UpstreamClient:
        """The client model replies come through."""
        if self.raw:
            if self._raw is None:
                self._raw = RawPool()
            return self._raw
        return self.http()

    async def aclose(self) -> None:
        """Close every connection."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        if self._raw is not None:
            await self._raw.aclose()
            self._raw = None


@dataclass
class HttpUpstream:
    """The upstream API over HTTP (see the module docstring)."""

    client: UpstreamClient
    """httpx, or the raw HTTP/1.1 client for plain-http upstreams (`rawhttp`)."""
    url: str
    request_body: bytes
    request_headers: Mapping[str, str]
    api_key: str | None = None
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    """The upstream's response headers that go back to the client (`passed_headers`)."""
    sent: float = 0.0
    _response: Any = None
    _context: Any = None

    async def open(self) -> None:
        """Send; a connection failure becomes a 502 `ApiError` in OpenAI's shape."""
        outgoing = {k: v for k, v in self.request_headers.items() if k.lower() not in _HOP_BY_HOP}
        if self.api_key is not None:
            outgoing = {k: v for k, v in outgoing.items() if k.lower() != "authorization"}
            outgoing["authorization"] = f"Bearer {self.api_key}"
        outgoing["content-type"] = "application/json"
        self.sent = time.perf_counter()
        self._context = self.client.stream(
            "POST", self.url, content=self.request_body, headers=outgoing
        )
        try:
            self._response = await self._context.__aenter__()
        except (httpx2.HTTPError, RawHttpError) as exc:
            self._context = None
            raise ApiError(
                502,
                f"The looplab proxy could not reach its upstream ({type(exc).__name__}): "
                f"{_redacted(str(exc))}",
                type="upstream_error",
                code="upstream_unreachable",
            ) from None
        self.status = self._response.status_code
        self.headers = passed_headers(self._response.headers)

    async def lines(self) -> AsyncIterator[tuple[str, float]]:
        """SSE lines as they arrive."""
        assert self._response is not None
        async for line in self._response.aiter_lines():
            yield line, time.perf_counter()

    async def body(self) -> bytes:
        """The whole body."""
        assert self._response is not None
        body: bytes = await self._response.aread()
        return body

    async def close(self) -> None:
        """Close the response (idempotent)."""
        context, self._context = self._context, None
        if context is not None:
            await context.__aexit__(None, None, None)


@dataclass
class RecordedSource:
    """A recorded exchange, replayed: everything has arrived when it is opened."""

    status: int
    events: list[dict[str, Any]]
    """Recorded SSE events: `{"event": name | None, "data": text}`."""
    recorded_body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    sent: float = 0.0

    async def open(self) -> None:
        """Nothing to send."""
        self.sent = time.perf_counter()

    async def lines(self) -> AsyncIterator[tuple[str, float]]:
        """The recorded events as SSE lines, all arrived now."""
        now = time.perf_counter()
        for event in self.events:
            if event.get("event"):
                yield f"event: {event['event']}", now
            for line in str(event.get("data", "")).split("\n"):
                yield f"data: {line}", now
            yield "", now

    async def body(self) -> bytes:
        """The recorded body."""
        return self.recorded_body

    async def close(self) -> None:
        """Nothing to close."""


def error_body(status: int, raw: bytes) -> dict[str, Any]:
    """The upstream's error body if it is in OpenAI's shape, else one made from it."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return data
    text = raw.decode("utf-8", "replace").strip()[:500]
    return {
        "error": {
            "message": f"The upstream answered HTTP {status}: {text or '(empty body)'}",
            "type": "upstream_error",
            "param": None,
            "code": f"upstream_{status}",
        }
    }


def _redacted(text: str) -> str:
    """An httpx error text without anything that looks like a key (URLs with userinfo)."""
    import re

    return re.sub(r"//[^/@\s]+@", "//***@", text)
