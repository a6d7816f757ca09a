"""Where a proxied reply comes from: the upstream over HTTP, or a recording.

A `ReplySource` opens one exchange and then gives either SSE lines (streaming) or the whole
body, stamping when each line arrived. `HttpUpstream` forwards the client's request to
any OpenAI-compatible API; `RecordedSource` serves a recorded exchange with every line
"arrived" at once (the profile alone sets the pace).

Faults: what the upstream did wrong is the upstream's, never the client's or the proxy's
(`upstream_fault`): unreachable, reset or timed out (502 / 504), a non-2xx reply that is
not an OpenAI-shaped error, a 200 whose body is not a JSON object or whose stream is not an
event stream: each is answered 502 (504 for a timeout) naming the upstream's status and a
sample of its body, and logged as `proxy.upstream_fault` (`faults.py`, re-exported here).
Bounds (`ReplyLimits`): a total deadline over the whole request besides the client's
per-read timeout, and a cap on the reply's bytes.

Credentials: the client's headers are forwarded as they came (hop-by-hop headers
excepted), so `Authorization`, `OpenAI-Organization`, `api-key` and the like reach the
upstream; with `api_key` set (the proxy's `--api-key-env`) the upstream gets that key
instead. Neither is ever stored on a record, logged or written to disk.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2

from looplab.backends.proxy.faults import (
    NO_BODY,
    TRUNCATED,
    ReplySource,
    check_reply_status,
    check_stream,
    error_body,
    stream_fault,
    transport_fault,
    upstream_fault,
    upstream_json,
)
from looplab.backends.proxy.rawhttp import RawPool, UpstreamClient, uses_raw_client

__all__ = [
    "MAX_REPLY_BYTES",
    "MAX_REPLY_TOKENS",
    "NO_BODY",
    "TRUNCATED",
    "UPSTREAM_DEADLINE_S",
    "HttpUpstream",
    "RecordedSource",
    "ReplyLimits",
    "ReplySource",
    "ReplyTooLarge",
    "UpstreamClients",
    "check_reply_status",
    "check_stream",
    "error_body",
    "passed_headers",
    "stream_fault",
    "upstream_fault",
    "upstream_json",
]

TRANSPORT_ERRORS = (httpx2.HTTPError, OSError)
"""What a failing upstream connection raises (`RawHttpError` and `TimeoutError` are
`OSError`s)."""

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

MAX_REPLY_BYTES = 64 << 20
"""Largest upstream reply taken by default (64 MiB, the recording reader's cap on an
exchange; a streamed 100k-token reply is ~25 MB of events)."""
MAX_REPLY_TOKENS = 1 << 19
"""Most token slots a streamed reply may hold (524,288: 4x the 128k-token output ceiling
of the longest-output model APIs, assumed). Measured (upstream, proxy and openai client in
one process, tokenizer loaded): a stream of dense text cut here +314 MB peak RSS, at 2x
this +478 MB; with the byte cap alone, 64 MiB of one letter (~16M slots) was +2.8 GB. So
this, not the byte cap, bounds a stream of dense text."""
UPSTREAM_DEADLINE_S = 1800.0
"""Longest a request may take upstream in all, by default (its reads each have their own
`--upstream-timeout` too)."""


@dataclass(frozen=True)
class ReplyLimits:
    """How long, and how much, the proxy takes from the upstream for one request."""

    deadline_s: float = UPSTREAM_DEADLINE_S
    """From sending the request to the reply's last byte (then 504 `upstream_timeout`)."""
    max_bytes: int = MAX_REPLY_BYTES
    """Largest reply body (then 502 `upstream_reply_too_large`)."""
    max_tokens: int = MAX_REPLY_TOKENS
    """Most token slots of a streamed reply (then 502 `upstream_reply_too_large`)."""
    read_timeout_s: float = 600.0
    """The per-read timeout the client already has: a read is given a timer of its own
    only when the deadline comes sooner (a timer per read costs ~30 us)."""

    def read_within(self, deadline: float, now: float) -> float | None:
        """The deadline to put on the next read (loop time), or None when the client's
        own read timeout ends it sooner.

        Raises:
            TimeoutError: the deadline has passed."""
        if now >= deadline:
            raise TimeoutError("")
        return deadline if deadline - now < self.read_timeout_s else None


class ReplyTooLarge(ValueError):
    """The upstream's reply passed `ReplyLimits.max_bytes`."""


_LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""What ends a line of an event stream (the SSE standard: CRLF, CR or LF)."""

_BACK = ("x-request-id", "openai-processing-ms", "openai-version", "retry-after")
"""Upstream response headers passed back to the client (plus `x-ratelimit-*`)."""


def passed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream response headers the client gets back."""
    return {
        k: v
        for k, v in headers.items()
        if k.lower() in _BACK or k.lower().startswith("x-ratelimit")
    }


class UpstreamClients:
    """The proxy's connection pools to `upstream`, each made on first use (on the serving
    loop): httpx for everything, the raw HTTP/1.1 pool for replies from a plain-http
    upstream (`rawhttp.uses_raw_client`: a shorter hop)."""

    def __init__(
        self, upstream: str | None, timeout_s: float = 600.0, limits: ReplyLimits | None = None
    ) -> None:
        self.upstream = upstream
        self.timeout_s = timeout_s
        """Longest wait for any one read from the upstream (then 504 `upstream_timeout`)."""
        self.limits = limits or ReplyLimits(read_timeout_s=timeout_s)
        """The whole request's deadline and the reply's size cap."""
        self.raw = upstream is not None and uses_raw_client(upstream)
        """Replies come over `RawPool` (decided once: the proxy variables are read here)."""
        self._http: httpx2.AsyncClient | None = None
        self._raw: RawPool | None = None

    def http(self) -> httpx2.AsyncClient:
        """The httpx pool."""
        if self._http is None:
            self._http = httpx2.AsyncClient(
                timeout=httpx2.Timeout(self.timeout_s, connect=10.0),
                limits=httpx2.Limits(max_connections=512, max_keepalive_connections=128),
            )
        return self._http

    def for_replies(self) -> UpstreamClient:
        """The client model replies come through."""
        if self.raw:
            if self._raw is None:
                self._raw = RawPool(read_timeout_s=self.timeout_s)
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
    limits: ReplyLimits = field(default_factory=ReplyLimits)
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    """The upstream's response headers that go back to the client (`passed_headers`)."""
    content_type: str = ""
    sent: float = 0.0
    _response: Any = None
    _context: Any = None
    _deadline: float = 0.0
    """`limits.deadline_s` after sending, on the event loop's clock."""

    def _deadline_passed(self) -> TimeoutError:
        return TimeoutError(
            f"the upstream's total deadline of {self.limits.deadline_s:g} s passed "
            "(--upstream-deadline; each read has --upstream-timeout of its own)"
        )

    def _too_large(self) -> ReplyTooLarge:
        return ReplyTooLarge(
            f"the upstream's reply passed the {self.limits.max_bytes}-byte cap (--max-reply-mb)"
        )

    async def open(self) -> None:
        """Send; a connection failure becomes a 502 `ApiError` in OpenAI's shape."""
        outgoing = {k: v for k, v in self.request_headers.items() if k.lower() not in _HOP_BY_HOP}
        if self.api_key is not None:
            outgoing = {k: v for k, v in outgoing.items() if k.lower() != "authorization"}
            outgoing["authorization"] = f"Bearer {self.api_key}"
        outgoing["content-type"] = "application/json"
        self.sent = time.perf_counter()
        self._deadline = asyncio.get_running_loop().time() + self.limits.deadline_s
        self._context = self.client.stream(
            "POST", self.url, content=self.request_body, headers=outgoing
        )
        try:
            try:
                async with asyncio.timeout_at(self._deadline):
                    self._response = await self._context.__aenter__()
            except TimeoutError as exc:
                raise (exc if str(exc) else self._deadline_passed()) from None
        except TRANSPORT_ERRORS as exc:
            self._context = None
            raise transport_fault(exc, "could not be reached") from None
        self.status = self._response.status_code
        self.headers = passed_headers(self._response.headers)
        self.content_type = str(self._response.headers.get("content-type", ""))

    async def lines(self) -> AsyncIterator[tuple[str, float]]:
        """SSE lines as they arrive (split at CRLF, CR or LF), within the limits.

        Raises:
            TimeoutError: the total deadline passed (`ReplyLimits.deadline_s`).
            ReplyTooLarge: the stream passed `ReplyLimits.max_bytes`.
        """
        assert self._response is not None
        chunks = self._response.aiter_bytes().__aiter__()
        held: list[bytes] = []  # the start of a line not ended yet
        size = 0
        loop = asyncio.get_running_loop()
        while True:
            try:
                due = self.limits.read_within(self._deadline, loop.time())
                if due is None:
                    chunk: bytes = await anext(chunks)
                else:
                    async with asyncio.timeout_at(due):
                        chunk = await anext(chunks)
            except StopAsyncIteration:
                break
            except TimeoutError as exc:
                raise (exc if str(exc) else self._deadline_passed()) from None
            size += len(chunk)
            if size > self.limits.max_bytes:
                raise self._too_large()
            if b"\n" not in chunk and b"\r" not in chunk:
                held.append(chunk)
                continue
            buffer = b"".join([*held, chunk])
            cut = len(buffer) - 1 if buffer.endswith(b"\r") else len(buffer)  # CR, LF next?
            *done, rest = _LINE_BREAK_BYTES.split(buffer[:cut])
            held = [rest + buffer[cut:]]
            now = time.perf_counter()
            for line in done:
                yield line.decode("utf-8", "replace"), now
        rest = b"".join(held).removesuffix(b"\r")
        if rest:
            yield rest.decode("utf-8", "replace"), time.perf_counter()

    async def body(self) -> bytes:
        """The whole body, within the limits.

        Raises:
            ApiError: 502 (504 on a timeout, or past the total deadline): the upstream
                failed while sending it; 502 `upstream_reply_too_large` past the size cap.
        """
        assert self._response is not None
        chunks: list[bytes] = []
        size = 0
        try:
            try:
                async with asyncio.timeout_at(self._deadline):
                    async for chunk in self._response.aiter_bytes():
                        size += len(chunk)
                        if size > self.limits.max_bytes:
                            raise self._too_large()
                        chunks.append(chunk)
            except TimeoutError as exc:
                raise (exc if str(exc) else self._deadline_passed()) from None
        except ReplyTooLarge as exc:
            raise upstream_fault(
                self.status,
                "sent a reply too large",
                str(exc).encode(),
                code="upstream_reply_too_large",
            ) from None
        except TRANSPORT_ERRORS as exc:
            raise transport_fault(exc, "failed while sending its reply", self.status) from None
        return b"".join(chunks)

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
    content_type: str = ""
    sent: float = 0.0

    async def open(self) -> None:
        """Nothing to send."""
        self.sent = time.perf_counter()

    async def lines(self) -> AsyncIterator[tuple[str, float]]:
        """The recorded events as SSE lines, all arrived now (a CR or LF in a name or in
        the data starts a new `data:` line, never a field of its own)."""
        now = time.perf_counter()
        for event in self.events:
            if event.get("event"):
                yield f"event: {' '.join(str(event['event']).splitlines())}", now
            for line in _LINE_BREAK.split(str(event.get("data", ""))):
                yield f"data: {line}", now
            yield "", now

    async def body(self) -> bytes:
        """The recorded body."""
        return self.recorded_body

    async def close(self) -> None:
        """Nothing to close."""
