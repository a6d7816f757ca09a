"""Pieces of a proxied reply: the release cursor and the readers of upstream JSON.

`Cursor` walks a stream's items and hands out the bytes up to a released slot (the
passthrough events among them); the functions read usage, messages and reasoning from
upstream bodies and events. No I/O.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from looplab.backends.proxy.calls import responses_message
from looplab.backends.proxy.events import PROTOCOLS, Item, Usage
from looplab.backends.simulator.protocol import ApiError

__all__ = [
    "ClientReply",
    "Cursor",
    "body_message",
    "data_of",
    "is_reasoning",
    "json_object",
    "prepend",
    "streams_reasoning",
    "usage_of_body",
    "usage_of_events",
]


@dataclass
class ClientReply:
    """What goes back to the client: status, headers, and a body or a byte stream."""

    status: int
    headers: dict[str, str]
    content: bytes = b""
    stream: AsyncIterator[bytes] | None = None


class Cursor:
    """Walks a stream's items, handing out the bytes up to a slot (passthroughs included)."""

    def __init__(self, items: list[Item], wants_usage: bool) -> None:
        self.items = items
        self.wants_usage = wants_usage
        self.index = 0
        self.slot = 0

    def upto(self, stop: int, arrived: int, final: bool = False) -> bytes:
        """Bytes of the slots before `stop` and the passthrough events among them.

        A passthrough after the last arrived slot (a finish chunk, usage, `[DONE]`,
        `response.completed`) is held until `final`, so the stream's end stays its end.
        """
        out: list[bytes] = []
        while self.index < len(self.items):
            item = self.items[self.index]
            if not item.slots:
                if item.first_slot > self.slot or (item.first_slot >= arrived and not final):
                    break
                if self.wants_usage or not _is_usage_chunk(item):
                    out.append(item.raw)
                self.index += 1
                continue
            end = item.first_slot + item.slots
            if self.slot < stop:
                upto = min(stop, end)
                out.append(item.bytes_for(self.slot - item.first_slot, upto - item.first_slot))
                self.slot = upto
            if self.slot < end:
                break
            self.index += 1
        return b"".join(out)


def prepend(first: bytes, rest: AsyncGenerator[bytes, None]) -> AsyncIterator[bytes]:
    async def joined() -> AsyncIterator[bytes]:
        try:
            if first:
                yield first
            async for part in rest:
                yield part
        finally:
            await rest.aclose()

    return joined()


def json_object(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ApiError(400, "The request body is not valid JSON.", code="invalid_json") from None
    if not isinstance(data, dict):
        raise ApiError(400, "The request body must be a JSON object.", code="invalid_json")
    return data


def usage_of_body(endpoint: str, body: dict[str, Any]) -> Usage:
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    return Usage.from_responses(usage) if endpoint == "responses" else Usage.from_chat(usage)


def body_message(endpoint: str, body: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    if endpoint == "responses":
        return responses_message(body)
    choices = body.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    return choice.get("message"), choice.get("finish_reason")


def usage_of_events(endpoint: str, events: list[dict[str, Any]]) -> Usage:
    protocol = PROTOCOLS[endpoint]
    for event in reversed(events):
        try:
            data = json.loads(event.get("data") or "")
        except ValueError:
            continue
        usage = protocol.usage(data) if isinstance(data, dict) else None
        if usage is not None:
            return usage
    return Usage()


def streams_reasoning(events: list[dict[str, Any]]) -> bool:
    text = "".join(str(e.get("data", ""))[:400] for e in events)
    return (
        '"reasoning_content"' in text or "reasoning_text.delta" in text or ('"reasoning":"' in text)
    )


def is_reasoning(item: Item) -> bool:
    path = item.path or ()
    kind = (item.data or {}).get("type", "")
    return bool(path and path[-1] in ("reasoning_content", "reasoning")) or "reasoning" in str(kind)


def _is_usage_chunk(item: Item) -> bool:
    data = item.data or {}
    return "usage" in data and data.get("usage") is not None and not data.get("choices")


def data_of(raw: bytes) -> str:
    lines = raw.decode("utf-8", "replace").split("\n")
    return "\n".join(line[5:].removeprefix(" ") for line in lines if line.startswith("data:"))
