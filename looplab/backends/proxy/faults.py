"""Upstream faults are the upstream's: the client's answer, never the proxy's or the client's
fault (`upstream_fault`: 502, or 504 for a timeout, naming the upstream's status and a
sample of its body, logged as `proxy.upstream_fault`).

Unreachable, reset or timed out; a non-2xx that is not an OpenAI-shaped error; a 200 whose
body is not a JSON object or whose stream is not an event stream; a status that carries
no reply (1xx, 204, 205, 304); a stream broken, emptied, cut before its end (`TRUNCATED`)
or over the size cap: each has its function here and its error code.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

import httpx2
import structlog

from looplab.backends.proxy.calls import CallRecord
from looplab.backends.simulator.protocol import ApiError

__all__ = [
    "NO_BODY",
    "SAMPLE_BYTES",
    "TRUNCATED",
    "ReplySource",
    "check_reply_status",
    "check_stream",
    "error_body",
    "stream_fault",
    "transport_fault",
    "upstream_fault",
    "upstream_json",
]


class ReplySource(Protocol):
    """One exchange's reply: status, headers, then lines or the body."""

    status: int
    headers: dict[str, str]
    content_type: str
    """The reply's media type (`text/event-stream`, `application/json`; "" unknown)."""
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


log = structlog.get_logger(__name__)

SAMPLE_BYTES = 300
"""How much of a faulty upstream body is quoted back (and logged)."""
TRUNCATED = "upstream stream truncated"
"""How `call.error` starts for a stream the upstream closed before its end."""
NO_BODY = frozenset({204, 205, 304})
"""Final statuses that carry no body: no model reply can come with them."""


def error_body(status: int, raw: bytes) -> dict[str, Any]:
    """The upstream's error body when it is in OpenAI's shape (its deliberate answer: a
    401, a 429, a 400 naming a field; passed through with its status).

    Raises:
        ApiError: 502 `upstream_error_<status>` for anything else (an HTML 503 from a load
            balancer, a 404 page of a wrong `--upstream`): the upstream's fault.
    """
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return data
    raise upstream_fault(status, "answered an error", raw, code=f"upstream_error_{status}")


def upstream_json(source: ReplySource, raw: bytes) -> dict[str, Any]:
    """A non-streamed 2xx reply's JSON object.

    Raises:
        ApiError: 502 `upstream_invalid_body`: not a JSON object (an HTML page, nothing).
    """
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        data = None
    if isinstance(data, dict):
        return data
    kind = source.content_type or "a body"
    why = f"answered with {kind} that is not a JSON object"
    raise upstream_fault(source.status, why, raw, code="upstream_invalid_body")


def check_reply_status(source: ReplySource) -> None:
    """Refuse a status that cannot carry a model reply (1xx, 204, 205, 304), from the
    upstream or a recording: sent as it was, it would be a bodyless status with a body.

    Raises:
        ApiError: 502 `upstream_no_reply`, naming the status.
    """
    if source.status < 200 or source.status in NO_BODY:
        why = f"answered HTTP {source.status}, a status that carries no model reply"
        raise upstream_fault(source.status, why, code="upstream_no_reply")


async def check_stream(source: ReplySource) -> None:
    """Refuse a streamed 2xx that is not an event stream (an HTML page, a JSON body).

    Raises:
        ApiError: 502 `upstream_not_a_stream`, quoting its start.
    """
    kind = source.content_type.split(";")[0].strip().lower()
    if kind and kind != "text/event-stream":
        raw = await source.body()
        why = f"answered a streamed request with {kind}, not an event stream"
        raise upstream_fault(source.status, why, raw, code="upstream_not_a_stream")


def stream_fault(call: CallRecord, items: Sequence[object], source: ReplySource) -> bytes:
    """The SSE `error` event ending a stream the upstream broke (reset, timed out, closed
    before its end: `TRUNCATED`, or empty: no event at all), or b"" for a whole stream.
    `call.error` says which; a client (the openai one raises `APIError`) learns it was the
    upstream's fault."""
    failed = str(call.error or "")
    if failed.startswith("upstream stream failed: ReplyTooLarge"):
        error = upstream_fault(
            source.status,
            "sent a reply too large",
            failed.encode(),
            code="upstream_reply_too_large",
        )
    elif failed.startswith("upstream stream failed"):
        timeout = "Timeout" in failed
        error = upstream_fault(
            source.status,
            "timed out mid-stream" if timeout else "broke off the stream",
            failed.encode(),
            code="upstream_timeout" if timeout else "upstream_stream_broken",
            gateway=504 if timeout else 502,
        )
    elif not items:
        error = upstream_fault(source.status, "sent an empty stream", code="upstream_empty_stream")
    elif failed.startswith(TRUNCATED):
        why = "ended the stream before its end (a truncated answer)"
        error = upstream_fault(
            source.status, why, failed.encode(), code="upstream_stream_truncated"
        )
    else:
        return b""
    call.error = error.message[:500]
    event = {"type": "error", "status": error.status, **error.body()}
    return ("event: error\ndata: " + json.dumps(event) + "\n\n").encode()


def upstream_fault(
    status: int, why: str, raw: bytes = b"", *, code: str, gateway: int = 502
) -> ApiError:
    """The client's answer when the upstream is at fault: `gateway` (502, or 504 for a
    timeout) naming the upstream's `status` (0: none came) and a sample of its body; logged
    as `proxy.upstream_fault`."""
    sample = raw[:SAMPLE_BYTES].decode("utf-8", "replace").strip()
    said = f"HTTP {status}" if status else "no reply"
    log.warning("proxy.upstream_fault", upstream_status=status, why=why, code=code, sample=sample)
    return ApiError(
        gateway,
        f"The upstream {why} ({said}): {sample or '(empty body)'}",
        type="upstream_error",
        code=code,
        headers={"x-looplab-upstream-status": str(status)},
    )


def transport_fault(exc: BaseException, what: str, status: int = 0) -> ApiError:
    """`upstream_fault` for a failed connection: 504 `upstream_timeout` for a timeout,
    else 502 `upstream_unreachable` (`what` happened; the error's text, user-info cut)."""
    timeout = isinstance(exc, httpx2.TimeoutException | TimeoutError)
    text = f"{type(exc).__name__}: {_redacted(str(exc))}".encode()
    return upstream_fault(
        status,
        ("timed out" if timeout else what),
        text,
        code="upstream_timeout" if timeout else "upstream_unreachable",
        gateway=504 if timeout else 502,
    )


def _redacted(text: str) -> str:
    """An httpx error text without anything that looks like a key (URLs with userinfo)."""
    return re.sub(r"//[^/@\s]+@", "//***@", text)
