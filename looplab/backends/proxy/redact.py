"""Secrets out of a streamed reply before it is recorded: the stream as a whole, not its pieces.

A model streams its text in pieces of a few characters, so an upstream that echoes a
credential spreads it over many events; scrubbing each event on its own finds nothing,
yet joining the recorded deltas gives the secret back (issue 47, finding 1).
`scrub_stream` therefore joins every *channel* of a stream (the strings at one place of
the events' JSON: a choice's `delta.content`, a tool call's `arguments`, a Responses
item's `delta`, ...), scrubs the joined text, and writes the scrubbed text back over the
same events: each event keeps the characters of its own piece that survived, and a
redacted span becomes one `[REDACTED]` in the event where it started. The recorded
events joined again are exactly the scrubbed joined text, so no split of the pieces can
carry a secret past it, and each event is still the upstream's event with its text cut.

Channels: a string's place is its path of keys, a list element named by its own `index`
field when it has one (a chat choice, a tool call) and else by its position, together
with the event's name and `type` and the `output_index` / `content_index` /
`summary_index` / `item_id` of each object on the way (the Responses API's item
coordinates). Data that is not JSON is one channel per event name.

`body_secrets` names what a request's body carries that must not come back in a reply:
`user`, `safety_identifier`, every string under `metadata`, and any string whose key
names a credential (`api_key`, `secret`, `token`, ...), 8 characters or more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from looplab.backends.simulator.sse import dumps
from looplab.traces.scrub import REDACTED, Scrubber

__all__ = ["body_secrets", "redistribute", "scrub_stream"]

_COORDINATES = ("output_index", "content_index", "summary_index", "item_id")
_IDENTIFYING = ("user", "safety_identifier")
_CREDENTIAL_KEY = re.compile(r"(?i)(api_?key|secret|token$|password|passwd|auth|cookie|session)")
_MIN_SECRET = 8

Place = tuple[Any, ...]
"""Where one string lives in an event's data (a path of keys and list positions)."""


def body_secrets(body: dict[str, Any]) -> tuple[str, ...]:
    """The values of `body` that are the client's own and must not reach a recording."""
    found: list[str] = []
    for key in _IDENTIFYING:
        if isinstance(body.get(key), str):
            found.append(body[key])
    found += _strings(body.get("metadata"))
    found += _credential_strings(body)
    return tuple(dict.fromkeys(v for v in found if len(v) >= _MIN_SECRET))


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON-like value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _credential_strings(value: Any) -> list[str]:
    """Strings held under a credential-named key, anywhere in a JSON-like value."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _CREDENTIAL_KEY.search(key) and isinstance(item, str):
                found.append(item)
            else:
                found += _credential_strings(item)
    elif isinstance(value, list):
        for item in value:
            found += _credential_strings(item)
    return found


def redistribute(pieces: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """`pieces` with the characters of `spans` (offsets into their join, sorted and not
    overlapping) cut out, each span leaving one `[REDACTED]` in the piece it starts in.

    Joined, the result is the joined pieces with every span replaced by `[REDACTED]`."""
    out: list[str] = []
    start = 0
    for piece in pieces:
        stop = start + len(piece)
        kept: list[str] = []
        at = start
        for lo, hi in spans:
            if hi <= at or lo >= stop:
                continue
            if lo > at:
                kept.append(piece[at - start : lo - start])
            if start <= lo < stop:
                kept.append(REDACTED)
            at = max(at, min(hi, stop))
        kept.append(piece[at - start :])
        out.append("".join(kept))
        start = stop
    return out


def scrub_stream(events: list[dict[str, Any]], scrubber: Scrubber) -> list[dict[str, Any]]:
    """Recorded SSE events (`{"t", "event", "data"}`) with every channel's joined text
    scrubbed (module docstring); events whose text is untouched are returned as they were."""
    parsed: list[Any] = []
    for event in events:
        try:
            parsed.append(json.loads(event.get("data") or ""))
        except ValueError:
            parsed.append(None)
    channels: dict[Place, list[tuple[int, Place]]] = {}
    for number, (event, data) in enumerate(zip(events, parsed, strict=True)):
        name = event.get("event")
        if not isinstance(data, dict | list):
            channels.setdefault(("raw", name), []).append((number, ()))
            continue
        kind = data.get("type") if isinstance(data, dict) else None
        for place, key in _places(data, ()):
            channels.setdefault(("json", name, kind, key), []).append((number, place))
    raw = {n for n, data in enumerate(parsed) if not isinstance(data, dict | list)}
    replaced: dict[int, Any] = {}
    for members in channels.values():
        pieces = [_text(events, parsed, replaced, number, place) for number, place in members]
        spans = scrubber.spans("".join(pieces))
        if not spans:
            continue
        for (number, place), text in zip(members, redistribute(pieces, spans), strict=True):
            current = text if number in raw else replaced.get(number, parsed[number])
            replaced[number] = _set(current, place, text)
    out: list[dict[str, Any]] = []
    for number, event in enumerate(events):
        if number not in replaced:
            out.append(event)
            continue
        value = replaced[number]
        out.append({**event, "data": value if number in raw else dumps(value)})
    return out


def _text(
    events: list[dict[str, Any]], parsed: list[Any], replaced: dict[int, Any], n: int, place: Place
) -> str:
    """The current text at `place` of event `n` (its data itself for a non-JSON event)."""
    if not place:  # a raw event (a JSON object's strings always have a place)
        return str(events[n].get("data") or "")
    value: Any = replaced.get(n, parsed[n])
    for key in place:
        value = value[key]
    return str(value)


def _places(value: Any, place: Place) -> Iterator[tuple[Place, Place]]:
    """(place, channel key) of every string in a JSON value (module docstring)."""
    if isinstance(value, str):
        yield place, ()
    elif isinstance(value, dict):
        here = tuple((k, value[k]) for k in _COORDINATES if isinstance(value.get(k), str | int))
        for key, item in value.items():
            for inner, channel in _places(item, (*place, key)):
                yield inner, (here, key, *channel)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            index = item.get("index") if isinstance(item, dict) else None
            name = ("index", index) if isinstance(index, int) else ("at", position)
            for inner, channel in _places(item, (*place, position)):
                yield inner, (name, *channel)


def _set(data: Any, place: Place, text: str) -> Any:
    """A copy of `data` with the string at `place` replaced (only the path is copied)."""
    if not place:
        return text
    key, rest = place[0], place[1:]
    copy: Any = list(data) if isinstance(data, list) else dict(data)
    copy[key] = _set(data[key], rest, text)
    return copy
