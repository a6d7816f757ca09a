"""OTLP/HTTP trace request bodies -> `Span`s: protobuf or JSON, gzip/deflate or plain.

`decode_request(body, content_type, content_encoding)` reads one
`ExportTraceServiceRequest` (`resourceSpans[].scopeSpans[].spans[]`) into flat `Span`s,
each with its resource's attributes. Protobuf goes through `opentelemetry-proto` (the
looplab[collect] extra) and `json_format.MessageToDict`, so both encodings meet in one
reader of the OTLP/JSON shape. Ids are hex (OTLP/JSON) or base64 (the protobuf JSON
mapping); 64-bit integers may be strings. Anything else is a `BadRequest` naming where.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_DECODED_BYTES", "BadRequest", "Span", "decode_request"]

MAX_DECODED_BYTES = 64 * 1024 * 1024
"""Largest body after decompression (a small gzip body can inflate a thousandfold)."""

STATUS_ERROR = 2
"""OTLP `Status.code` of a failed span."""


class BadRequest(ValueError):
    """A request body that is not an OTLP trace export (the message says where and why)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class SpanEvent:
    """A span event: its name and time (epoch seconds)."""

    name: str
    time: float | None


@dataclass
class Span:
    """One received span, times in epoch seconds, attributes flattened to Python values."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float | None
    end: float | None
    attributes: dict[str, Any]
    resource: dict[str, Any] = field(default_factory=dict)
    events: list[SpanEvent] = field(default_factory=list)
    status_code: int = 0
    status_message: str = ""


def decode_request(body: bytes, content_type: str, content_encoding: str = "") -> list[Span]:
    """Every span of one OTLP/HTTP trace export.

    Args:
        body: the raw request body.
        content_type: `application/x-protobuf` or `application/json` (parameters ignored).
        content_encoding: `gzip`, `deflate`, `identity` or empty.

    Raises:
        BadRequest: an unsupported type (415) or encoding, a body that does not decompress
            or decode, or a span without its ids.
    """
    data = _decompress(body, content_encoding.strip().lower())
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/x-protobuf":
        document = _protobuf_document(data)
    elif kind == "application/json":
        try:
            document = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise BadRequest(f"body is not JSON: {exc}") from None
    else:
        raise BadRequest(
            f"content-type {kind or '(none)'!r}: expected application/x-protobuf or "
            "application/json",
            status=415,
        )
    return _spans(document)


def _decompress(body: bytes, encoding: str) -> bytes:
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise BadRequest(f"content-encoding {encoding!r}: expected gzip, deflate or none", 415)
    inflater = zlib.decompressobj(wbits=47)  # 32+15: gzip or zlib header, detected
    try:
        data = inflater.decompress(body, MAX_DECODED_BYTES)
    except zlib.error as exc:
        raise BadRequest(f"body does not decompress as {encoding}: {exc}") from None
    if inflater.unconsumed_tail:
        raise BadRequest(f"body inflates past {MAX_DECODED_BYTES} bytes", status=413)
    return data


def _protobuf_document(data: bytes) -> Any:
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except (DecodeError, RecursionError) as exc:
        raise BadRequest(f"body is not an ExportTraceServiceRequest protobuf: {exc}") from None
    return json_format.MessageToDict(request, use_integers_for_enums=True)


def _spans(document: Any) -> list[Span]:
    if not isinstance(document, dict):
        raise BadRequest("body: expected an object with resourceSpans")
    spans: list[Span] = []
    for r, resource_spans in enumerate(_list(document, "resourceSpans", "body")):
        where = f"resourceSpans[{r}]"
        resource = _attributes(_dict(_dict(resource_spans, where).get("resource"), where))
        for s, scope in enumerate(_list(resource_spans, "scopeSpans", where)):
            inner = f"{where}.scopeSpans[{s}]"
            for n, raw in enumerate(_list(_dict(scope, inner), "spans", inner)):
                spans.append(_span(_dict(raw, f"{inner}.spans[{n}]"), resource, f"{inner}[{n}]"))
    return spans


def _span(raw: dict[str, Any], resource: dict[str, Any], where: str) -> Span:
    trace_id = _id(raw.get("traceId"), 16, f"{where}.traceId")
    span_id = _id(raw.get("spanId"), 8, f"{where}.spanId")
    if trace_id is None or span_id is None:
        raise BadRequest(f"{where}: a span needs traceId and spanId")
    status = _dict(raw.get("status"), f"{where}.status")
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(raw.get("parentSpanId"), 8, f"{where}.parentSpanId"),
        name=str(raw.get("name") or ""),
        start=_nanos(raw.get("startTimeUnixNano"), f"{where}.startTimeUnixNano"),
        end=_nanos(raw.get("endTimeUnixNano"), f"{where}.endTimeUnixNano"),
        attributes=_attributes(raw),
        resource=resource,
        events=[
            SpanEvent(
                str(_dict(e, where).get("name") or ""),
                _nanos(e.get("timeUnixNano"), f"{where}.events"),
            )
            for e in _list(raw, "events", where)
        ],
        status_code=_int(status.get("code", 0), f"{where}.status.code"),
        status_message=str(status.get("message") or ""),
    )


def _dict(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _list(owner: Any, key: str, where: str) -> list[Any]:
    value = _dict(owner, where).get(key) or []
    if not isinstance(value, list):
        raise BadRequest(f"{where}.{key}: expected a list, got {type(value).__name__}")
    return value


def _id(value: Any, size: int, where: str) -> str | None:
    """Hex id of `size` bytes from hex (OTLP/JSON) or base64 (protobuf JSON); empty = None."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and len(value) == size * 2:
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = b""
    else:
        try:
            raw = base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            raw = b""
    if len(raw) != size:
        raise BadRequest(f"{where}: expected {size * 2} hex digits, got {str(value)[:40]!r}")
    return None if not any(raw) else raw.hex()


def _int(value: Any, where: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{where}: expected an integer, got {str(value)[:40]!r}") from None


def _nanos(value: Any, where: str) -> float | None:
    nanos = _int(value, where) if value not in (None, "") else 0
    return nanos / 1e9 if nanos > 0 else None


def _attributes(owner: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in _list(owner, "attributes", "attributes"):
        entry = _dict(item, "attributes")
        key = entry.get("key")
        if isinstance(key, str):
            out[key] = _value(_dict(entry.get("value"), f"attribute {key}"))
    return out


def _value(value: dict[str, Any]) -> Any:
    """An OTLP `AnyValue` as a Python value (int64 strings as int, arrays as lists)."""
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return _int(value["intValue"], "intValue")
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError):
            return None
    if "arrayValue" in value:
        items = _dict(value["arrayValue"], "arrayValue").get("values") or []
        return [_value(_dict(v, "arrayValue")) for v in items] if isinstance(items, list) else []
    return None
