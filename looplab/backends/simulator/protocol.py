"""The slice of OpenAI's chat-completions wire format the simulator accepts and returns.

Requests are validated the way OpenAI validates them: the documented fields must have
their documented types and ranges (`temperature: "hot"`, `max_tokens: "5"`,
`tool_choice: "maybe"`, a user message without content are 400s naming the field, e.g.
`messages[0].content`), unknown extra fields are accepted and ignored, and the sampling
parameters the simulator does not use (`temperature`, `top_p`, `seed`, ...) are checked,
then ignored. Errors use OpenAI's JSON shape: `{"error": {"message", "type", "param",
"code"}}`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

__all__ = [
    "ApiError",
    "ChatMessage",
    "ChatRequest",
    "FieldProblem",
    "StreamOptions",
    "ToolSpec",
    "describe_validation_error",
    "parse_request",
    "validate_chat",
]


class FieldProblem(ValueError):
    """A check across fields that blames one of them (named in the 400's `param`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


Temperature = Annotated[StrictFloat, Field(ge=0, le=2)]
Probability = Annotated[StrictFloat, Field(ge=0, le=1)]
Penalty = Annotated[StrictFloat, Field(ge=-2, le=2)]


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

    name: StrictStr
    """Function name."""
    arguments: StrictStr
    """Arguments as a JSON string (not validated: models emit broken JSON too)."""


class ToolCallName(_Lenient):
    """`{"name": ...}` of a named tool choice."""

    name: StrictStr
    """The function the model must call."""


class ToolCall(_Lenient):
    """A tool call inside an assistant message of the conversation."""

    id: StrictStr
    """Call id, echoed by the tool message that answers it."""
    type: Literal["function"] = "function"
    """Always `function`."""
    function: ToolCallFunction
    """The call."""


class ChatMessage(_Lenient):
    """One message of the conversation."""

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    """Who speaks."""
    content: StrictStr | list[dict[str, Any]] | None = None
    """Text, or a list of content parts; required except for assistant messages with
    tool calls."""
    name: StrictStr | None = None
    """Optional participant name."""
    tool_calls: list[ToolCall] | None = None
    """Tool calls of an assistant message."""
    tool_call_id: StrictStr | None = None
    """Which call a tool message answers (required for role `tool`)."""

    @model_validator(mode="after")
    def _required_parts(self) -> ChatMessage:
        if self.role == "tool" and not self.tool_call_id:
            raise FieldProblem("tool_call_id", "messages with role 'tool' must have one")
        if self.content is None and not (self.role == "assistant" and self.tool_calls):
            raise FieldProblem("content", f"messages with role {self.role!r} must have content")
        for index, part in enumerate(self.content if isinstance(self.content, list) else []):
            kind = part.get("type")
            if not isinstance(kind, str):
                raise FieldProblem(f"content[{index}].type", "a content part needs a type")
            if kind == "text" and not isinstance(part.get("text"), str):
                raise FieldProblem(f"content[{index}].text", "a text part needs a text string")
        return self


class NamedToolChoice(_Lenient):
    """`tool_choice` naming one function."""

    type: Literal["function"]
    """Always `function`."""
    function: ToolCallName
    """Which function."""


class StreamOptions(_Lenient):
    """`stream_options`."""

    include_usage: StrictBool = False
    """Send a usage chunk (`choices: []`) before `[DONE]`."""


class ChatRequest(_Lenient):
    """`POST /v1/chat/completions` body."""

    model: StrictStr = Field(min_length=1)
    """Model id; for the simulator, `looplab-<policy>`."""
    messages: list[ChatMessage] = Field(min_length=1)
    """The conversation so far."""
    stream: StrictBool = False
    """Stream the reply as server-sent events."""
    stream_options: StreamOptions | None = None
    """Streaming options."""
    max_tokens: StrictInt | None = Field(default=None, ge=1)
    """Legacy cap on completion tokens."""
    max_completion_tokens: StrictInt | None = Field(default=None, ge=1)
    """Cap on completion tokens, reasoning included (wins over max_tokens)."""
    n: StrictInt = Field(default=1, ge=1, le=128)
    """Number of choices; the simulator supports exactly 1."""
    tools: list[ToolSpec] | None = Field(default=None, max_length=128)
    """Tools the model may call."""
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    """`none`, `auto`, `required`, or `{"type": "function", "function": {"name": ...}}`."""
    parallel_tool_calls: StrictBool | None = None
    """Whether several tool calls per reply are allowed."""
    temperature: Temperature | None = None
    """Sampling temperature (checked, not used by the simulator)."""
    top_p: Probability | None = None
    """Nucleus sampling (checked, not used)."""
    presence_penalty: Penalty | None = None
    """Checked, not used."""
    frequency_penalty: Penalty | None = None
    """Checked, not used."""
    seed: StrictInt | None = None
    """Checked, not used (the simulator seeds from its profile and the conversation)."""
    stop: StrictStr | list[StrictStr] | None = None
    """Stop sequences (checked, not used)."""
    logprobs: StrictBool | None = None
    """Checked, not used."""
    top_logprobs: StrictInt | None = Field(default=None, ge=0, le=20)
    """Checked, not used."""
    user: StrictStr | None = None
    """End-user id (checked, not used)."""

    def completion_limit(self) -> int | None:
        """The requested cap on completion tokens, if any."""
        return self.max_completion_tokens or self.max_tokens

    def forced_tool(self) -> str | None:
        """The function name that `tool_choice` forces, if it names one."""
        choice = self.tool_choice
        return choice.function.name if isinstance(choice, NamedToolChoice) else None


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
    """Turn a request validation failure into a 400 naming the first bad field the way
    OpenAI does (`messages[0].content`)."""
    first = exc.errors(include_url=False)[0]
    param = _param(first["loc"])
    problem = first["msg"]
    blamed = (first.get("ctx") or {}).get("error")
    if isinstance(blamed, FieldProblem):
        param = f"{param}.{blamed.field}" if param else blamed.field
        problem = str(blamed)
    if first["type"] not in ("missing", "value_error") and "input" in first:
        got = first["input"]
        shown = repr(got) if isinstance(got, int | float | bool | None) else type(got).__name__
        if isinstance(got, str):
            shown = repr(got[:40] + ("..." if len(got) > 40 else ""))
        problem += f" (got {shown})"
    message = f"Invalid value for '{param}': {problem}" if param else problem
    if exc.error_count() > 1:
        message += f" (and {exc.error_count() - 1} more problem(s))"
    code = "invalid_type" if first["type"].endswith("_type") else "invalid_value"
    return ApiError(400, message, param=param, code=code)


def _param(loc: tuple[int | str, ...]) -> str | None:
    """`('messages', 0, 'content')` -> `messages[0].content`; union member names dropped."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part[:1].isupper() or "[" in part or part in ("str", "int", "float", "bool"):
            continue  # pydantic names the union member it tried (`list[...]`, `NamedToolChoice`)
        elif part.startswith(("literal[", "function-after")):
            continue
        else:
            text += f".{part}" if text else part
    return text or None


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
    return validate_chat(data)


def validate_chat(data: dict[str, Any]) -> ChatRequest:
    """The one request validator: a chat-completion body as `serve` and the proxy check it.

    Raises:
        ApiError: 400 naming the first invalid field (`describe_validation_error`).
    """
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as exc:
        raise describe_validation_error(exc) from None
