"""Upstream server-sent events -> token slots, and released slots -> bytes for the client.

An upstream stream (chat-completion chunks or Responses API events) is read as SSE events.
Each event is an `Item`: either a passthrough (no token: a role-only chunk, a finish or
usage chunk, `response.created`, `...done` events) or one carrying text that is split
into token pieces with the simulator's tokenizer (one piece, one slot), or a single slot
that cannot be split (a tool call's header). Released slots go back out as the upstream's
own bytes when a release carries all of an event's pieces, and as the same event with
only the released text otherwise, so the client sees the upstream's JSON, only re-timed.

Protocols (`PROTOCOLS`): `chat` (`/v1/chat/completions`) and `responses` (`/v1/responses`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from looplab.backends.simulator.sse import dumps
from looplab.latency.tokens import Tokenizer

__all__ = ["PROTOCOLS", "Item", "Protocol", "SseParser", "Usage", "render"]

Path = tuple[str | int, ...]


@dataclass
class Usage:
    """Token counts of one reply, from the upstream's usage object."""

    prompt: int | None = None
    cached: int | None = None
    completion: int | None = None
    reasoning: int | None = None

    @classmethod
    def from_chat(cls, usage: dict[str, Any]) -> Usage:
        """From a chat-completions usage object."""
        prompt = usage.get("prompt_tokens_details") or {}
        completion = usage.get("completion_tokens_details") or {}
        return cls(
            usage.get("prompt_tokens"),
            prompt.get("cached_tokens"),
            usage.get("completion_tokens"),
            completion.get("reasoning_tokens"),
        )

    @classmethod
    def from_responses(cls, usage: dict[str, Any]) -> Usage:
        """From a Responses API usage object."""
        prompt = usage.get("input_tokens_details") or {}
        completion = usage.get("output_tokens_details") or {}
        return cls(
            usage.get("input_tokens"),
            prompt.get("cached_tokens"),
            usage.get("output_tokens"),
            completion.get("reasoning_tokens"),
        )


@dataclass
class Item:
    """One upstream SSE event: its bytes, its JSON, and its token pieces (if any)."""

    raw: bytes
    data: dict[str, Any] | None
    event: str | None = None
    """The SSE `event:` name, when the upstream sent one (the Responses API does)."""
    path: Path | None = None
    """Where the split text lives in `data`; None: not split (passthrough or one slot)."""
    pieces: list[str] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    """Estimated tokens of each slot of this item (empty: a passthrough)."""
    first_slot: int = 0
    """Index of this item's first slot in the whole stream."""
    arrived: float = 0.0
    """When the upstream delivered it (clock seconds)."""

    @property
    def slots(self) -> int:
        """Slots this item occupies."""
        return len(self.tokens)

    def bytes_for(self, start: int, stop: int) -> bytes:
        """The event carrying this item's slots `[start, stop)` (item-relative)."""
        if (start == 0 and stop >= self.slots) or self.path is None or self.data is None:
            return self.raw
        data = _with_text(self.data, self.path, "".join(self.pieces[start:stop]))
        head = f"event: {self.event}\n" if self.event else ""
        return (head + "data: " + dumps(data) + "\n\n").encode()


class SseParser:
    """Turns lines of an SSE stream into complete events (`feed` returns them)."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def feed(self, line: str) -> tuple[str | None, str, bytes] | None:
        """Add one line; at a blank line return (event name, data, raw bytes)."""
        if line:
            self._lines.append(line)
            return None
        if not self._lines:
            return None
        lines, self._lines = self._lines, []
        name = None
        data: list[str] = []
        for entry in lines:
            if entry.startswith("data:"):
                data.append(entry[5:].removeprefix(" "))
            elif entry.startswith("event:"):
                name = entry[6:].strip()
        return name, "\n".join(data), ("\n".join(lines) + "\n\n").encode()

    def pending(self) -> bool:
        """Lines of an event are waiting for the blank line that ends it (a stream that
        stops here was cut mid-event)."""
        return bool(self._lines)


@dataclass(frozen=True)
class Protocol:
    """How one API's stream carries tokens."""

    name: str
    path: str
    """The endpoint, under the API root (`/chat/completions`)."""
    classify: Callable[[dict[str, Any]], tuple[Path | None, int]]
    """data -> (path of splittable text or None, tokens of an unsplittable slot)."""
    usage: Callable[[dict[str, Any]], Usage | None]
    """The usage an event carries, if any."""
    ends: Callable[[str | None, str, dict[str, Any] | None], bool]
    """(event name, data text, data) -> this event ends the stream (a stream whose
    upstream stopped before such an event was cut short)."""


def make_item(
    protocol: Protocol, event: str | None, data_text: str, raw: bytes, tokenizer: Tokenizer
) -> Item:
    """Classify one SSE event of `protocol` and split its text into token pieces."""
    try:
        data = json.loads(data_text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return Item(raw, None, event)
    path, whole = protocol.classify(data)
    if path is not None:
        text = _get(data, path)
        pieces = tokenizer.split(text) if isinstance(text, str) else []
        if pieces:
            return Item(raw, data, event, path, pieces, [1] * len(pieces))
        return Item(raw, data, event)
    return Item(raw, data, event, tokens=[whole] if whole else [])


def _chat_classify(data: dict[str, Any]) -> tuple[Path | None, int]:
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return None, 0
    delta = choices[0].get("delta") or {}
    calls = delta.get("tool_calls") or []
    if calls:
        call = calls[0] if isinstance(calls[0], dict) else {}
        function = call.get("function") or {}
        if len(calls) == 1 and not call.get("id") and not function.get("name"):
            return ("choices", 0, "delta", "tool_calls", 0, "function", "arguments"), 0
        return None, len(calls)
    for key in ("content", "reasoning_content", "reasoning", "refusal"):
        if isinstance(delta.get(key), str) and delta[key]:
            return ("choices", 0, "delta", key), 0
    return None, 0


def _chat_ends(event: str | None, text: str, data: dict[str, Any] | None) -> bool:
    """`[DONE]`, a choice's `finish_reason`, or an error event end a chat stream."""
    if text.strip() == "[DONE]" or event == "error" or (data is not None and "error" in data):
        return True
    choices = (data or {}).get("choices") or []
    return any(isinstance(c, dict) and c.get("finish_reason") for c in choices)


def _chat_usage(data: dict[str, Any]) -> Usage | None:
    usage = data.get("usage")
    return Usage.from_chat(usage) if isinstance(usage, dict) else None


_RESPONSES_TEXT = {
    "response.output_text.delta",
    "response.function_call_arguments.delta",
    "response.reasoning_text.delta",
    "response.reasoning_summary_text.delta",
    "response.refusal.delta",
}


def _responses_classify(data: dict[str, Any]) -> tuple[Path | None, int]:
    kind = data.get("type")
    if kind in _RESPONSES_TEXT:
        return ("delta",), 0
    if kind == "response.output_item.added":
        item = data.get("item") or {}
        return None, 1 if item.get("type") == "function_call" else 0  # the call's header
    return None, 0


_RESPONSES_END = {"response.completed", "response.incomplete", "response.failed", "error"}


def _responses_ends(event: str | None, text: str, data: dict[str, Any] | None) -> bool:
    """A response's terminal event (completed, incomplete, failed, error) ends it."""
    kind = (data or {}).get("type")
    return event in _RESPONSES_END or kind in _RESPONSES_END or text.strip() == "[DONE]"


def _responses_usage(data: dict[str, Any]) -> Usage | None:
    if data.get("type") not in ("response.completed", "response.incomplete"):
        return None
    usage = (data.get("response") or {}).get("usage")
    return Usage.from_responses(usage) if isinstance(usage, dict) else None


PROTOCOLS: dict[str, Protocol] = {
    "chat": Protocol("chat", "/chat/completions", _chat_classify, _chat_usage, _chat_ends),
    "responses": Protocol(
        "responses", "/responses", _responses_classify, _responses_usage, _responses_ends
    ),
}
"""API name -> how its stream carries tokens."""


def render(items: list[Item], slot_start: int, slot_stop: int) -> bytes:
    """The bytes of slots `[slot_start, slot_stop)` of `items` (which must hold them)."""
    out: list[bytes] = []
    for item in items:
        lo = max(slot_start - item.first_slot, 0)
        hi = min(slot_stop - item.first_slot, item.slots)
        if lo < hi:
            out.append(item.bytes_for(lo, hi))
    return b"".join(out)


def _get(data: Any, path: Path) -> Any:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _with_text(data: Any, path: Path, text: str) -> Any:
    """A copy of `data` with the value at `path` replaced (only the path is copied)."""
    if not path:
        return text
    key, rest = path[0], path[1:]
    if isinstance(data, list) and isinstance(key, int):
        copy_list = list(data)
        copy_list[key] = _with_text(data[key], rest, text)
        return copy_list
    copy = dict(data)
    copy[key] = _with_text(data[key], rest, text)
    return copy
