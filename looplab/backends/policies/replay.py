"""`replay`: answers with the assistant messages of a recorded run, step by step.

The step is the number of assistant messages already in the conversation, so the agent
needs nothing special. Loopback addresses (`127.0.0.1:PORT`) that the recorded prompt
held are rewritten, in order, to those of the replay's own prompt: task services get
ephemeral ports, and a recorded `browse` of the old port would otherwise fail. Text and
tool calls are otherwise replayed verbatim (tool-call ids too, so the agent's tool
messages match), re-split into token pieces, with the recorded reasoning token count, so
the replay's timing under a new profile matches what the recorded run would have taken.
Past the end of the recording it answers 400 with a clear message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from looplab.backends.policies.base import PlannedToolCall, PolicyContext, Reply
from looplab.backends.simulator.protocol import ApiError, ChatRequest

__all__ = ["RecordedReply", "ReplayPolicy"]


class RecordedReply:
    """One recorded assistant message and its hidden reasoning token count."""

    def __init__(self, message: dict[str, Any], reasoning_tokens: int | None) -> None:
        self.message = message
        self.reasoning_tokens = reasoning_tokens


class ReplayPolicy:
    """Replays recorded assistant messages; `load()` gives it a recording."""

    name = "replay"

    def __init__(
        self, replies: Sequence[RecordedReply] = (), recorded_prompt: str | None = None
    ) -> None:
        self.replies = list(replies)
        self.recorded_prompt = recorded_prompt

    def load(self, replies: Sequence[RecordedReply], recorded_prompt: str | None = None) -> None:
        """Replace the recording being replayed (and the prompt it was recorded with)."""
        self.replies = list(replies)
        self.recorded_prompt = recorded_prompt

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """The recorded message for this step.

        Raises:
            ApiError: no recording loaded, or the conversation is past its end.
        """
        step = sum(1 for m in request.messages if m.role == "assistant")
        if step >= len(self.replies):
            raise ApiError(
                400,
                f"replay: the recording has {len(self.replies)} assistant message(s); "
                f"this request asks for step {step + 1}",
                param="messages",
                code="replay_exhausted",
            )
        recorded = self.replies[step]
        rewrite = self._address_rewrite(request)
        content = recorded.message.get("content")
        if isinstance(content, str):
            content = rewrite(content)
        pieces = context.tokenizer.split(content) if isinstance(content, str) else []
        calls = [
            PlannedToolCall(
                id=str(call.get("id") or f"call_replay_{step}_{index}"),
                name=str(call.get("function", {}).get("name", "")),
                argument_pieces=context.tokenizer.split(
                    rewrite(_arguments(call.get("function", {}).get("arguments")))
                ),
            )
            for index, call in enumerate(recorded.message.get("tool_calls") or [])
        ]
        return Reply(
            content_pieces=pieces, tool_calls=calls, reasoning_tokens=recorded.reasoning_tokens or 0
        )

    def _address_rewrite(self, request: ChatRequest) -> Callable[[str], str]:
        first_user = next((m for m in request.messages if m.role == "user"), None)
        now = first_user.content if first_user and isinstance(first_user.content, str) else ""
        old = _ADDRESS.findall(self.recorded_prompt or "")
        new = _ADDRESS.findall(now)
        mapping = dict(zip(old, new, strict=False)) if len(old) == len(new) else {}
        mapping = {a: b for a, b in mapping.items() if a != b}
        if not mapping:
            return lambda text: text
        pattern = re.compile("|".join(re.escape(a) for a in mapping))
        return lambda text: pattern.sub(lambda m: mapping[m.group(0)], text)


_ADDRESS = re.compile(r"127\.0\.0\.1:\d+")


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {})
