"""OTLP/HTTP trace request bodies -> `Span`s: protobuf or JSON, gzip/deflate or plain.

`decode_request(body, content_type, content_encoding)` reads one `ExportTraceServiceRequest`
(`resourceSpans[].scopeSpans[].spans[]`) into flat `Span`s, each with its resource's
attributes. Protobuf goes through `opentelemetry-proto` (the looplab[collect] extra) and
`json_format.MessageToDict`, so both encodings meet in one reader of the OTLP/JSON shape
(`documents.py` decodes the body, each span on its own, so one malformed or over-nested span
is rejected alone, with OTLP `partial_success`). Ids are hex (OTLP/JSON) or base64 (the
protobuf JSON mapping); 64-bit integers may be strings. A body that is not an export is a
`BadRequest` naming where. Values are bounded at this door: an integer outside int64, a
non-finite double, a time outside 2001..2100 is dropped, and a string that is not valid
UTF-8 (a lone surrogate) has the offending characters replaced; each such repair is said in
the span's `repaired` (the run's notes). Only the attributes a reader uses are kept
(`KEPT_KEYS`).
"""

from __future__ import annotations

import base64
import binascii
import math
import sys
from dataclasses import dataclass, field
from typing import Any

from looplab.traces.collect.conventions import KEPT_KEYS, KEPT_RESOURCE_KEYS
from looplab.traces.collect.documents import (
    MAX_DECODED_BYTES,
    BadRequest,
    Unreadable,
    decompress,
    json_document,
    protobuf_document,
)

__all__ = ["MAX_DECODED_BYTES", "BadRequest", "DecodedSpans", "Span", "decode_request"]

_INT64 = 2**63
_NANOS = (978_307_200 * 10**9, 4_102_444_800 * 10**9)
"""Span times accepted: 2001-01-01 .. 2100-01-01 (ns); outside, a time is damage."""

STATUS_ERROR = 2
"""OTLP `Status.code` of a failed span."""
STATUS_OK = 1
"""OTLP `Status.code` of a span its code marked successful."""


@dataclass(slots=True)
class SpanEvent:
    """A span event: its name and time (epoch seconds)."""

    name: str
    time: float | None


@dataclass(slots=True)
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
    events: tuple[SpanEvent, ...] = ()
    status_code: int = 0
    status_message: str = ""
    repaired: tuple[str, ...] = ()
    """Values dropped or cleaned at the door (`where: why`), for the run's notes."""


@dataclass
class DecodedSpans:
    """One export's spans, and the reasons of the spans rejected as malformed."""

    spans: list[Span]
    rejected: list[str] = field(default_factory=list)


def decode_request(body: bytes, content_type: str, content_encoding: str = "") -> DecodedSpans:
    """Every well-formed span of one OTLP/HTTP trace export (and why the others are not).

    Args:
        body: the raw request body.
        content_type: `application/x-protobuf` or `application/json` (parameters ignored).
        content_encoding: `gzip`, `deflate`, `identity` or empty.

    Raises:
        BadRequest: an unsupported type (415) or encoding, a body that does not decompress
            or decode, or one whose every span is malformed (one malformed span among
            good ones is only rejected: `DecodedSpans.rejected`).
    """
    data = decompress(body, content_encoding)
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/x-protobuf":
        document = protobuf_document(data)
    elif kind == "application/json":
        document = json_document(data)
    else:
        raise BadRequest(
            f"content-type {kind or '(none)'!r}: expected application/x-protobuf or "
            "application/json",
            status=415,
        )
    return _spans(document)


def _spans(document: Any) -> DecodedSpans:
    """The spans of an export; a malformed span is rejected alone (its reason kept), and
    only a body with nothing but malformed spans is a `BadRequest`."""
    if not isinstance(document, dict):
        raise BadRequest("body: expected an object with resourceSpans")
    spans: list[Span] = []
    rejected: list[str] = []
    for r, resource_spans in enumerate(_list(document, "resourceSpans", "body")):
        where = f"resourceSpans[{r}]"
        owner = _dict(resource_spans, where).get("resource")
        unreadable = owner if isinstance(owner, Unreadable) else None
        resource = {} if unreadable else _attributes(_dict(owner, where), KEPT_RESOURCE_KEYS, [])
        for s, scope in enumerate(_list(resource_spans, "scopeSpans", where)):
            inner = f"{where}.scopeSpans[{s}]"
            for n, raw in enumerate(_list(_dict(scope, inner), "spans", inner)):
                try:
                    if isinstance(raw, Unreadable) or unreadable:
                        of = f"{where}.resource" if unreadable else f"{inner}.spans[{n}]"
                        raise BadRequest(f"{of}: {(unreadable or raw).reason}")
                    spans.append(
                        _span(_dict(raw, f"{inner}.spans[{n}]"), resource, f"{inner}[{n}]")
                    )
                except BadRequest as exc:
                    rejected.append(str(exc))
    if rejected and not spans:
        raise BadRequest(f"every span is malformed ({len(rejected)}), the first: {rejected[0]}")
    return DecodedSpans(spans, rejected)


def _span(raw: dict[str, Any], resource: dict[str, Any], where: str) -> Span:
    trace_id = _id(raw.get("traceId"), 16, f"{where}.traceId")
    span_id = _id(raw.get("spanId"), 8, f"{where}.spanId")
    if trace_id is None or span_id is None:
        raise BadRequest(f"{where}: a span needs traceId and spanId")
    status = _dict(raw.get("status"), f"{where}.status")
    notes: list[str] = []
    code = _bounded(_int(status.get("code", 0), f"{where}.status.code"), "status.code", notes)
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(raw.get("parentSpanId"), 8, f"{where}.parentSpanId"),
        name=_text(raw.get("name") or "", "name", notes),
        start=_nanos(raw.get("startTimeUnixNano"), "startTimeUnixNano", notes),
        end=_nanos(raw.get("endTimeUnixNano"), "endTimeUnixNano", notes),
        attributes=_attributes(raw, KEPT_KEYS, notes),
        resource=resource,
        events=tuple(
            SpanEvent(
                _text(_dict(e, where).get("name") or "", "event name", notes),
                _nanos(e.get("timeUnixNano"), "event timeUnixNano", notes),
            )
            for e in _list(raw, "events", where)
        ),
        status_code=code or 0,
        status_message=_text(status.get("message") or "", "status.message", notes),
        repaired=tuple(notes),
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
    return None if not any(raw) else sys.intern(raw.hex())  # a trace's ids repeat


def _int(value: Any, where: str) -> int | None:
    """An integer (JSON number or decimal string); None for an infinite or NaN number.

    Raises:
        BadRequest: neither a number nor a decimal string.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{where}: expected an integer, got {str(value)[:40]!r}") from None


def _bounded(value: int | None, where: str, notes: list[str]) -> int | None:
    """`value` when it fits an int64, else None (said in `notes`)."""
    if value is not None and -_INT64 <= value < _INT64:
        return value
    notes.append(f"{where}: not a finite int64, dropped")
    return None


def _nanos(value: Any, where: str, notes: list[str]) -> float | None:
    """Epoch seconds of a time in ns; None when absent (0) or out of 2001..2100."""
    if value in (None, "", 0, "0"):
        return None
    nanos = _int(value, where)
    if nanos is None or not _NANOS[0] <= nanos <= _NANOS[1]:
        notes.append(f"{where}: {str(value)[:24]!r} is not a time in 2001..2100 (ns), dropped")
        return None
    return nanos / 1e9


def _text(value: Any, where: str, notes: list[str]) -> str:
    """`value` as a string, characters that cannot be UTF-8 (lone surrogates) replaced."""
    text = str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        notes.append(f"{where}: not valid UTF-8 (a lone surrogate), replaced")
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _attributes(owner: dict[str, Any], kept: frozenset[str], notes: list[str]) -> dict[str, Any]:
    """The `kept` attributes of a span or resource as Python values (the rest unread)."""
    out: dict[str, Any] = {}
    for item in _list(owner, "attributes", "attributes"):
        entry = _dict(item, "attributes")
        key = entry.get("key")
        if isinstance(key, str) and key in kept:
            out[sys.intern(key)] = _value(_dict(entry.get("value"), f"attribute {key}"), key, notes)
    return out


def _value(value: dict[str, Any], key: str, notes: list[str]) -> Any:
    """An OTLP `AnyValue` as a Python value (int64 strings as int, arrays as lists); a
    value out of range (see the module docstring) None, said in `notes`."""
    if "stringValue" in value:
        text = _text(value["stringValue"], key, notes)
        return sys.intern(text) if len(text) <= 64 else text  # names and models repeat
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return _bounded(_int(value["intValue"], f"attribute {key}"), key, notes)
    if "doubleValue" in value:
        try:
            number = float(value["doubleValue"])
        except (TypeError, ValueError, OverflowError):
            number = math.nan
        if math.isfinite(number):
            return number
        notes.append(f"{key}: {str(value['doubleValue'])[:24]!r} is not a finite number, dropped")
        return None
    if "arrayValue" in value:
        items = _dict(value["arrayValue"], "arrayValue").get("values") or []
        if not isinstance(items, list):
            return []
        return [_value(_dict(v, "arrayValue"), key, notes) for v in items[:64]]
    return None
