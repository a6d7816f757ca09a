"""The slice of OpenAI's chat-completions wire format the simulator accepts and returns.

Requests are validated leniently where OpenAI is lenient (unknown sampling parameters such
as `temperature` are accepted and ignored) and strictly where it is strict (message roles,
tool messages without `tool_call_id`, `n`, token limits). Errors use OpenAI's JSON shape:
`{"error": {"message", "type", "param", "code"}}`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "ApiError",
    "ChatMessage",
    "ChatRequest",
    "StreamOptions",
    "ToolSpec",
    "describe_validation_error",
    "parse_request",
]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class FunctionSpec(_Lenient):
    """A function tool's declaration."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[a-zA-Z0-9_-]+$")
    """Function name, as OpenAI restricts it."""
    description: str | None = None
    """What the function does."""
    parameters: dict[str, Any] | None = None
    """JSON Schema of the arguments."""


class ToolSpec(_Lenient):
    """One entry of `tools`."""

    type: Literal["function"]
    """Only function tools exist in chat completions."""
    function: FunctionSpec
    """The function."""


class ToolCallFunction(_Lenient):
    """Function name and JSON-encoded arguments of an assistant tool call."""

    name: str
    """Function name."""
    arguments: str
    """Arguments as a JSON string (not validated: models emit broken JSON too)."""


class ToolCall(_Lenient):
    """A tool call inside an assistant message of the conversation."""

    id: str
    """Call id, echoed by the tool message that answers it."""
    type: Literal["function"] = "function"
    """Always `function`."""
    function: ToolCallFunction
    """The call."""


class ChatMessage(_Lenient):
    """One message of the conversation."""

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    """Who speaks."""
    content: str | list[dict[str, Any]] | None = None
    """Text, or a list of content parts."""
    name: str | None = None
    """Optional participant name."""
    tool_calls: list[ToolCall] | None = None
    """Tool calls of an assistant message."""
    tool_call_id: str | None = None
    """Which call a tool message answers (required for role `tool`)."""

    @model_validator(mode="after")
    def _tool_needs_id(self) -> ChatMessage:
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("messages with role 'tool' must have a 'tool_call_id'")
        return self


class StreamOptions(_Lenient):
    """`stream_options`."""

    include_usage: bool = False
    """Send a usage chunk (`choices: []`) before `[DONE]`."""


class ChatRequest(_Lenient):
    """`POST /v1/chat/completions` body."""

    model: str = Field(min_length=1)
    """Model id; for the simulator, `looplab-<policy>`."""
    messages: list[ChatMessage] = Field(min_length=1)
    """The conversation so far."""
    stream: bool = False
    """Stream the reply as server-sent events."""
    stream_options: StreamOptions | None = None
    """Streaming options."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Legacy cap on completion tokens."""
    max_completion_tokens: int | None = Field(default=None, ge=1)
    """Cap on completion tokens, reasoning included (wins over max_tokens)."""
    n: int = Field(default=1, ge=1)
    """Number of choices; the simulator supports exactly 1."""
    tools: list[ToolSpec] | None = None
    """Tools the model may call."""
    tool_choice: str | dict[str, Any] | None = None
    """`none`, `auto`, `required`, or `{"type": "function", "function": {"name": ...}}`."""
    parallel_tool_calls: bool | None = None
    """Whether several tool calls per reply are allowed."""

    def completion_limit(self) -> int | None:
        """The requested cap on completion tokens, if any."""
        return self.max_completion_tokens or self.max_tokens

    def forced_tool(self) -> str | None:
        """The function name that `tool_choice` forces, if it names one."""
        choice = self.tool_choice
        if isinstance(choice, dict):
            function = choice.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            if isinstance(name, str):
                return name
        return None


class ApiError(Exception):
    """An error answered in OpenAI's shape.

    Args:
        status: HTTP status code.
        message: human-readable message.
        type: OpenAI error type (`invalid_request_error`, ...).
        param: the request field at fault, dotted, if any.
        code: machine-readable code (`model_not_found`, `context_length_exceeded`, ...).
        headers: extra response headers (e.g. `retry-after`).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """The JSON body."""
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


def describe_validation_error(exc: ValidationError) -> ApiError:
    """Turn a request validation failure into a 400 naming the first bad field."""
    first = exc.errors(include_url=False)[0]
    param = ".".join(str(part) for part in first["loc"]) or None
    message = f"Invalid value for '{param}': {first['msg']}" if param else first["msg"]
    if exc.error_count() > 1:
        message += f" (and {exc.error_count() - 1} more problem(s))"
    return ApiError(400, message, param=param, code="invalid_value")


def parse_request(body: bytes) -> ChatRequest:
    """Parse and validate a chat-completion body.

    Raises:
        ApiError: 400 for bad JSON, a non-object body or an invalid field.
    """
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(
            400,
            f"We could not parse the JSON body of your request ({exc}). "
            "The body must be a JSON object.",
            code="invalid_json",
        ) from None
    if not isinstance(data, dict):
        raise ApiError(400, "The request body must be a JSON object.", code="invalid_json")
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as exc:
        raise describe_validation_error(exc) from None
