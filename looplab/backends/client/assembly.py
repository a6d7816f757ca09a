"""A streamed reply assembled: the chunk assembler, the call's timing and the response.

`StreamAssembler` folds chat-completion chunks into one assistant message (the client's
and the proxy's). It can announce each tool call the moment its arguments are complete
in the stream (`on_tool_ready`): when the next call's first delta arrives, or when its
arguments already form a whole JSON object; the agents' streaming dispatch starts the
tool there (`looplab.agents.dispatch`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["CallTiming", "ModelResponse", "StreamAssembler", "ToolReady"]


@dataclass(frozen=True)
class ToolReady:
    """A tool call whose arguments are complete while the reply still streams."""

    index: int
    """The call's index in the reply."""
    call: dict[str, Any]
    """`{"id", "type", "function": {"name", "arguments"}}` as assembled so far (final)."""
    chunks: int
    """Token-carrying chunks received when it became complete."""
    chars: int
    """Streamed characters (text, reasoning, tool names and arguments) received by then."""


@dataclass
class CallTiming:
    """Times of one call, seconds on `time.perf_counter()`'s axis.

    `sent` is when the built request was handed to the HTTP transport (an httpx request
    hook), so the openai client's own request building and event-loop contention count
    as client-side queueing (`client_queue_s`), not as TTFT.
    """

    scheduled: float
    sent: float
    first_token: float | None = None
    last_token: float | None = None
    end: float | None = None
    chunk_times: list[float] = field(default_factory=list)

    @property
    def client_queue_s(self) -> float:
        """Scheduled -> sent: time the request waited on the client side."""
        return self.sent - self.scheduled

    @property
    def ttft_s(self) -> float | None:
        """Sent -> first token."""
        return None if self.first_token is None else self.first_token - self.sent

    @property
    def decode_s(self) -> float | None:
        """First -> last token."""
        if self.first_token is None or self.last_token is None:
            return None
        return self.last_token - self.first_token

    @property
    def model_s(self) -> float | None:
        """Sent -> stream end."""
        return None if self.end is None else self.end - self.sent

    def chunk_gaps_s(self) -> list[float]:
        """Gaps between consecutive token-carrying chunks (ITL)."""
        times = self.chunk_times
        return [b - a for a, b in itertools.pairwise(times)]


@dataclass
class ModelResponse:
    """The assembled assistant message of one call and how long it took.

    Attributes:
        message: `{"role": "assistant", "content": str | None, "tool_calls": [...]?}`,
            ready to append to the conversation.
        finish_reason: `stop`, `length`, `tool_calls`, ... (None if the stream broke).
        prompt_tokens, cached_tokens, completion_tokens, reasoning_tokens: from the usage
            chunk (None when the backend sent none).
        visible_chunks: chunks that carried a token.
        request_id: the backend's request id header, if any.
        server_timing: the server's timing record as JSON, when it exposes one (a
            simulator's reads as `backends.simulator.record.read_served_timing`; the
            proxy's is its own, `backends/proxy/calls.py`).
    """

    message: dict[str, Any]
    timing: CallTiming
    finish_reason: str | None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    visible_chunks: int = 0
    request_id: str | None = None
    server_timing: dict[str, Any] | None = None
    streamed_chars: int = 0
    """Characters streamed (text, reasoning, tool names and arguments)."""
    looplab_request_id: str | None = None
    """The `x-looplab-request-id` header (simulator or proxy): the timing endpoint's id."""
    transport: Literal["http", "websocket"] = "http"
    """How the call went: a streamed HTTP request, or a turn on a Responses WebSocket."""

    @property
    def output_tokens(self) -> int | None:
        """Completion tokens the client saw streamed (completion minus hidden reasoning)."""
        if self.completion_tokens is None:
            return None
        return self.completion_tokens - (self.reasoning_tokens or 0)

    @property
    def decode_rate_tps(self) -> float | None:
        """(streamed output tokens - 1) / decode time."""
        decode = self.timing.decode_s
        tokens = self.output_tokens
        if decode is None or tokens is None or tokens < 2 or decode <= 0:
            return None
        return (tokens - 1) / decode


class _Assembler:
    """Accumulates streamed deltas into one assistant message.

    Args:
        on_tool_ready: called once per tool call that is complete before the stream ends
            (see the module docstring); never for the reply's last call if its arguments
            arrive with the stream's last token chunk.
    """

    def __init__(self, on_tool_ready: Callable[[ToolReady], None] | None = None) -> None:
        self.on_tool_ready = on_tool_ready
        self.announced: set[int] = set()
        self.closed: dict[int, _ObjectEnd] = {}
        self.chars = 0
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.token_chunks = 0

    def add(self, chunk: dict[str, Any]) -> bool:
        """Fold one chunk in; True when it carried a token of any kind."""
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        carried = False
        for choice in chunk.get("choices") or []:
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.content.append(delta["content"])
                self.chars += len(delta["content"])
                carried = True
            for key in ("reasoning_content", "reasoning"):
                if isinstance(delta.get(key), str) and delta[key]:
                    self.reasoning.append(delta[key])
                    self.chars += len(delta[key])
                    carried = True
            for fragment in delta.get("tool_calls") or []:
                carried = True
                self._add_fragment(fragment)
        if carried:
            self.token_chunks += 1
            if self.on_tool_ready is not None:
                self._announce()
        return carried

    def _add_fragment(self, fragment: dict[str, Any]) -> None:
        call = self.calls.setdefault(
            fragment.get("index", 0),
            {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        if function.get("name"):
            call["function"]["name"] += function["name"]
            self.chars += len(function["name"])
        if function.get("arguments"):
            call["function"]["arguments"] += function["arguments"]
            self.chars += len(function["arguments"])
            if self.on_tool_ready is not None:
                self.closed.setdefault(fragment.get("index", 0), _ObjectEnd()).feed(
                    function["arguments"]
                )

    def _announce(self) -> None:
        """Announce calls that are complete: every call before the newest one, and the
        newest when its arguments already parse as a whole JSON object."""
        assert self.on_tool_ready is not None
        newest = max(self.calls, default=-1)
        for index in sorted(self.calls):
            if index in self.announced:
                continue
            call = self.calls[index]
            if index == newest and not self._whole_object(index):
                continue
            if not call["function"]["name"]:
                continue
            self.announced.add(index)
            snapshot = {**call, "function": dict(call["function"])}
            self.on_tool_ready(ToolReady(index, snapshot, self.token_chunks, self.chars))

    def _whole_object(self, index: int) -> bool:
        """True when call `index`'s arguments are a complete JSON object (parsed once,
        when the streaming scan saw the object close)."""
        scan = self.closed.get(index)
        if scan is None or not scan.closed:
            return False
        try:
            return isinstance(json.loads(self.calls[index]["function"]["arguments"]), dict)
        except ValueError:
            return False

    def response(self, timing: CallTiming, request_id: str | None) -> ModelResponse:
        content = "".join(self.content)
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        usage = self.usage or {}
        prompt_details = usage.get("prompt_tokens_details") or {}
        completion_details = usage.get("completion_tokens_details") or {}
        return ModelResponse(
            message=message,
            timing=timing,
            finish_reason=self.finish_reason,
            prompt_tokens=usage.get("prompt_tokens"),
            cached_tokens=prompt_details.get("cached_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            reasoning_tokens=completion_details.get("reasoning_tokens"),
            visible_chunks=self.token_chunks,
            request_id=request_id,
            streamed_chars=self.chars,
        )


class _ObjectEnd:
    """Follows a JSON text as it streams, fragment by fragment, in one pass over its
    characters: `closed` once the top-level object's closing brace has arrived (braces
    inside strings do not count). Re-parsing the whole arguments on every chunk would be
    quadratic in their length."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False
        self.closed = False

    def feed(self, text: str) -> None:
        """Advance over `text` (stops counting once the object has closed)."""
        for char in text:
            if self.closed:
                return
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
            elif char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
            elif char in "}]":
                self.depth -= 1
                self.closed = self.depth == 0


StreamAssembler = _Assembler
"""Folds chat-completion chunks into one message (also the proxy's, for its records)."""
