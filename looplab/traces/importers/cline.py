"""Cline tasks (`ui_messages.json`) -> looplab traces, one run per task.

Accepted: a Cline task's `ui_messages.json` (`<globalStorage>/tasks/<taskId>/`), a JSON
array of `ClineMessage`s: `ts` (epoch ms, when the message was created), `type` (`say` /
`ask`), `say` or `ask` (its kind), `text`. Field names: Cline's source
(cline/cline `src/shared/ExtensionMessage.ts`, `src/core/context/context-tracking/
ContextTrackerTypes.ts`, read 2026-12). Read:

- `say: api_req_started`, whose `text` is a `ClineApiReqInfo` JSON: `tokensIn`,
  `tokensOut`, `cacheWrites`, `cacheReads`, `cost`, `apiProtocol`, `cancelReason`. One
  model call each. Tokens: prompt = tokensIn + cacheWrites + cacheReads (Anthropic's
  accounting, tokensIn being the uncached part; `apiProtocol` openai: prompt = tokensIn,
  which includes the cached), cached = cacheReads, completion = tokensOut.
- the response's messages (`say` text / reasoning / completion_result, `ask` tool /
  command / use_mcp_server / followup / completion_result) up to the next request, and
  tool messages (`ask`/`say` tool, command, use_mcp_server) as tool calls.
- a sibling `task_metadata.json`'s `model_usage` (`ts`, `model_id`): each call's model is
  the last entry at or before it.

Cline stamps messages when they are created, never when they end: every time here is a
start. So a model call runs from its `api_req_started` (measured: the request's start) to
the last message of its response (ESTIMATED: that block's start, so the tail of its
stream is outside); its first token is the first message of the response (ESTIMATED: that
block's creation). A tool runs from its message (the model asked for it) to the next
request (ESTIMATED: the result went into it), a person's approval and Cline's own work
inside it. A request cancelled (`cancelReason`) is a call with its tokens, said in notes.
The verdict is absent (`completion_result` is the agent's claim, its end reason).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.end_reason import EndReason
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import (
    as_float,
    as_int,
    as_str,
    load_json,
    obj,
    safe_run_id,
)

__all__ = ["ClineImporter", "import_cline"]

FORMAT = "cline"
_TOOLS = {"tool", "command", "use_mcp_server", "browser_action_launch"}
_OUTPUTS = {"text", "reasoning", "completion_result", "followup", "plan_mode_respond"}
_MODEL_TIMING = (
    "estimated: api_req_started (the request's start, measured) -> the start of the "
    "response's last message (Cline stamps messages when created)"
)
_TOOL_TIMING = (
    "estimated: the tool message (the model asked) -> the next api_req_started (approval "
    "and Cline's own work inside)"
)


def import_cline(path: Path) -> list[ImportedRun]:
    """Import one Cline task's `ui_messages.json` (module docstring).

    Raises:
        TraceError: not a JSON array of Cline messages, or no `api_req_started` in it.
    """
    messages = load_json(path)
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise TraceError(
            "expected a JSON array of Cline messages (ts, type, say/ask)", path=str(path)
        )
    ordered = sorted(
        (m for m in messages if as_float(m.get("ts")) is not None), key=lambda m: m["ts"]
    )
    models = _model_usage(path.parent / "task_metadata.json")
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(path.parent.name if path.name == "ui_messages.json" else path.stem),
        source_path=path,
        agent="cline",
    )
    cancelled = 0
    for index, message in enumerate(ordered):
        kind = _kind(message)
        at = float(message["ts"]) / 1000.0
        if kind == "api_req_started":
            info = _info(message.get("text"))
            cancelled += 1 if info.get("cancelReason") else 0
            draft.steps.append(StepDraft(model=_call(at, info, _model_at(models, at))))
        elif kind in _OUTPUTS | _TOOLS and draft.steps and draft.steps[-1].model is not None:
            _output(draft.steps[-1].model, at, kind)
        if kind in _TOOLS and draft.steps:
            draft.steps[-1].tools.append(_tool(message, at, _next_request(ordered, index)))
        if kind == "completion_result":
            draft.end_reason = EndReason.COMPLETION_RESULT
        if draft.prompt is None and kind in ("task", "text") and not draft.steps:
            draft.prompt = as_str(message.get("text"))
    if not draft.steps:
        raise TraceError("no api_req_started message (no model request)", path=str(path))
    _describe(draft, cancelled, bool(models))
    return [build_run(draft)]


def _kind(message: dict[str, Any]) -> str:
    return as_str(message.get("say")) or as_str(message.get("ask")) or ""


def _info(text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        return {}
    try:
        return obj(json.loads(text))
    except ValueError:
        return {}


def _call(at: float, info: dict[str, Any], model: str | None) -> ModelDraft:
    uncached = as_int(info.get("tokensIn"))
    written = as_int(info.get("cacheWrites")) or 0
    read = as_int(info.get("cacheReads"))
    if info.get("apiProtocol") == "openai":
        prompt = uncached
    else:
        prompt = None if uncached is None else uncached + written + (read or 0)
    call = ModelDraft(
        start=at,
        end=at,
        prompt_tokens=prompt,
        cached_tokens=read,
        completion_tokens=as_int(info.get("tokensOut")),
        model=model,
        finish_reason=as_str(info.get("cancelReason")),
    )
    call.estimated["end"] = "no message of its response came: its request's start"
    return call


def _output(call: ModelDraft, at: float, kind: str) -> None:
    """A message of the call's response: the call ends no earlier than its start."""
    if call.first_token is None:
        call.first_token = at
        call.sent = call.start
        call.estimated["first_token"] = "the response's first message's creation"
    call.end = max(call.end or at, at)
    call.estimated["end"] = f"the start of the response's last message ({kind})"


def _tool(message: dict[str, Any], at: float, until: float | None) -> ToolDraft:
    kind = _kind(message)
    detail = _info(message.get("text"))
    name = as_str(detail.get("tool")) or as_str(detail.get("toolName")) or kind
    if kind == "command":
        name = "execute_command"
    tool = ToolDraft(
        name=name,
        start=at,
        end=until if until is not None else at,
        arguments=as_str(message.get("text")) or "",
    )
    tool.estimated["start"] = "the tool message's creation (the model asked for it)"
    tool.estimated["end"] = (
        "the next api_req_started (the result went into it)"
        if until is not None
        else "no later request: zero length"
    )
    return tool


def _next_request(ordered: list[dict[str, Any]], index: int) -> float | None:
    for message in ordered[index + 1 :]:
        if _kind(message) == "api_req_started":
            return float(message["ts"]) / 1000.0
    return None


def _model_usage(path: Path) -> list[tuple[float, str]]:
    """(seconds, model id) of a sibling task_metadata.json's `model_usage`, by time."""
    if not path.is_file():
        return []
    try:
        data = load_json(path)
    except TraceError:
        return []
    rows = obj(data).get("model_usage")
    out = [
        (float(r["ts"]) / 1000.0, str(r["model_id"]))
        for r in rows or []
        if isinstance(r, dict) and as_float(r.get("ts")) is not None and as_str(r.get("model_id"))
    ]
    return sorted(out)


def _model_at(models: list[tuple[float, str]], at: float) -> str | None:
    chosen = [model for ts, model in models if ts <= at]
    return chosen[-1] if chosen else (models[0][1] if models else None)


def _describe(draft: RunDraft, cancelled: int, has_models: bool) -> None:
    draft.model_timing = _MODEL_TIMING
    draft.tool_timing = _TOOL_TIMING if any(s.tools for s in draft.steps) else "absent"
    draft.absent.update({"model_call.last_token", "model_call.reasoning_tokens", "tool_call.ok"})
    draft.notes.append(
        "Cline stamps messages when created (start times only): model and tool times are "
        "ESTIMATED from the next message's creation"
    )
    if cancelled:
        draft.notes.append(f"{cancelled} request(s) cancelled (cancelReason)")
    if not has_models:
        draft.absent.add("model_call.model")
        draft.notes.append("no task_metadata.json model_usage beside the file: model absent")
    if draft.end_reason is None:
        draft.end_reason = EndReason.NO_COMPLETION_RESULT


class ClineImporter:
    """The registry entry for Cline tasks."""

    name = FORMAT
    expects = (
        "a Cline task's ui_messages.json (a JSON array of messages with `ts` epoch ms, "
        "`type` say/ask, `say: api_req_started` carrying tokensIn/tokensOut/cacheReads/"
        "cacheWrites)"
    )

    def sniff(self, path: Path) -> bool:
        """A JSON array whose messages have `ts` and a `say`/`ask` type."""
        head = peek(path)
        return head.start == "[" and head.has_key("ts") and head.has_value("type", '(say|ask)"')

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_cline`)."""
        return import_cline(path)
