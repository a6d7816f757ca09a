"""One request's planned completion, and the pure helpers around it.

`PreparedCompletion` is a validated request with its reply decided (token slots, hidden
reasoning, finish reason, the request's jitter draws) but not yet scheduled; the helpers
turn a policy's `Reply` into token slots, coalesce released slots into SSE chunks and
assemble the non-streamed message. No clock, no I/O.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from looplab.backends.policies import Reply
from looplab.backends.simulator.pacing import Release
from looplab.backends.simulator.protocol import ApiError, ChatRequest
from looplab.backends.simulator.sse import ChunkWriter
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import CallSchedule, Transport

__all__ = [
    "PreparedCompletion",
    "assembled_calls",
    "chunks_for",
    "completion_cap",
    "completion_object",
    "conversation_seed",
    "visible_slots",
]


@dataclass
class PreparedCompletion:
    """A validated request with its planned reply, not yet scheduled."""

    request_id: str
    completion_id: str
    created: int
    request: ChatRequest
    reply: Reply
    received: float
    prompt_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    visible_slots: list[tuple[str, int, str]]
    finish_reason: str
    decode_factor: float
    """This request's decode-rate factor (decode jitter draw; 1 = none)."""
    ttft_extra_s: float
    """This request's TTFT jitter draw."""
    drop_after: int | None = None
    transport: Transport = "http"
    """How the request came: `http` (a request of its own) or `websocket` (a
    `response.create` on an open connection); sets its per-call overhead."""
    plan: CallSchedule | None = None
    """The intended schedule, once the request got its slot."""

    @property
    def completion_tokens(self) -> int:
        """Reasoning plus visible tokens."""
        return self.reasoning_tokens + len(self.visible_slots)

    def usage(self) -> dict[str, Any]:
        """OpenAI usage object."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": self.reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }


def conversation_seed(
    seed: int, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> int:
    """Seed from the conversation's shape, so the same conversation draws the same reply.

    Left out, because they carry run-to-run noise that must not change what a replay at
    another speed draws: tool results' text (durations, paths), tool-call ids (random),
    and digits in message text and tool arguments (ephemeral ports in URLs).
    """
    shape = [
        [
            m.get("role"),
            None if m.get("role") == "tool" else _without_digits(str(m.get("content") or "")),
            [
                [
                    c.get("function", {}).get("name"),
                    _without_digits(str(c.get("function", {}).get("arguments"))),
                ]
                for c in m.get("tool_calls") or []
            ],
        ]
        for m in messages
    ]
    canonical = json.dumps([model, shape, tools], sort_keys=True, default=str).encode()
    digest = hashlib.blake2b(canonical, digest_size=8, key=str(seed).encode()).digest()
    return int.from_bytes(digest, "big")


_DIGITS = re.compile(r"\d+")


@functools.lru_cache(maxsize=4096)
def _without_digits(text: str) -> str:
    """`text` with digit runs replaced by `#`; memoised because every request of an agent
    resends the whole conversation and only its newest messages are new."""
    return _DIGITS.sub("#", text)


def visible_slots(reply: Reply) -> Iterator[tuple[str, int, str]]:
    """Token slots as (kind, tool index, piece): `c` text, `h` tool header, `a` argument."""
    for piece in reply.content_pieces:
        yield ("c", -1, piece)
    for index, call in enumerate(reply.tool_calls):
        yield ("h", index, "")
        for piece in call.argument_pieces:
            yield ("a", index, piece)


def chunks_for(
    release: Release, prepared: PreparedCompletion, writer: ChunkWriter
) -> Iterator[bytes]:
    """Coalesce the released slots into as few chunks as OpenAI's format allows."""
    slots = prepared.visible_slots
    calls = prepared.reply.tool_calls
    slot = release.start
    while slot < release.stop:
        kind, index, _ = slots[slot]
        if kind == "h":
            yield writer.tool_header(index, calls[index].id, calls[index].name)
            slot += 1
            continue
        end = slot
        while end < release.stop and slots[end][0] == kind and slots[end][1] == index:
            end += 1
        text = "".join(piece for _, _, piece in slots[slot:end])
        yield writer.content(text) if kind == "c" else writer.tool_arguments(index, text)
        slot = end


def assembled_calls(prepared: PreparedCompletion) -> list[dict[str, Any]]:
    arguments: dict[int, list[str]] = {}
    for kind, index, piece in prepared.visible_slots:
        if kind == "h":
            arguments[index] = []
        elif kind == "a":
            arguments[index].append(piece)
    calls = prepared.reply.tool_calls
    return [
        {
            "id": calls[index].id,
            "type": "function",
            "function": {"name": calls[index].name, "arguments": "".join(pieces)},
        }
        for index, pieces in sorted(arguments.items())
    ]


def completion_cap(profile: LatencyProfile, request: ChatRequest, prompt_tokens: int) -> int:
    """The most completion tokens (reasoning + visible) this request may produce.

    Raises:
        ApiError: 400 when the requested limit or the context exceeds the profile's.
    """
    requested = request.completion_limit()
    param = "max_completion_tokens" if request.max_completion_tokens else "max_tokens"
    if requested is not None and requested > profile.max_output_tokens:
        raise ApiError(
            400,
            f"{param} is too large: {requested}. This model supports at most "
            f"{profile.max_output_tokens} completion tokens.",
            param=param,
            code="invalid_value",
        )
    if prompt_tokens + (requested or 0) > profile.context_window:
        raise ApiError(
            400,
            f"This model's maximum context length is {profile.context_window} tokens. "
            f"However, you requested {prompt_tokens + (requested or 0)} tokens "
            f"({prompt_tokens} in the messages, {requested or 0} in the completion). "
            "Please reduce the length of the messages or completion.",
            param="messages",
            code="context_length_exceeded",
        )
    room = profile.context_window - prompt_tokens
    return min(requested or profile.max_output_tokens, profile.max_output_tokens, room)


def completion_object(prepared: PreparedCompletion) -> dict[str, Any]:
    """The whole (non-streamed) `chat.completion` object of `prepared`."""
    content = "".join(p for kind, _, p in prepared.visible_slots if kind == "c")
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    calls = assembled_calls(prepared)
    if calls:
        message["tool_calls"] = calls
        if not content:
            message["content"] = None
    return {
        "id": prepared.completion_id,
        "object": "chat.completion",
        "created": prepared.created,
        "model": prepared.request.model,
        "system_fingerprint": "fp_looplab",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": prepared.finish_reason,
            }
        ],
        "usage": prepared.usage(),
    }
