"""OpenAI-format chat-completion chunks, serialized fast.

Every chunk of one completion shares `id`, `created`, `model` and `system_fingerprint`,
so the constant JSON prefix is built once and only the delta is serialized per chunk.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DONE", "ChunkWriter", "dumps"]

DONE = b"data: [DONE]\n\n"
"""The stream terminator."""


def dumps(value: Any) -> str:
    """Compact JSON, as OpenAI sends it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class ChunkWriter:
    """Builds the SSE events of one streamed completion.

    Args:
        completion_id: `chatcmpl-...`, the same on every chunk.
        created: Unix seconds, the same on every chunk.
        model: the model id echoed back.
        include_usage: when True every chunk carries `"usage":null` and `usage()` may be sent.
    """

    def __init__(self, completion_id: str, created: int, model: str, include_usage: bool) -> None:
        head = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_looplab",
        }
        self._prefix = ("data: " + dumps(head)[:-1] + ',"choices":[{"index":0,"delta":').encode()
        tail = ',"logprobs":null,"finish_reason":%s}]'
        tail += ',"usage":null}' if include_usage else "}"
        self._tail = tail
        self._head = head
        self._role_sent = False

    def delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        """One chunk with `delta`; the first chunk also carries `role: assistant`."""
        if not self._role_sent:
            delta = {"role": "assistant", **delta}
            self._role_sent = True
        finish = "null" if finish_reason is None else f'"{finish_reason}"'
        return self._prefix + (dumps(delta) + self._tail % finish + "\n\n").encode()

    def content(self, text: str) -> bytes:
        """A text delta."""
        return self.delta({"content": text})

    def tool_header(self, index: int, call_id: str, name: str) -> bytes:
        """The first fragment of tool call `index`: id, type, name, empty arguments."""
        fragment = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        if not self._role_sent:
            return self.delta({"content": None, "tool_calls": [fragment]})
        return self.delta({"tool_calls": [fragment]})

    def tool_arguments(self, index: int, text: str) -> bytes:
        """A later fragment of tool call `index`: argument text only."""
        return self.delta({"tool_calls": [{"index": index, "function": {"arguments": text}}]})

    def finish(self, reason: str) -> bytes:
        """The closing chunk: empty delta and the finish reason."""
        if not self._role_sent:
            return self.delta({"content": ""}, reason)
        return self.delta({}, reason)

    def usage(self, usage: dict[str, Any]) -> bytes:
        """The usage chunk (`choices: []`), sent before `[DONE]`."""
        body = {**self._head, "choices": [], "usage": usage}
        return ("data: " + dumps(body) + "\n\n").encode()
