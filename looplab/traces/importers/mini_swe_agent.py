"""mini-swe-agent trajectories (`.traj.json`) -> looplab traces.

Variants accepted (learned from SWE-agent/mini-swe-agent: `run/utils/save.py`,
`agents/default.py`, `docs/v2_migration.md`):

- `trajectory_format: mini-swe-agent-1.1` (v2.x): messages carry `extra`; assistant
  messages `extra.response` (the raw API response: `usage`, `created`, `id`) and
  `extra.timestamp`; observations `extra.raw_output`, `extra.returncode`,
  `extra.timestamp`; a final `{"role": "exit", "extra": {"exit_status", "submission"}}`.
  Tool-calling models (`tool_calls` on the assistant, `role: tool` results) and text-action
  models (a bash block, results as `role: user` with `extra.returncode`) both occur.
- `trajectory_format: mini-swe-agent-1` (v1.x): plain `{"role", "content"}` messages,
  sometimes `extra.response`; observations are user messages rendered from a template
  (`<returncode>N</returncode><output>...`); the exit status is `info.exit_status`.
  No timestamps: model and tool times are absent.
- a bare list of messages (what `agent.messages` dumps to): handled like the above.
- a `timestamp` key at the top level of each message (some third-party writers).

Timing: mini-swe-agent stamps each message when it is added, never the request. A model
call is taken to run from the previous stamped message to its assistant message, and a
tool call from the previous stamped message to its result: both are estimates (the gap
includes the harness's own time); the first call, with no earlier stamp, starts at the
response's `created` (provider clock, whole seconds).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import (
    as_float,
    as_int,
    as_str,
    dig,
    load_json,
    obj,
    parse_time,
    safe_run_id,
)

__all__ = ["MiniSweAgentImporter", "import_mini_swe_agent", "looks_like_mini_swe_agent"]

FORMAT = "mini-swe-agent"
_BASH_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_PREV = "the previous message's timestamp (the request follows it)"
_PREV_TOOL = "the previous message's timestamp (tools run one after another)"


def looks_like_mini_swe_agent(data: Any) -> bool:
    """True for a parsed JSON value that has the shape of a mini-swe-agent trajectory."""
    if isinstance(data, dict):
        fmt = str(data.get("trajectory_format", ""))
        return fmt.startswith("mini-swe-agent") or (
            isinstance(data.get("messages"), list) and isinstance(data.get("info"), dict)
        )
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(m, dict) and "role" in m for m in data[:5])
    )


def import_mini_swe_agent(path: Path) -> list[ImportedRun]:
    """Import one mini-swe-agent trajectory file.

    Args:
        path: a `.traj.json` file (any variant in the module docstring).

    Returns:
        One run.

    Raises:
        TraceError: not a trajectory, or a malformed message (named `messages[i]`).
    """
    data = load_json(path)
    if not looks_like_mini_swe_agent(data):
        raise TraceError(
            "not a mini-swe-agent trajectory: expected an object with `messages` and "
            "`trajectory_format`, or a list of chat messages",
            path=str(path),
        )
    if isinstance(data, dict):
        messages = data.get("messages")
        info = obj(data.get("info"))
        version = as_str(data.get("trajectory_format")) or "unversioned"
        instance = as_str(data.get("instance_id"))
    else:
        messages, info, version, instance = data, {}, "message list", None
    if not isinstance(messages, list):
        raise TraceError("`messages` is not a list", path=str(path))
    stem = path.name.removesuffix(".json").removesuffix(".traj")
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(instance or stem),
        source_path=path,
        task=instance or stem,
        agent=f"mini-swe-agent {as_str(info.get('mini_version')) or ''}".strip(),
        model=as_str(dig(info, "config", "model", "model_name")),
    )
    draft.notes.append(f"trajectory_format: {version}")
    _walk(messages, draft, path)
    draft.end_reason = as_str(info.get("exit_status")) or draft.end_reason
    if draft.end_reason:
        draft.notes.append("run_end.end_reason is mini-swe-agent's exit_status, verbatim")
    _timing_notes(draft)
    return [build_run(draft)]


def _walk(messages: list[Any], draft: RunDraft, path: Path) -> None:
    prev_time: float | None = None
    pending: list[ToolDraft] = []
    by_id: dict[str, ToolDraft] = {}
    have_usage = False
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise TraceError(f"{where}: not a chat message (no `role`)", path=str(path))
        role = message["role"]
        extra = obj(message.get("extra"))
        stamp = extra.get("timestamp", message.get("timestamp"))
        when = None if stamp is None else parse_time(stamp, f"{where}.timestamp", path)
        if role == "assistant":
            model, actions = _model_call(message, extra, when, prev_time, where, path)
            have_usage |= model.prompt_tokens is not None
            step = StepDraft(model=model, tools=actions)
            draft.steps.append(step)
            pending = list(actions)
            by_id = {t.call_id: t for t in actions if t.call_id}
        elif role == "exit":
            draft.end_reason = as_str(extra.get("exit_status")) or draft.end_reason
            for tool in pending:  # the submitting command's output became the exit message
                _observe(tool, message, extra, when, prev_time)
                tool.estimated["end"] = "not in the source: the exit message has no timestamp"
            pending = []
        elif pending and (role == "tool" or (role == "user" and _is_observation(message, extra))):
            tool = by_id.get(str(message.get("tool_call_id"))) or pending[0]
            _observe(tool, message, extra, when, prev_time)
            pending.remove(tool)
        elif role == "user" and draft.prompt is None and not draft.steps:
            draft.prompt = _text(message.get("content"))
        if when is not None:
            prev_time = when
    if not have_usage:
        draft.absent.update(
            {"model_call.prompt_tokens", "model_call.cached_tokens", "model_call.completion_tokens"}
        )
    draft.absent.update({"model_call.sent", "model_call.first_token", "model_call.last_token"})


def _model_call(
    message: dict[str, Any],
    extra: dict[str, Any],
    when: float | None,
    prev_time: float | None,
    where: str,
    path: Path,
) -> tuple[ModelDraft, list[ToolDraft]]:
    response = obj(extra.get("response"))
    usage = obj(response.get("usage"))
    choices = response.get("choices") or [{}]
    first = choices[0] if isinstance(choices, list) and choices else {}
    model = ModelDraft(
        end=when,
        prompt_tokens=as_int(usage.get("prompt_tokens", usage.get("input_tokens"))),
        cached_tokens=_cached(usage),
        completion_tokens=as_int(usage.get("completion_tokens", usage.get("output_tokens"))),
        reasoning_tokens=as_int(dig(usage, "completion_tokens_details", "reasoning_tokens")),
        finish_reason=as_str(obj(first).get("finish_reason")),
        model=as_str(response.get("model")),
        request_id=as_str(response.get("id")),
        message={
            k: message[k] for k in ("role", "content", "tool_calls") if message.get(k) is not None
        },
    )
    created = as_float(response.get("created"))
    if prev_time is not None and when is not None:
        model.start = prev_time
        model.estimated["start"] = _PREV
    elif created is not None:
        model.start = created if when is None else min(created, when)
        model.estimated["start"] = "response.created (provider clock, whole seconds)"
    return model, _actions(message, extra, where, path)


def _actions(
    message: dict[str, Any], extra: dict[str, Any], where: str, path: Path
) -> list[ToolDraft]:
    tools: list[ToolDraft] = []
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        for k, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                raise TraceError(f"{where}.tool_calls[{k}]: no `function`", path=str(path))
            arguments = function.get("arguments", "")
            tools.append(
                ToolDraft(
                    name=as_str(function.get("name")) or "unknown",
                    call_id=as_str(call.get("id")),
                    arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
                )
            )
        return tools
    actions = extra.get("actions")
    if isinstance(actions, list) and actions:
        for action in actions:
            command = (
                action.get("command", action.get("action")) if isinstance(action, dict) else ""
            )
            tools.append(
                ToolDraft(
                    name="bash",
                    call_id=as_str(obj(action).get("tool_call_id")),
                    arguments=str(command or ""),
                )
            )
        return tools
    blocks = _BASH_BLOCK.findall(_text(message.get("content")) or "")
    if len(blocks) == 1:  # v1 runs exactly one block; zero or several is a format error
        tools.append(ToolDraft(name="bash", arguments=blocks[0].strip()))
    return tools


def _is_observation(message: dict[str, Any], extra: dict[str, Any]) -> bool:
    if "returncode" in extra or "raw_output" in extra:
        return True
    # v2 format errors and limits arrive as user messages with an interrupt type; in v1
    # the user message after a parsed action is that action's result
    return not extra.get("interrupt_type")


def _observe(
    tool: ToolDraft,
    message: dict[str, Any],
    extra: dict[str, Any],
    when: float | None,
    prev_time: float | None,
) -> None:
    content = _text(message.get("content")) or ""
    raw = extra.get("raw_output")
    output = raw if isinstance(raw, str) else content
    code = as_int(extra.get("returncode"))
    if code is None:
        match = _RETURNCODE.search(content)
        code = int(match.group(1)) if match else None
    tool.output = output
    tool.output_chars = len(output)
    tool.exit_code = code
    tool.ok = None if code is None else code == 0
    problem = extra.get("exception_info")
    tool.error = str(problem) if problem else None
    tool.end = when
    if when is not None and prev_time is not None:
        tool.start = prev_time
        tool.estimated["start"] = _PREV_TOOL


def _timing_notes(draft: RunDraft) -> None:
    models = [s.model for s in draft.steps if s.model is not None]
    tools = [t for s in draft.steps for t in s.tools]
    if models and all(m.end is not None for m in models):
        draft.model_timing = (
            "estimated: previous message timestamp -> assistant message timestamp "
            "(includes harness time; first call from response.created)"
        )
    elif any(m.start is not None for m in models):
        draft.model_timing = "absent (calls positioned by response.created, whole seconds)"
    if tools and any(t.end is not None for t in tools):
        draft.tool_timing = (
            "estimated: previous message timestamp -> tool result timestamp (includes harness time)"
        )


def _cached(usage: dict[str, Any]) -> int | None:
    cached = as_int(dig(usage, "prompt_tokens_details", "cached_tokens"))
    if cached is None:
        cached = as_int(usage.get("prompt_cache_hit_tokens", usage.get("cache_read_input_tokens")))
    return cached


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


class MiniSweAgentImporter:
    """The registry entry for mini-swe-agent trajectories."""

    name = FORMAT
    expects = (
        "a .traj.json trajectory (an object with `messages`, `info`, `trajectory_format`) "
        "or a JSON list of chat messages"
    )

    def sniff(self, path: Path) -> bool:
        """`trajectory_format: mini-swe-agent...`, `mini_version`, `info` + `messages`, or
        a list of role-tagged messages that are not OpenHands events."""
        head = peek(path)
        if head.has_value("trajectory_format", "mini-swe-agent") or head.has_key("mini_version"):
            return True
        if head.start == "{":
            return head.has_key("info") and head.has_list("messages")
        return (
            head.start == "["
            and head.has_value("role", "(system|user|assistant|tool)")
            and not head.has_key("observation")
            and not head.has_value("action", "")
        )

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_mini_swe_agent`)."""
        return import_mini_swe_agent(path)
