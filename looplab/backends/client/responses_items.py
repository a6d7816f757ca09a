"""Chat completions <-> the Responses API, on the client side: what the WebSocket transport
sends and how its events become the chat chunks `StreamAssembler` folds.

Requests (`input_items`, `function_tools`, `request_fields`):

| chat completions                        | Responses                                         |
|-----------------------------------------|---------------------------------------------------|
| `system` / `developer` / `user` message | a `message` item of that role                     |
| `text` / `image_url` content parts      | `input_text` / `input_image` parts                |
| assistant message: content, tool_calls  | a `message` item (when it has text), then one     |
|                                         | `function_call` item per call                     |
| `tool` message                          | a `function_call_output` item                     |
| `tools` (function tools)                | flat function tools, `strict: false` unless set   |
| `max_completion_tokens` / `max_tokens`  | `max_output_tokens`                               |
| `tool_choice: {function: {name}}`       | `tool_choice: {type: function, name}`             |
| `response_format`                       | `text.format`                                     |

Events (`EventFolder.chunk`): `output_text.delta` -> a content delta, a reasoning (summary)
text delta -> a reasoning delta, a `function_call` item added -> the call's header
fragment (id and name, as a chat stream's first tool-call chunk), its arguments deltas ->
argument fragments, `response.completed` / `.incomplete` -> usage and `finish_reason`
(`tool_calls` / `stop` / `length`). So the assembled message, the token chunks that time
TTFT and decode, and `on_tool_ready` mean the same over both transports.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from looplab.errors import BackendError

__all__ = ["EventFolder", "function_tools", "input_items", "request_fields"]

Item = dict[str, Any]


def input_items(messages: list[dict[str, Any]]) -> list[Item]:
    """The Responses input items of a chat conversation (see the module table)."""
    items: list[Item] = []
    for message in messages:
        role = str(message.get("role", "user"))
        if role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id", "")),
                    "output": _output(message.get("content")),
                }
            )
        elif role == "assistant":
            content = message.get("content")
            if content:
                items.append({"type": "message", "role": "assistant", "content": content})
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                items.append(
                    {
                        "type": "function_call",
                        "call_id": str(call.get("id", "")),
                        "name": str(function.get("name", "")),
                        "arguments": str(function.get("arguments", "")),
                    }
                )
        else:
            items.append(
                {"type": "message", "role": role, "content": _parts(message.get("content"))}
            )
    return items


def _parts(content: Any) -> Any:
    """A message's content: text as it is, chat parts as input parts."""
    if not isinstance(content, list):
        return "" if content is None else content
    parts: list[Item] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image_url":
            image = part.get("image_url") or {}
            converted: Item = {"type": "input_image", "image_url": str(image.get("url", ""))}
            converted["detail"] = str(image.get("detail") or "auto")
            parts.append(converted)
        elif isinstance(part.get("text"), str):
            parts.append({"type": "input_text", "text": part["text"]})
    return parts


def _output(content: Any) -> Any:
    """A tool result: its text, or input parts when it holds images."""
    return content if isinstance(content, str) else _parts(content)


def function_tools(tools: list[dict[str, Any]]) -> list[Item]:
    """Chat function tools as Responses function tools (flat; `strict: false` unless the
    tool says otherwise, as chat completions treat it).

    Raises:
        BackendError: a tool that is not a function tool.
    """
    out: list[Item] = []
    for index, tool in enumerate(tools):
        function = tool.get("function") if tool.get("type") == "function" else None
        if not isinstance(function, dict):
            raise BackendError(
                f"tools[{index}]: only function tools go over the Responses WebSocket "
                f"(got type {tool.get('type')!r})"
            )
        flat: Item = {"type": "function", "strict": False}
        flat.update(
            {
                k: function[k]
                for k in ("name", "description", "parameters", "strict")
                if k in function
            }
        )
        out.append(flat)
    return out


def _tool_choice(value: Any) -> Any:
    if isinstance(value, dict) and value.get("type") == "function":
        return {"type": "function", "name": (value.get("function") or {}).get("name")}
    return value


def _text_format(value: Any) -> Any:
    if isinstance(value, dict) and value.get("type") == "json_schema":
        return {"format": {"type": "json_schema", **(value.get("json_schema") or {})}}
    return {"format": value}


_PARAMS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "max_completion_tokens": ("max_output_tokens", lambda v: v),
    "max_tokens": ("max_output_tokens", lambda v: v),
    "temperature": ("temperature", lambda v: v),
    "top_p": ("top_p", lambda v: v),
    "parallel_tool_calls": ("parallel_tool_calls", lambda v: v),
    "tool_choice": ("tool_choice", _tool_choice),
    "response_format": ("text", _text_format),
    "user": ("user", lambda v: v),
    "metadata": ("metadata", lambda v: v),
}
"""Chat parameter -> (Responses field, value conversion)."""


def request_fields(params: dict[str, Any]) -> dict[str, Any]:
    """The `response.create` fields of chat-completion `params` (`extra_body` joins as is).

    Raises:
        BackendError: a parameter the Responses API has no field for, naming the allowed ones.
    """
    fields: dict[str, Any] = {}
    for name, value in params.items():
        if name == "extra_body":
            fields.update(value or {})
            continue
        if name not in _PARAMS:
            raise BackendError(
                f"parameter {name!r} has no Responses API field, so it cannot go over the "
                f"WebSocket transport; allowed: {', '.join(sorted(_PARAMS))}, extra_body"
            )
        if value is not None:
            key, convert = _PARAMS[name]
            fields[key] = convert(value)
    return fields


class EventFolder:
    """Turns one turn's Responses events into chat-completion chunks (module docstring)."""

    def __init__(self) -> None:
        self.calls: dict[int, int] = {}
        """Output index of each function-call item -> its index among the reply's calls."""
        self.response: dict[str, Any] | None = None
        """The final response object (set by the terminal event)."""

    def chunk(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """The chat chunk `event` stands for, or None for an event that carries nothing."""
        kind = event.get("type")
        if kind == "response.output_text.delta":
            return _delta({"content": event.get("delta") or ""})
        if kind in ("response.reasoning_text.delta", "response.reasoning_summary_text.delta"):
            return _delta({"reasoning": event.get("delta") or ""})
        if kind == "response.output_item.added":
            item = event.get("item") or {}
            if item.get("type") != "function_call":
                return None
            index = self.calls.setdefault(int(event.get("output_index", 0)), len(self.calls))
            fragment = {
                "index": index,
                "id": item.get("call_id"),
                "type": "function",
                "function": {
                    "name": item.get("name") or "",
                    "arguments": item.get("arguments") or "",
                },
            }
            return _delta({"tool_calls": [fragment]})
        if kind == "response.function_call_arguments.delta":
            known = self.calls.get(int(event.get("output_index", -1)))
            if known is None:
                return None
            fragment = {"index": known, "function": {"arguments": event.get("delta") or ""}}
            return _delta({"tool_calls": [fragment]})
        if kind in ("response.completed", "response.incomplete"):
            self.response = event.get("response") or {}
            return self._final(self.response)
        return None

    def _final(self, response: dict[str, Any]) -> dict[str, Any]:
        """The last chunk: usage and finish reason."""
        if response.get("status") == "incomplete":
            reason = (response.get("incomplete_details") or {}).get("reason")
            finish = "length" if reason == "max_output_tokens" else str(reason or "length")
        else:
            finish = "tool_calls" if self.calls else "stop"
        usage = response.get("usage") or {}
        chat_usage = {
            "prompt_tokens": usage.get("input_tokens"),
            "completion_tokens": usage.get("output_tokens"),
            "total_tokens": usage.get("total_tokens"),
            "prompt_tokens_details": usage.get("input_tokens_details") or {},
            "completion_tokens_details": usage.get("output_tokens_details") or {},
        }
        return {
            "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            "usage": chat_usage if usage else None,
        }


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta}]}
