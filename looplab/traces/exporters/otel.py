"""Traces -> OTLP JSON with the OpenTelemetry GenAI semantic conventions.

`export_otel(trace)` returns one OTLP/JSON `ExportTraceServiceRequest`
(`resourceSpans[].scopeSpans[].spans[]`) that Jaeger, Phoenix and OTLP collectors load:
a span per run (`invoke_agent`), per step (child of the run), per model call (`chat`) and
per tool call (`execute_tool`), both children of their step. Times are
`wall_time of the run origin + offsets on the run axis`, in Unix nanoseconds as strings
(OTLP/JSON encodes 64-bit integers as strings). Ids are derived from the run id and the
event's position, so exporting the same trace twice gives the same ids.

Attributes follow the GenAI conventions (`gen_ai.operation.name`, `gen_ai.request.model`,
`gen_ai.response.model`, `gen_ai.response.id`, `gen_ai.response.finish_reasons`,
`gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, `gen_ai.tool.name`,
`gen_ai.tool.call.id`, `gen_ai.agent.name`, `gen_ai.conversation.id`,
`gen_ai.provider.name`, `server.address`, `server.port`); looplab's own
timings and provenance go under `looplab.*` (`looplab.ttft_s`, `looplab.estimated.<field>`).
"""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from looplab.traces.io import Trace
from looplab.traces.schema import ModelCallEvent, StepEvent, ToolCallEvent, TraceHeader

__all__ = ["export_otel", "export_otel_many"]

_SPAN_KIND_INTERNAL = 1
_SPAN_KIND_CLIENT = 3
_STATUS_UNSET, _STATUS_OK, _STATUS_ERROR = 0, 1, 2
# The instrumentation scope's name is a stable identifier of these exports (a collector or
# a query may select by it), not the module's path: it keeps the name it had before the
# exporters moved to `traces/exporters/`.
_SCOPE = {"name": "looplab.traces.otel", "version": "1"}


def export_otel(trace: Trace) -> dict[str, Any]:
    """One trace as an OTLP/JSON request.

    Args:
        trace: a parsed trace (ours or imported).

    Returns:
        `{"resourceSpans": [...]}`, ready for `json.dumps`.
    """
    return export_otel_many([trace])


def export_otel_many(traces: list[Trace]) -> dict[str, Any]:
    """Several traces as one OTLP/JSON request (one resourceSpans entry per trace)."""
    return {"resourceSpans": [_resource_spans(t) for t in traces]}


def _resource_spans(trace: Trace) -> dict[str, Any]:
    header = trace.header
    run_id = header.run_id
    trace_id = _hex(run_id, "trace", 16)
    origin = _origin_ns(trace)
    run_span_id = _hex(run_id, "run", 8)
    end = trace.end
    last = max((e.end for e in trace.events), default=0.0)
    endpoint = _endpoint(header)
    run_attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": header.agent or "looplab",
        "gen_ai.conversation.id": run_id,
        "looplab.source": header.source,
        "looplab.clock": header.clock,
        "looplab.task": header.task,
        "looplab.absent": ",".join(header.absent),
        **endpoint,
    }
    if header.model:
        run_attrs["gen_ai.request.model"] = header.model
    if end is not None:
        run_attrs.update(
            {
                "looplab.end_reason": end.end_reason,
                "looplab.steps": end.steps,
                "looplab.success": end.success,
                "looplab.model_s": end.model_s,
                "looplab.tool_s": end.tool_s,
            }
        )
    spans = [
        _span(
            trace_id,
            run_span_id,
            None,
            f"invoke_agent {header.agent or header.task or run_id}",
            _SPAN_KIND_INTERNAL,
            origin,
            0.0,
            end.end if end is not None else last,
            run_attrs,
            _STATUS_ERROR if end is not None and end.error else _STATUS_UNSET,
            end.error if end is not None else None,
        )
    ]
    step_spans, step_ids = _step_spans(trace, trace_id, run_span_id, origin)
    spans += step_spans
    for index, event in enumerate(trace.events):
        parent = step_ids.get(event.step, run_span_id) if event.step is not None else None
        if isinstance(event, ModelCallEvent):
            spans.append(
                _model_span(trace_id, run_id, index, parent or run_span_id, origin, event, endpoint)
            )
        elif isinstance(event, ToolCallEvent):
            spans.append(_tool_span(trace_id, run_id, index, parent or run_span_id, origin, event))
    resource = {
        "attributes": _attributes(
            {"service.name": "looplab", "looplab.run_id": run_id, "looplab.source": header.source}
        )
    }
    return {"resource": resource, "scopeSpans": [{"scope": _SCOPE, "spans": spans}]}


def _step_spans(
    trace: Trace, trace_id: str, run_span_id: str, origin: int
) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """A span per step (children of the run span), and each step's span id."""
    run_id = trace.header.run_id
    spans: list[dict[str, Any]] = []
    step_ids: dict[int, str] = {}
    for event in trace.events:
        if isinstance(event, StepEvent) and event.step is not None:
            span_id = _hex(run_id, f"step{event.step}", 8)
            step_ids[event.step] = span_id
            spans.append(
                _span(
                    trace_id,
                    span_id,
                    run_span_id,
                    f"step {event.step}",
                    _SPAN_KIND_INTERNAL,
                    origin,
                    event.start,
                    event.end,
                    {
                        "looplab.step": event.step,
                        "looplab.model_s": event.model_s,
                        "looplab.tool_s": event.tool_s,
                        "looplab.overhead_s": event.overhead_s,
                        **_estimated(event.estimated),
                    },
                )
            )
    return spans, step_ids


def _endpoint(header: TraceHeader) -> dict[str, Any]:
    """`gen_ai.provider.name` and `server.address`/`server.port` of the run's backend:
    `looplab` for the simulator (a custom provider value), `openai` for any other endpoint
    looplab or `looplab wrap` talked to (the OpenAI API, through the `openai` client, as its
    instrumentation reports it); address and port from the base URL (never credentials).
    Imported runs do not record their provider: none is invented."""
    backend = header.backend
    url = backend.get("base_url") or backend.get("upstream")
    attrs: dict[str, Any] = {}
    if backend.get("kind") == "simulated":
        attrs["gen_ai.provider.name"] = "looplab"
    elif header.source in ("looplab", "wrap"):
        attrs["gen_ai.provider.name"] = "openai"
    if isinstance(url, str) and "://" in url:
        parts = urlsplit(url)
        attrs["server.address"] = parts.hostname
        default = 443 if parts.scheme == "https" else 80
        try:
            attrs["server.port"] = parts.port or default
        except ValueError:
            attrs["server.port"] = default
    return attrs


def _model_span(
    trace_id: str,
    run_id: str,
    index: int,
    parent: str,
    origin: int,
    event: ModelCallEvent,
    endpoint: dict[str, Any],
) -> dict[str, Any]:
    model = event.model or ""
    attrs: dict[str, Any] = {
        **endpoint,
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model or None,
        "gen_ai.response.model": model or None,
        "gen_ai.response.id": event.request_id,
        "gen_ai.usage.input_tokens": event.prompt_tokens,
        "gen_ai.usage.output_tokens": event.completion_tokens,
        "gen_ai.usage.cache_read.input_tokens": event.cached_tokens,
        "gen_ai.usage.reasoning.output_tokens": event.reasoning_tokens,
        "looplab.step": event.step,
        "looplab.ttft_s": event.ttft_s,
        "looplab.decode_s": event.decode_s,
        "looplab.profile": event.profile,
        **_estimated(event.estimated),
    }
    if event.finish_reason:
        attrs["gen_ai.response.finish_reasons"] = [event.finish_reason]
    return _span(
        trace_id,
        _hex(run_id, f"event{index}", 8),
        parent,
        f"chat {model}".strip(),
        _SPAN_KIND_CLIENT,
        origin,
        event.start,
        event.end,
        attrs,
        _STATUS_ERROR if event.attempts and not event.message else _STATUS_UNSET,
        None,
    )


def _tool_span(
    trace_id: str, run_id: str, index: int, parent: str, origin: int, event: ToolCallEvent
) -> dict[str, Any]:
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": event.name,
        "gen_ai.tool.call.id": event.call_id,
        "gen_ai.tool.type": "function",
        "looplab.step": event.step,
        "looplab.exit_code": event.exit_code,
        "looplab.output_chars": event.output_chars,
        **_estimated(event.estimated),
    }
    status = _STATUS_UNSET if event.ok is None else (_STATUS_OK if event.ok else _STATUS_ERROR)
    return _span(
        trace_id,
        _hex(run_id, f"event{index}", 8),
        parent,
        f"execute_tool {event.name}",
        _SPAN_KIND_INTERNAL,
        origin,
        event.start,
        event.end,
        attrs,
        status,
        event.error,
    )


def _span(
    trace_id: str,
    span_id: str,
    parent: str | None,
    name: str,
    kind: int,
    origin: int,
    start: float,
    end: float,
    attrs: dict[str, Any],
    status: int = _STATUS_UNSET,
    message: str | None = None,
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(origin + round(start * 1e9)),
        "endTimeUnixNano": str(origin + round(max(end, start) * 1e9)),
        "attributes": _attributes(attrs),
        "status": {"code": status, **({"message": message[:1000]} if message else {})},
    }
    if parent is not None:
        span["parentSpanId"] = parent
    return span


def _origin_ns(trace: Trace) -> int:
    wall: datetime | None = None
    offset = 0.0
    for event in trace.events:
        if event.wall_time is not None:
            wall, offset = event.wall_time, event.start
            break
    if wall is None:
        wall = trace.header.created
    if wall.tzinfo is None:
        wall = wall.replace(tzinfo=UTC)
    whole = wall - datetime(1970, 1, 1, tzinfo=UTC)
    nanos = (whole.days * 86_400 + whole.seconds) * 1_000_000_000 + whole.microseconds * 1000
    return nanos - round(offset * 1e9)


def _estimated(estimated: dict[str, str]) -> dict[str, Any]:
    return {f"looplab.estimated.{k}": v for k, v in estimated.items()}


def _hex(run_id: str, what: str, size: int) -> str:
    return hashlib.sha256(f"{run_id}\0{what}".encode()).hexdigest()[: size * 2]


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in values.items():
        encoded = _value(value)
        if encoded is not None:
            out.append({"key": key, "value": encoded})
    return out


def _value(value: Any) -> dict[str, Any] | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):  # OTLP/JSON has no NaN or infinity: those go as text
        return {"doubleValue": value} if math.isfinite(value) else {"stringValue": str(value)}
    if isinstance(value, list):
        return {"arrayValue": {"values": [v for v in (_value(x) for x in value) if v]}}
    return {"stringValue": str(value)}
