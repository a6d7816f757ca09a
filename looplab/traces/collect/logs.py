"""OTLP/HTTP log request bodies -> `LogRecord`s (events): protobuf or JSON, as spans are.

`decode_logs(body, content_type, content_encoding)` reads one `ExportLogsServiceRequest`
(`resourceLogs[].scopeLogs[].logRecords[]`) into flat `LogRecord`s. The coding CLIs send
their events this way (Claude Code `claude_code.api_request`, Codex `codex.sse_event`,
Gemini CLI `gemini_cli.api_response`); `collect/telemetry/` turns them into runs.

The event's name is the record's `eventName` (OTLP 1.5), else its `event.name` attribute,
else its body when the body is a dotted name (Claude Code sends the qualified name as the
body and the short one as `event.name`): the first qualified one (with a dot) wins. Its
time is `timeUnixNano`, else `observedTimeUnixNano`, else the `event.timestamp` attribute
(ISO 8601). Body decoding, ids, bounded values and repairs are `spans.py`'s (one reader of
OTLP/JSON values); attributes are kept whole except that a string past
`MAX_STRING_CHARS` is cut (tool outputs) and at most `MAX_ATTRIBUTES` are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from looplab.traces.collect.documents import export_document
from looplab.traces.collect.spans import (
    BadRequest,
    _dict,
    _id,
    _list,
    _nanos,
    _text,
    _value,
)

__all__ = ["MAX_ATTRIBUTES", "MAX_STRING_CHARS", "LogRecord", "decode_logs"]

MAX_ATTRIBUTES = 128
"""Attributes read per record (the rest are ignored)."""
MAX_STRING_CHARS = 4096
"""A longer string attribute is cut (a tool's output needs no more to be counted)."""


@dataclass(slots=True)
class LogRecord:
    """One received event: its qualified name, time (epoch seconds) and attributes."""

    name: str
    time: float | None
    attributes: dict[str, Any]
    resource: dict[str, Any] = field(default_factory=dict)
    trace_id: str | None = None
    span_id: str | None = None
    repaired: tuple[str, ...] = ()
    """Values dropped or cleaned at the door (`where: why`), for the run's notes."""

    def short_name(self, prefix: str) -> str:
        """The name without `prefix` (`claude_code.api_request` -> `api_request`)."""
        return self.name[len(prefix) :] if self.name.startswith(prefix) else self.name


def decode_logs(body: bytes, content_type: str, content_encoding: str = "") -> list[LogRecord]:
    """Every record of one OTLP/HTTP logs export.

    Args:
        body: the raw request body.
        content_type: `application/x-protobuf` or `application/json` (parameters ignored).
        content_encoding: `gzip`, `deflate`, `identity` or empty.

    Raises:
        BadRequest: an unsupported type (415) or encoding, a body that does not decompress
            or decode, or one that is not a logs export (named where).
    """
    document = export_document(body, content_type, content_encoding, _logs_request, "resourceLogs")
    records: list[LogRecord] = []
    for r, resource_logs in enumerate(_list(document, "resourceLogs", "body")):
        where = f"resourceLogs[{r}]"
        owner = _dict(_dict(resource_logs, where).get("resource"), where)
        resource = _attributes(owner, [])
        for s, scope in enumerate(_list(resource_logs, "scopeLogs", where)):
            inner = f"{where}.scopeLogs[{s}]"
            for n, raw in enumerate(_list(_dict(scope, inner), "logRecords", inner)):
                records.append(_record(_dict(raw, f"{inner}.logRecords[{n}]"), resource))
    return records


def _logs_request() -> Any:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    return ExportLogsServiceRequest()


def _record(raw: dict[str, Any], resource: dict[str, Any]) -> LogRecord:
    notes: list[str] = []
    attributes = _attributes(raw, notes)
    body = raw.get("body")
    body_text = _value(body, "body", notes) if isinstance(body, dict) else None
    named = [
        raw.get("eventName"),
        attributes.get("event.name"),
        body_text if isinstance(body_text, str) and " " not in body_text else None,
    ]
    names = [_text(n, "event name", notes) for n in named if isinstance(n, str) and n]
    name = next((n for n in names if "." in n), names[0] if names else "")
    time = _nanos(raw.get("timeUnixNano"), "timeUnixNano", notes)
    if time is None:
        time = _nanos(raw.get("observedTimeUnixNano"), "observedTimeUnixNano", notes)
    if time is None:
        time = _iso(attributes.get("event.timestamp"))
    return LogRecord(
        name=name,
        time=time,
        attributes=attributes,
        resource=resource,
        trace_id=_quiet_id(raw.get("traceId"), 16),
        span_id=_quiet_id(raw.get("spanId"), 8),
        repaired=tuple(notes),
    )


def _attributes(owner: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in _list(owner, "attributes", "attributes")[:MAX_ATTRIBUTES]:
        entry = _dict(item, "attributes")
        key = entry.get("key")
        if isinstance(key, str):
            value = _value(_dict(entry.get("value"), f"attribute {key}"), key, notes)
            if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
                value = value[:MAX_STRING_CHARS]
            out[key] = value
    return out


def _quiet_id(value: Any, size: int) -> str | None:
    """A trace or span id, or None when absent or malformed (events need neither)."""
    try:
        return _id(value, size, "id")
    except BadRequest:
        return None


def _iso(value: Any) -> float | None:
    """Epoch seconds of an ISO 8601 time (`2026-12-07T12:00:00.123Z`), else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()
