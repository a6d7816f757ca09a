"""The OTLP/HTTP receiver: `POST /v1/traces` -> spans buffered per trace -> finished runs.

`Collector` holds the spans received, by trace id, and hands out the traces that are
finished: the root span (no parent) has arrived and no span of the trace for `settle_s`
seconds (children end, and so are exported, before their root; the settle time covers
batches still in flight), or no span for `stale_s` without a root (its process died or
never ends a root span). `drain()` hands out everything at shut-down. A span of a trace
already handed out starts a new part (`draft_run(part=N)`), never replacing the first.

`receiver_app(collector)` answers like an OpenTelemetry collector: 200 with an empty
`ExportTraceServiceResponse` in the request's encoding; 400 (malformed body), 413 (too
large once inflated) or 415 (other content type or encoding) with a `google.rpc.Status`
whose message says why. A bad request changes nothing and the receiver keeps serving.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from looplab.traces.collect.spans import BadRequest, Span, decode_request

__all__ = ["Collector", "FinishedTrace", "receiver_app"]

_PROTOBUF = "application/x-protobuf"
_INVALID_ARGUMENT = 3
"""`google.rpc.Code.INVALID_ARGUMENT`, the status code of every refused request."""


@dataclass
class FinishedTrace:
    """The spans of one trace, ready to become a run."""

    trace_id: str
    spans: list[Span]
    part: int


@dataclass
class _Pending:
    spans: list[Span] = field(default_factory=list)
    last_seen: float = 0.0
    has_root: bool = False


class Collector:
    """Spans by trace id, and the finished traces (see the module docstring).

    Args:
        settle_s: seconds without a new span after the root arrived before a trace is done.
        stale_s: seconds without a new span before a trace without a root is done anyway.
    """

    def __init__(self, settle_s: float = 2.0, stale_s: float = 60.0) -> None:
        self.settle_s = settle_s
        self.stale_s = max(stale_s, settle_s)
        self._pending: dict[str, _Pending] = {}
        self._parts: dict[str, int] = {}
        self._lock = threading.Lock()
        self.requests = 0
        self.refused = 0
        self.spans = 0
        self.last_request = time.monotonic()

    def add(self, spans: list[Span]) -> None:
        """Buffer one request's spans (thread-safe)."""
        now = time.monotonic()
        with self._lock:
            self.requests += 1
            self.spans += len(spans)
            self.last_request = now
            for span in spans:
                pending = self._pending.setdefault(span.trace_id, _Pending())
                pending.spans.append(span)
                pending.last_seen = now
                pending.has_root = pending.has_root or span.parent_id is None

    def refuse(self) -> None:
        """Count a refused request (it still counts as activity for `--until-idle`)."""
        with self._lock:
            self.refused += 1
            self.last_request = time.monotonic()

    def finished(self, now: float | None = None) -> list[FinishedTrace]:
        """Take the traces that are done by now (monotonic seconds)."""
        moment = time.monotonic() if now is None else now
        with self._lock:
            done = [
                trace_id
                for trace_id, p in self._pending.items()
                if moment - p.last_seen >= (self.settle_s if p.has_root else self.stale_s)
            ]
            return [self._take(trace_id) for trace_id in done]

    def drain(self) -> list[FinishedTrace]:
        """Take every buffered trace, finished or not (shut-down)."""
        with self._lock:
            return [self._take(trace_id) for trace_id in list(self._pending)]

    def pending(self) -> int:
        """How many traces are buffered."""
        with self._lock:
            return len(self._pending)

    def _take(self, trace_id: str) -> FinishedTrace:
        pending = self._pending.pop(trace_id)
        part = self._parts.get(trace_id, 0) + 1
        self._parts[trace_id] = part
        return FinishedTrace(trace_id, pending.spans, part)


def receiver_app(collector: Collector) -> Starlette:
    """The ASGI app serving `POST /v1/traces` into `collector`."""

    async def traces(request: Request) -> Response:
        protobuf = request.headers.get("content-type", "").startswith(_PROTOBUF)
        body = await request.body()  # a hang-up here ends quietly (guard.quiet_hangups)
        try:
            spans = decode_request(
                body,
                request.headers.get("content-type", ""),
                request.headers.get("content-encoding", ""),
            )
        except BadRequest as exc:
            collector.refuse()
            return _status(exc.status, str(exc), protobuf)
        collector.add(spans)
        if protobuf:
            return Response(b"", media_type=_PROTOBUF)  # an empty ExportTraceServiceResponse
        return Response(b"{}", media_type="application/json")

    return Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])


def _status(code: int, message: str, protobuf: bool) -> Response:
    """A `google.rpc.Status` (code 3, the reason) as protobuf or JSON."""
    if protobuf:
        text = message.encode()
        body = bytes([0x08, _INVALID_ARGUMENT, 0x12]) + _varint(len(text)) + text
        return Response(body, status_code=code, media_type=_PROTOBUF)
    payload = json.dumps({"code": _INVALID_ARGUMENT, "message": message})
    return Response(payload, status_code=code, media_type="application/json")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
