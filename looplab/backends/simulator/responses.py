"""The Responses API (`POST /v1/responses`) on top of chat completions: requests in, objects out.

The simulator is a chat-completions model: a Responses request is translated into the
chat request it means (`chat_body`), prepared and paced like any other, and its reply is
written back as Responses objects (`response_object`) or events
(`looplab.backends.simulator.responses_stream`). What maps to what:

| Responses                                   | chat completions                          |
|---------------------------------------------|-------------------------------------------|
| `instructions`                              | a leading `system` message                |
| `input` text, or `message` items            | `user` / `assistant` / `system` messages  |
| `input_image` parts (`image_url`, `detail`)  | `image_url` content parts                 |
| `function_call` items                       | `tool_calls` of the assistant message     |
|                                             | just before them (or of a new one)        |
| `function_call_output` items                | `tool` messages                           |
| `reasoning` items                           | dropped (their tokens were counted)       |
| `tools` (function tools)                    | `tools`                                   |
| `tool_choice`, `parallel_tool_calls`        | the same                                  |
| `max_output_tokens`                         | `max_completion_tokens`                   |
| `text.format` (`json_schema`, `json_object`)| `response_format`                         |

Not supported over HTTP (400 naming the field): `previous_response_id` and `conversation`
(the simulator keeps no state between requests; send the whole input), built-in tools. On
the WebSocket (`responses_ws.py`) `previous_response_id` works within the connection.
"""

from __future__ import annotations

from typing import Any

from looplab.backends.simulator.protocol import ApiError

__all__ = ["chat_body", "output_items", "response_object", "responses_usage"]

_PASSED = ("model", "stream", "temperature", "top_p", "parallel_tool_calls", "user")


def chat_body(body: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions request a Responses request means (see the module table).

    Raises:
        ApiError: 400 for a field the simulator cannot honour.
    """
    for unsupported in ("previous_response_id", "conversation"):
        if body.get(unsupported):
            raise ApiError(
                400,
                f"{unsupported} is not supported by the looplab simulator, which keeps no "
                "state between requests: send the whole conversation as `input`.",
                param=unsupported,
                code="unsupported_parameter",
            )
    chat: dict[str, Any] = {key: body[key] for key in _PASSED if key in body}
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.append({"role": "system", "content": body["instructions"]})
    messages.extend(_messages(body.get("input")))
    chat["messages"] = messages
    tools = [_tool(t, i) for i, t in enumerate(body.get("tools") or [])]
    if tools:
        chat["tools"] = tools
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        chat["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    elif choice is not None:
        chat["tool_choice"] = choice
    if body.get("max_output_tokens") is not None:
        chat["max_completion_tokens"] = body["max_output_tokens"]
    fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = {k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}
        chat["response_format"] = {"type": "json_schema", "json_schema": schema}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        chat["response_format"] = {"type": "json_object"}
    return chat


def _messages(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if value is None:
        return []
    if not isinstance(value, list):
        raise ApiError(400, "input must be a string or a list of items", param="input")
    out: list[dict[str, Any]] = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise ApiError(400, "an input item must be an object", param=f"input[{index}]")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            out.append({"role": item.get("role", "user"), "content": _content(item.get("content"))})
        elif kind == "function_call":
            call = {
                "id": str(item.get("call_id") or item.get("id") or f"call_{index}"),
                "type": "function",
                "function": {
                    "name": str(item.get("name", "")),
                    "arguments": str(item.get("arguments", "")),
                },
            }
            last = out[-1] if out else None
            # calls after the turn's message (or earlier calls) are that one assistant turn
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(item.get("call_id", "")),
                    "content": output if isinstance(output, str) else _text(output),
                }
            )
    return out


def _content(content: Any) -> str | list[dict[str, Any]]:
    """A message item's content: its text, or chat parts when it holds `input_image`s."""
    parts = content if isinstance(content, list) else []
    if not any(isinstance(p, dict) and p.get("type") == "input_image" for p in parts):
        return _text(content)
    out: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "input_image":
            image = {"url": str(part.get("image_url") or "")}
            if part.get("detail"):
                image["detail"] = str(part["detail"])
            out.append({"type": "image_url", "image_url": image})
        elif isinstance(part.get("text"), str):
            out.append({"type": "text", "text": part["text"]})
    return out


def _text(content: Any) -> str:
    """Text of a Responses content value: a string or a list of text parts."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def _tool(tool: Any, index: int) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type") != "function":
        kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
        raise ApiError(
            400,
            f"tool type {kind!r} is not supported by the looplab simulator (function tools only)",
            param=f"tools[{index}].type",
            code="unsupported_value",
        )
    function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
    if function.get("strict") is False:  # chat's default: the same tool as one without it
        del function["strict"]
    return {"type": "function", "function": function}


def responses_usage(chat_usage: dict[str, Any]) -> dict[str, Any]:
    """A chat usage object in the Responses API's shape."""
    prompt = chat_usage.get("prompt_tokens_details") or {}
    completion = chat_usage.get("completion_tokens_details") or {}
    return {
        "input_tokens": chat_usage.get("prompt_tokens", 0),
        "input_tokens_details": {"cached_tokens": prompt.get("cached_tokens", 0)},
        "output_tokens": chat_usage.get("completion_tokens", 0),
        "output_tokens_details": {"reasoning_tokens": completion.get("reasoning_tokens", 0)},
        "total_tokens": chat_usage.get("total_tokens", 0),
    }


def output_items(
    response_id: str,
    reasoning_tokens: int,
    text: str | None,
    calls: list[dict[str, Any]],
    status: str = "completed",
) -> list[dict[str, Any]]:
    """The `output` list: a reasoning item (when there were reasoning tokens), the
    message (when there is text), then one `function_call` item per call."""
    items: list[dict[str, Any]] = []
    if reasoning_tokens:
        items.append(reasoning_item(response_id))
    if text is not None:
        items.append(message_item(response_id, text, status))
    items.extend(
        function_item(response_id, index, call, status) for index, call in enumerate(calls)
    )
    return items


def reasoning_item(response_id: str) -> dict[str, Any]:
    """The (hidden) reasoning output item: its tokens are counted, its text is not sent."""
    return {"type": "reasoning", "id": "rs_" + response_id, "summary": []}


def message_item(response_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    """The assistant message output item."""
    content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    return {
        "type": "message",
        "id": "msg_" + response_id,
        "status": status,
        "role": "assistant",
        "content": content,
    }


def function_item(
    response_id: str, index: int, call: dict[str, Any], status: str = "completed"
) -> dict[str, Any]:
    """A `function_call` output item from a chat tool call."""
    function = call.get("function") or {}
    return {
        "type": "function_call",
        "id": f"fc_{response_id}_{index}",
        "call_id": call.get("id", ""),
        "name": function.get("name", ""),
        "arguments": function.get("arguments", ""),
        "status": status,
    }


def response_object(
    request: dict[str, Any],
    response_id: str,
    created: int,
    *,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
    status: str,
) -> dict[str, Any]:
    """A Responses API `response` object (what the non-streaming endpoint returns, and
    what `response.created` / `response.completed` carry)."""
    incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
    return {
        "id": "resp_" + response_id,
        "object": "response",
        "created_at": created,
        "status": status,
        "error": None,
        "incomplete_details": incomplete,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": request.get("model"),
        "output": output,
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": request.get("temperature", 1.0),
        "text": request.get("text") or {"format": {"type": "text"}},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools") or [],
        "top_p": request.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "user": request.get("user"),
        "metadata": request.get("metadata") or {},
    }
