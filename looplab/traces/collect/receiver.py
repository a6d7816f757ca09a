"""The OTLP/HTTP receiver: `POST /v1/traces` -> spans buffered per trace -> finished runs.

`Collector` holds the spans received, by trace id, and hands out the traces that are
finished: the root span (no parent) has arrived and no span of the trace for `settle_s`
seconds (children end, and so are exported, before their root; the settle time covers
batches still in flight), or no span for `stale_s` without a root (its process died or
never ends a root span). `drain()` hands out everything at shut-down. A span of a trace
already handed out starts a new part (`draft_run(part=N)`), never replacing the first.

Bounded and written once: a span id the collector has already taken (buffered, or written
in an earlier part) is dropped, so an exporter's retry changes nothing; a request that
would buffer more than `max_trace_spans` spans of one trace (413) or `max_spans` in all
(503, retryable once runs are written) is refused whole, with a line on stderr; accepted
spans go to the `Journal` (appended, fsynced) before the 200, and `restore` takes back what
a killed collector had accepted but not written.

`receiver_app(collector)` answers like an OpenTelemetry collector: 200 with an empty
`ExportTraceServiceResponse` in the request's encoding (with `partial_success` when some
spans were rejected as malformed); 400 (malformed body), 413 (too
large once inflated) or 415 (other content type or encoding) with a `google.rpc.Status`
whose message says why. A bad request changes nothing and the receiver keeps serving.
Given an `EventCollector`, it also serves `POST /v1/logs` (the coding CLIs' events:
`collect/telemetry/`), and given a `MetricsCollector` `POST /v1/metrics` (histograms:
`metrics.py`), answered the same way.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from rich.markup import escape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from looplab.console import err_console
from looplab.traces.collect.journal import Journal, Recovered
from looplab.traces.collect.logs import decode_logs
from looplab.traces.collect.metrics import MetricsCollector, decode_metrics
from looplab.traces.collect.spans import BadRequest, Span, decode_request
from looplab.traces.collect.telemetry.events import EventCollector

__all__ = ["Collector", "FinishedTrace", "receiver_app"]

_PROTOBUF = "application/x-protobuf"
_INVALID_ARGUMENT = 3
MAX_TRACE_SPANS = 250_000
"""Default cap on the spans buffered for one trace."""
MAX_SPANS = 1_000_000
"""Default cap on the spans buffered in all (about 0.5 KB each once reduced to `KEPT_KEYS`)."""
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
        max_trace_spans: most spans buffered for one trace.
        max_spans: most spans buffered in all.
        journal: where accepted spans are journalled before the answer (None: nowhere).
    """

    def __init__(
        self,
        settle_s: float = 2.0,
        stale_s: float = 60.0,
        max_trace_spans: int = MAX_TRACE_SPANS,
        max_spans: int = MAX_SPANS,
        journal: Journal | None = None,
    ) -> None:
        self.settle_s = settle_s
        self.stale_s = max(stale_s, settle_s)
        self.max_trace_spans = max_trace_spans
        self.max_spans = max_spans
        self.journal = journal
        self._pending: dict[str, _Pending] = {}
        self._parts: dict[str, int] = {}
        self._seen: dict[str, set[str]] = {}
        self._lock = threading.Lock()
        self.requests = 0
        self.refused = 0
        self.spans = 0
        self.duplicates = 0
        self.buffered = 0
        self.last_request = time.monotonic()

    def add(self, spans: list[Span]) -> None:
        """Journal and buffer one request's new spans (thread-safe); all or none.

        Raises:
            BadRequest: a cap would be passed (413 one trace, 503 in all) or the journal
                cannot be written (503); nothing of the request is kept.
        """
        now = time.monotonic()
        with self._lock:
            self.requests += 1
            self.last_request = now
            fresh = self._fresh(spans)
            self._check_caps(fresh)
            if self.journal is not None and fresh:
                try:
                    self.journal.append(fresh)
                except OSError as exc:
                    raise self._refusal(f"cannot journal the spans: {exc}", 503) from None
            self.spans += len(fresh)
            self.duplicates += len(spans) - len(fresh)
            self.buffered += len(fresh)
            for span in fresh:
                self._buffer(span, now)

    def restore(self, journalled: dict[str, Recovered]) -> int:
        """Take back a journal's state (at start): parts written, ids seen, spans to write.

        Returns:
            How many spans were buffered again.
        """
        now = time.monotonic()
        with self._lock:
            for trace_id, state in journalled.items():
                self._parts[trace_id] = state.written
                self._seen[trace_id] = set(state.seen)
                for span in state.pending:
                    self._buffer(span, now)
                self.buffered += len(state.pending)
            return sum(len(s.pending) for s in journalled.values())

    def _fresh(self, spans: list[Span]) -> list[Span]:
        """The spans whose id this collector has not taken yet (a retry's are dropped)."""
        fresh: list[Span] = []
        added: set[tuple[str, str]] = set()
        for span in spans:
            key = (span.trace_id, span.span_id)
            if key in added or span.span_id in self._seen.get(span.trace_id, ()):
                continue
            added.add(key)
            fresh.append(span)
        return fresh

    def _check_caps(self, fresh: list[Span]) -> None:
        per_trace: dict[str, int] = {}
        for span in fresh:
            per_trace[span.trace_id] = per_trace.get(span.trace_id, 0) + 1
        for trace_id, n in per_trace.items():
            pending = self._pending.get(trace_id)
            held = len(pending.spans) if pending is not None else 0
            if held + n > self.max_trace_spans:
                raise self._refusal(
                    f"trace {trace_id}: {held} spans buffered + {n} would pass the cap of "
                    f"{self.max_trace_spans} spans per trace (--max-trace-spans)",
                    413,
                )
        if self.buffered + len(fresh) > self.max_spans:
            raise self._refusal(
                f"{self.buffered} spans buffered + {len(fresh)} would pass the cap of "
                f"{self.max_spans} spans in all (--max-spans); retry once runs are written",
                503,
            )

    def _refusal(self, message: str, status: int) -> BadRequest:
        err_console().print(f"[bold red]refused a request:[/] {escape(message)}", highlight=False)
        return BadRequest(message, status)

    def _buffer(self, span: Span, now: float) -> None:
        pending = self._pending.setdefault(span.trace_id, _Pending())
        pending.spans.append(span)
        pending.last_seen = now
        pending.has_root = pending.has_root or span.parent_id is None
        self._seen.setdefault(span.trace_id, set()).add(span.span_id)

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
        self.buffered -= len(pending.spans)
        part = self._parts.get(trace_id, 0) + 1
        self._parts[trace_id] = part
        return FinishedTrace(trace_id, pending.spans, part)


def receiver_app(
    collector: Collector,
    events: EventCollector | None = None,
    metrics: MetricsCollector | None = None,
) -> Starlette:
    """The ASGI app serving `POST /v1/traces` into `collector`, and, given them,
    `POST /v1/logs` (the coding CLIs' events) into `events` and `POST /v1/metrics`
    (histograms) into `metrics`."""

    async def traces(request: Request) -> Response:
        protobuf = request.headers.get("content-type", "").startswith(_PROTOBUF)
        body = await request.body()  # a hang-up here ends quietly (guard.quiet_hangups)
        try:
            decoded = decode_request(
                body,
                request.headers.get("content-type", ""),
                request.headers.get("content-encoding", ""),
            )
            collector.add(decoded.spans)
        except BadRequest as exc:
            collector.refuse()
            return _status(exc.status, str(exc), protobuf)
        return _accepted(decoded.rejected, protobuf)

    routes = [Route("/v1/traces", traces, methods=["POST"])]
    if events is not None:
        routes.append(Route("/v1/logs", _logs_endpoint(events), methods=["POST"]))
    if metrics is not None:
        routes.append(Route("/v1/metrics", _metrics_endpoint(metrics), methods=["POST"]))
    return Starlette(routes=routes)


def _logs_endpoint(events: EventCollector) -> Callable[[Request], Awaitable[Response]]:
    """`POST /v1/logs`: an `ExportLogsServiceRequest` into `events`; 200 with an empty
    `ExportLogsServiceResponse`, or a `google.rpc.Status` saying why not."""

    async def logs(request: Request) -> Response:
        protobuf = request.headers.get("content-type", "").startswith(_PROTOBUF)
        body = await request.body()
        try:
            records = decode_logs(
                body,
                request.headers.get("content-type", ""),
                request.headers.get("content-encoding", ""),
            )
            events.add(records)
        except BadRequest as exc:
            return _status(exc.status, str(exc), protobuf)
        if protobuf:
            return Response(b"", media_type=_PROTOBUF)
        return Response(b"{}", media_type="application/json")

    return logs


def _metrics_endpoint(metrics: MetricsCollector) -> Callable[[Request], Awaitable[Response]]:
    """`POST /v1/metrics`: an `ExportMetricsServiceRequest`'s histograms into `metrics`;
    200 with an empty `ExportMetricsServiceResponse`, or a `google.rpc.Status`."""

    async def receive(request: Request) -> Response:
        protobuf = request.headers.get("content-type", "").startswith(_PROTOBUF)
        body = await request.body()
        try:
            decoded = decode_metrics(
                body,
                request.headers.get("content-type", ""),
                request.headers.get("content-encoding", ""),
            )
        except BadRequest as exc:
            return _status(exc.status, str(exc), protobuf)
        metrics.add(decoded, time.monotonic())
        if protobuf:
            return Response(b"", media_type=_PROTOBUF)
        return Response(b"{}", media_type="application/json")

    return receive


def _accepted(rejected: list[str], protobuf: bool) -> Response:
    """200: an `ExportTraceServiceResponse`, empty, or with `partial_success` saying how
    many spans were rejected as malformed and why (the first reason; also on stderr)."""
    if not rejected:
        if protobuf:
            return Response(b"", media_type=_PROTOBUF)
        return Response(b"{}", media_type="application/json")
    message = f"{len(rejected)} malformed span(s) rejected, the first: {rejected[0]}"
    err_console().print(escape(message), style="yellow", highlight=False)
    if protobuf:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        answer = ExportTraceServiceResponse()
        answer.partial_success.rejected_spans = len(rejected)
        answer.partial_success.error_message = message
        return Response(answer.SerializeToString(), media_type=_PROTOBUF)
    partial = {"rejectedSpans": str(len(rejected)), "errorMessage": message}
    return Response(json.dumps({"partialSuccess": partial}), media_type="application/json")


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
