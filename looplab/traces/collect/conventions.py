"""Span conventions: which spans are agent runs, model calls and tool calls, and where
each field lives.

Three conventions, each one entry of `ROLE_RULES` (a new one joins by one line):

- OpenTelemetry GenAI semantic conventions: `gen_ai.operation.name` = `invoke_agent` /
  `create_agent` (agent), `chat` / `text_completion` / `generate_content` (model call),
  `execute_tool` (tool call). What `looplab export otel` writes, and what the
  OpenTelemetry instrumentations of the OpenAI Agents SDK and OpenAI client emit.
- OpenInference (Arize Phoenix; its instrumentations of the openai client, the OpenAI
  Agents SDK, LangChain): `openinference.span.kind` = AGENT / LLM / TOOL (CHAIN and the
  rest are structure, not calls).
- OpenLLMetry (Traceloop): `traceloop.span.kind` = agent / tool, `llm.request.type` = chat.

`FIELDS` lists, per draft field, the attribute keys that carry it in priority order
(GenAI first, then OpenInference, then looplab's own `looplab.*` from `export otel`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

__all__ = [
    "FIELDS",
    "FIRST_TOKEN_EVENTS",
    "KEPT_KEYS",
    "KEPT_RESOURCE_KEYS",
    "ROLE_RULES",
    "SUCCESS_ATTRIBUTE",
    "TASK_ATTRIBUTE",
    "Role",
    "first_value",
    "role_of",
]

Role = Literal["agent", "model", "tool"]

_GENAI: dict[str, Role] = {
    "invoke_agent": "agent",
    "create_agent": "agent",
    "chat": "model",
    "text_completion": "model",
    "generate_content": "model",
    "responses": "model",
    "execute_tool": "tool",
}
_OPENINFERENCE: dict[str, Role] = {"AGENT": "agent", "LLM": "model", "TOOL": "tool"}
_TRACELOOP: dict[str, Role] = {"agent": "agent", "tool": "tool"}


def _genai(attrs: dict[str, Any]) -> Role | None:
    return _GENAI.get(str(attrs.get("gen_ai.operation.name", "")))


def _openinference(attrs: dict[str, Any]) -> Role | None:
    return _OPENINFERENCE.get(str(attrs.get("openinference.span.kind", "")).upper())


def _traceloop(attrs: dict[str, Any]) -> Role | None:
    if attrs.get("llm.request.type") in ("chat", "completion"):
        return "model"
    return _TRACELOOP.get(str(attrs.get("traceloop.span.kind", "")))


ROLE_RULES: dict[str, Callable[[dict[str, Any]], Role | None]] = {
    "gen_ai": _genai,
    "openinference": _openinference,
    "traceloop": _traceloop,
}
"""Convention name -> the role it gives a span's attributes (None: not its span)."""

FIELDS: dict[str, tuple[str, ...]] = {
    "prompt_tokens": (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
    ),
    "completion_tokens": (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
    ),
    "cached_tokens": (
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
        "llm.token_count.prompt_details.cache_read",
    ),
    "reasoning_tokens": (
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.usage.reasoning_tokens",
        "llm.token_count.completion_details.reasoning",
    ),
    "model": ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"),
    "request_id": ("gen_ai.response.id",),
    "finish_reason": ("gen_ai.response.finish_reasons", "llm.finish_reason"),
    "ttft_s": ("looplab.ttft_s",),
    "tool_name": ("gen_ai.tool.name", "tool.name"),
    "tool_call_id": ("gen_ai.tool.call.id", "tool_call.id", "tool.id"),
    "tool_arguments": ("gen_ai.tool.call.arguments", "input.value"),
    "tool_output": ("gen_ai.tool.call.result", "output.value"),
    "exit_code": ("looplab.exit_code",),
    "agent_name": ("gen_ai.agent.name", "agent.name"),
    "task": ("looplab.task",),
}
"""Draft field -> attribute keys carrying it, first present wins."""

PROFILE_ATTRIBUTE = "looplab.profile"
"""The span (or resource) attribute naming the latency profile that served a run."""

CLAUDE_CODE_CALL_KEYS = frozenset(
    {
        "session.id",
        "prompt.id",
        "model",
        "duration_ms",
        "ttft_ms",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "speed",
        "query_source",
        "agent_id",
        "request_id",
        "success",
        "error",
        "tool_name",
        "tool_use_id",
        "source",
    }
)
"""The attributes Claude Code puts on its model and tool records, as events and as beta
trace spans alike (each reader adds its own: `CLAUDE_CODE_KEYS`, `ClaudeCodeEvents.kept`)."""

CLAUDE_CODE_KEYS = CLAUDE_CODE_CALL_KEYS | {
    "span.type",
    "parent_agent_id",
    "status_code",
    "decision",
}
"""The attributes of Claude Code's beta trace spans (`claude_code.*`) that
`collect/telemetry/claude_code_spans.py` reads."""

KEPT_KEYS = frozenset(
    {key for keys in FIELDS.values() for key in keys}
    | CLAUDE_CODE_KEYS
    | {
        "gen_ai.operation.name",
        "openinference.span.kind",
        "llm.request.type",
        "traceloop.span.kind",
        "looplab.success",
        "looplab.end_reason",
        PROFILE_ATTRIBUTE,
    }
)
"""The span attributes any reader here uses; the receiver keeps only these (an instrumented
LLM span carries whole prompts in others), which bounds a buffered span's memory."""

TASK_ATTRIBUTE = "looplab.task"
"""The span (the root's first, then any) or resource attribute naming the run's task id
(`OTEL_RESOURCE_ATTRIBUTES=looplab.task=fix-1` sets it without code); without it the
run's task is unknown (`?`), and runs of several tasks cannot be paired."""
SUCCESS_ATTRIBUTE = "looplab.success"
"""The agent (root) span's boolean attribute saying whether the task was solved; without
it the agent span's status decides (ERROR: failed, OK: solved, UNSET: unknown)."""
KEPT_RESOURCE_KEYS = frozenset({"service.name", PROFILE_ATTRIBUTE, TASK_ATTRIBUTE})
"""The resource attributes kept (the run's name when no agent names it; its task)."""

FIRST_TOKEN_EVENTS = frozenset({"First Token Stream Event"})
"""Span event names that mark a streamed call's first token (OpenInference's openai
instrumentation adds it when a stream yields its first chunk). The GenAI conventions have
no span-level first-token mark (only a metric), so their calls' TTFT is absent unless the
span carries `looplab.ttft_s` (`looplab export otel`)."""


def role_of(attrs: dict[str, Any]) -> Role | None:
    """The span's role under the first convention that names one, else None."""
    for rule in ROLE_RULES.values():
        role = rule(attrs)
        if role is not None:
            return role
    return None


def first_value(attrs: dict[str, Any], field: str) -> Any:
    """The value of the first key of `FIELDS[field]` present (a one-item list unwrapped)."""
    for key in FIELDS[field]:
        value = attrs.get(key)
        if isinstance(value, list):
            value = value[0] if value else None
        if value is not None and value != "":
            return value
    return None
