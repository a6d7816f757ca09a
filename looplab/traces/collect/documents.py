"""An OTLP/HTTP body -> the OTLP/JSON-shaped document `spans.py` reads, each span on its own.

One span must never cost the others of its request (issue 47, finding 3): protobuf's
nesting limit (100 messages) counted from the request's root made one span with
attributes nested 32 deep fail the whole parse, and JSON's recursion limit did the same at
about 250 levels. So:

- `protobuf_document` splits the request's wire format by hand down to its spans
  (`ExportTraceServiceRequest.resource_spans` 1 -> `ResourceSpans.scope_spans` 2 ->
  `ScopeSpans.spans` 2) and parses each span (and each resource) alone: a span that does
  not parse becomes an `Unreadable` in its place, which `spans.py` rejects alone.
- `json_document` parses the body whole; only when that passes the recursion limit does it
  parse again with every container deeper than `MAX_JSON_DEPTH` cut to a marker, and each
  span (or resource) holding a marker becomes an `Unreadable`.
- `inflate` decodes every member of a multi-member gzip body (RFC 1952 allows several;
  the first alone dropped the rest after a 200), the whole bounded by `MAX_DECODED_BYTES`.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_DECODED_BYTES",
    "MAX_JSON_DEPTH",
    "BadRequest",
    "Unreadable",
    "decompress",
    "export_document",
    "inflate",
    "json_document",
    "protobuf_document",
]

MAX_DECODED_BYTES = 64 * 1024 * 1024
"""Largest body after decompression (a small gzip body can inflate a thousandfold)."""
MAX_JSON_DEPTH = 200
"""Containers deeper than this are cut when a JSON body passes the recursion limit (a
well-formed span's attribute values sit about 8 levels down)."""

_MARKER = "\x00looplab: nested too deep\x00"
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class BadRequest(ValueError):
    """A request body that is not an OTLP trace export (the message says where and why)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Unreadable:
    """A span or resource that could not be decoded on its own, and why."""

    reason: str


def decompress(body: bytes, content_encoding: str) -> bytes:
    """A request body as sent (`identity` or none) or inflated (`gzip`, `deflate`: every
    member, `inflate`): the one decoding of `Content-Encoding` for traces, logs and metrics.

    Raises:
        BadRequest: another encoding (415), or what `inflate` refuses.
    """
    encoding = content_encoding.strip().lower()
    if encoding not in ("", "identity", "gzip", "deflate"):
        raise BadRequest(f"content-encoding {encoding!r}: expected gzip, deflate or none", 415)
    return body if encoding in ("", "identity") else inflate(body, encoding)


def export_document(
    body: bytes, content_type: str, content_encoding: str, request: Callable[[], Any], key: str
) -> dict[str, Any]:
    """A logs or metrics export as a dict: the body decompressed (`decompress`), then
    parsed as protobuf (`request()` makes the empty Export*ServiceRequest, imported by the
    caller) or JSON, and checked to be an object (`key`: what it must hold, for the error).

    Raises:
        BadRequest: an unsupported type (415) or encoding, a body that does not decompress
            or decode, or one that is not an object.
    """
    data = decompress(body, content_encoding)
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/x-protobuf":
        from google.protobuf import json_format
        from google.protobuf.message import DecodeError

        message = request()
        try:
            message.ParseFromString(data)
        except (DecodeError, RecursionError) as exc:
            name = type(message).__name__
            raise BadRequest(f"body is not an {name} protobuf: {exc}") from None
        document = json_format.MessageToDict(message, use_integers_for_enums=True)
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
    if not isinstance(document, dict):
        raise BadRequest(f"body: expected an object with {key}")
    return document


def inflate(body: bytes, encoding: str) -> bytes:
    """The body decompressed: every gzip (or zlib) member in turn, at most
    `MAX_DECODED_BYTES` in all.

    Raises:
        BadRequest: bytes that do not decompress, a stream cut short, trailing bytes
            that are not another member (400), or more than the cap once inflated (413).
    """
    out: list[bytes] = []
    size = 0
    rest = body
    while True:
        inflater = zlib.decompressobj(wbits=47)  # 32+15: gzip or zlib header, detected
        try:
            data = inflater.decompress(rest, MAX_DECODED_BYTES - size + 1)
        except zlib.error as exc:
            raise BadRequest(f"body does not decompress as {encoding}: {exc}") from None
        size += len(data)
        if size > MAX_DECODED_BYTES or inflater.unconsumed_tail:
            raise BadRequest(f"body inflates past {MAX_DECODED_BYTES} bytes", status=413)
        out.append(data)
        if not inflater.eof:
            raise BadRequest(f"body ends inside its {encoding} stream (cut short)")
        rest = inflater.unused_data
        if not rest:
            return b"".join(out)


def json_document(data: bytes) -> Any:
    """A JSON body parsed; spans or resources nested past `MAX_JSON_DEPTH` (when the whole
    does not parse within the recursion limit) are `Unreadable` in their place.

    Raises:
        BadRequest: the body is not JSON.
    """
    try:
        return json.loads(data)
    except RecursionError:
        pass
    except ValueError as exc:
        raise BadRequest(f"body is not JSON: {exc}") from None
    try:
        document = json.loads(_cut_deep(data))
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"body is not JSON: {exc}") from None
    reason = f"nested deeper than {MAX_JSON_DEPTH} levels"
    for owner, key, item in _span_slots(document):
        if _holds_marker(item):
            owner[key] = Unreadable(reason)
    return document


def _cut_deep(data: bytes) -> bytes:
    """`data` with every container opened below `MAX_JSON_DEPTH` replaced by the marker."""
    marker = json.dumps(_MARKER).encode()
    pieces: list[bytes] = []
    depth = 0
    kept_from = 0
    cut_at = -1
    for token in _TOKENS.finditer(data):
        char = data[token.start()]
        if char == ord('"'):
            continue
        if char in b"[{":
            depth += 1
            if depth == MAX_JSON_DEPTH + 1:
                cut_at = token.start()
        else:
            depth -= 1
            if depth == MAX_JSON_DEPTH and cut_at >= 0:
                pieces += [data[kept_from:cut_at], marker]
                kept_from, cut_at = token.end(), -1
    pieces.append(data[kept_from:])
    return b"".join(pieces)


def _span_slots(document: Any) -> Iterator[tuple[Any, Any, Any]]:
    """(container, key, value) of every resource and span of an export, where well-shaped."""
    if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
        return
    for resource_spans in document["resourceSpans"]:
        if not isinstance(resource_spans, dict):
            continue
        if "resource" in resource_spans:
            yield resource_spans, "resource", resource_spans["resource"]
        for scope in resource_spans.get("scopeSpans") or []:
            spans = scope.get("spans") if isinstance(scope, dict) else None
            if isinstance(spans, list):
                for n, item in enumerate(spans):
                    yield spans, n, item


def _holds_marker(value: Any) -> bool:
    """Whether the marker is anywhere inside `value` (iterative: it may be deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif item == _MARKER:
            return True
    return False


def protobuf_document(data: bytes) -> dict[str, Any]:
    """A protobuf `ExportTraceServiceRequest` as its OTLP/JSON shape, each resource and span
    parsed alone (one that does not parse is an `Unreadable` in its place).

    Raises:
        BadRequest: the request's outer structure is not protobuf wire format.
    """
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    resources: list[dict[str, Any]] = []
    for r, resource_bytes in enumerate(_messages(data, 1, "body")):
        where = f"resourceSpans[{r}]"
        entry: dict[str, Any] = {"scopeSpans": []}
        for number, value in _fields(resource_bytes, where):
            if number == 1:
                entry["resource"] = _message_dict(Resource, value)
            elif number == 2:
                inner = f"{where}.scopeSpans[{len(entry['scopeSpans'])}]"
                spans = [_message_dict(Span, raw) for raw in _messages(value, 2, inner)]
                entry["scopeSpans"].append({"spans": spans})
        resources.append(entry)
    return {"resourceSpans": resources}


def _message_dict(kind: Any, raw: memoryview) -> dict[str, Any] | Unreadable:
    """One message parsed alone, as its OTLP/JSON dict; `Unreadable` when it does not parse."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError

    message = kind()
    try:
        message.ParseFromString(raw)
        out: dict[str, Any] = json_format.MessageToDict(message, use_integers_for_enums=True)
    except (DecodeError, RecursionError) as exc:
        return Unreadable(f"not a protobuf {kind.__name__}: {exc}")
    return out


def _messages(data: memoryview | bytes, wanted: int, where: str) -> Iterator[memoryview]:
    """The bytes of every length-delimited field `wanted` of one message."""
    for number, value in _fields(data, where):
        if number == wanted:
            yield value


def _fields(data: memoryview | bytes, where: str) -> Iterator[tuple[int, memoryview]]:
    """(number, bytes) of every length-delimited field of one message, others skipped.

    Raises:
        BadRequest: a truncated field, a bad varint, or a group or unknown wire type.
    """
    view = memoryview(data)
    pos = 0
    while pos < len(view):
        key, pos = _varint(view, pos, where)
        kind = key & 7
        if kind == 0:
            _, pos = _varint(view, pos, where)
        elif kind in (1, 5):
            pos += 8 if kind == 1 else 4
        elif kind == 2:
            length, pos = _varint(view, pos, where)
            if pos + length <= len(view):
                yield key >> 3, view[pos : pos + length]
            pos += length
        else:
            raise BadRequest(
                f"body is not an ExportTraceServiceRequest protobuf: {where}: wire type {kind}"
            )
        if pos > len(view):
            raise BadRequest(
                f"body is not an ExportTraceServiceRequest protobuf: {where}: truncated field"
            )


def _varint(view: memoryview, pos: int, where: str) -> tuple[int, int]:
    """The varint at `pos` and the position after it."""
    value = 0
    for shift in range(0, 70, 7):
        if pos >= len(view):
            break
        byte = view[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
    raise BadRequest(f"body is not an ExportTraceServiceRequest protobuf: {where}: bad varint")
