"""SWE-agent trajectories (`.traj`) -> looplab traces.

Variants accepted (learned from SWE-agent/SWE-agent: `sweagent/types.py`,
`trajectories/demonstrations/`):

- `{"trajectory": [...], "history": [...], "info": {...}}` (0.x and 1.x): one trajectory
  step per model call: `thought`, `action` (the command line), `observation`, `response`,
  `state`, and in 1.x `execution_time` (seconds the action took), `query`, `extra_info`;
  `info` has `exit_status`, `submission` and `model_stats` (`tokens_sent`,
  `tokens_received`, `api_calls`, costs); 1.x adds `replay_config` (the run's config as a
  JSON string, with the model name).
- `{"history": [...]}` only (function-calling demonstrations): assistant messages with
  `action` (and `tool_calls`), each followed by its observation (`role: tool` or `user`).

Timing: SWE-agent records no timestamps. Tool time is `execution_time` where present
(measured; the calls are laid end to end on the run axis, an estimated placement); model
time is absent. Token counts exist only as run totals (`info.model_stats`): when they are
non-zero they are spread evenly over the steps, marked estimated (so a run's total is
right, its per-call split is not); hand-written and replayed demonstrations have zeros,
which are absent, not zero.
"""

from __future__ import annotations

import json
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
    safe_run_id,
)

__all__ = ["SweAgentImporter", "import_swe_agent", "looks_like_swe_agent"]

FORMAT = "swe-agent"
_THOUGHT_KEYS = {"thought", "response"}
_SPREAD = "info.model_stats.{} spread evenly over the steps (the run total is recorded)"


def looks_like_swe_agent(data: Any) -> bool:
    """True for a parsed JSON value shaped like a SWE-agent trajectory."""
    if not isinstance(data, dict):
        return False
    steps = data.get("trajectory")
    if isinstance(steps, list) and steps:
        first = obj(steps[0])
        return {"action", "observation"} <= set(first) and bool(_THOUGHT_KEYS & set(first))
    history = data.get("history")
    return isinstance(history, list) and any(
        "message_type" in obj(m) or "agent" in obj(m) for m in history[:3]
    )


def import_swe_agent(path: Path) -> list[ImportedRun]:
    """Import one SWE-agent trajectory file.

    Args:
        path: a `.traj` file (any variant in the module docstring).

    Returns:
        One run.

    Raises:
        TraceError: not a trajectory, or a malformed step (named `trajectory[i]`).
    """
    data = load_json(path)
    if not looks_like_swe_agent(data):
        raise TraceError(
            "not a SWE-agent trajectory: expected an object with `trajectory` (steps with "
            "`action`, `observation`, `thought`) or `history` (messages with `agent`)",
            path=str(path),
        )
    info = obj(data.get("info"))
    stem = path.name.removesuffix(".traj").removesuffix(".json")
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(stem),
        source_path=path,
        task=stem,
        agent=" ".join(["SWE-agent", as_str(info.get("swe_agent_version")) or ""]).strip(),
        model=_model_name(data),
        end_reason=as_str(info.get("exit_status")),
    )
    steps = data.get("trajectory")
    if isinstance(steps, list) and steps:
        _from_trajectory(steps, draft, path)
    else:
        _from_history(data.get("history") or [], draft, path)
    _tokens(obj(info.get("model_stats")), draft)
    draft.absent.update({"model_call.sent", "model_call.first_token", "model_call.last_token"})
    draft.absent.add("tool_call.exit_code")
    return [build_run(draft)]


def _model_name(data: dict[str, Any]) -> str | None:
    replay = data.get("replay_config")
    if isinstance(replay, str):
        try:
            replay = json.loads(replay)
        except ValueError:
            return None
    return as_str(dig(replay, "agent", "model", "name"))


def _from_trajectory(steps: list[Any], draft: RunDraft, path: Path) -> None:
    timed = 0
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise TraceError(f"trajectory[{i}]: not a step object", path=str(path))
        thought = as_str(step.get("thought")) or as_str(step.get("response"))
        model = ModelDraft(message={"role": "assistant", "content": thought or ""})
        tool = _action_tool(as_str(step.get("action")), as_str(step.get("observation")))
        seconds = as_float(step.get("execution_time"))
        if tool is not None and seconds is not None:
            tool.duration, tool.duration_measured = seconds, True
            timed += 1
        draft.steps.append(StepDraft(model=model, tools=[tool] if tool else []))
    if timed:
        draft.tool_timing = (
            f"measured: trajectory[].execution_time ({timed} calls), laid end to end "
            "(SWE-agent records no timestamps)"
        )
    draft.notes.append("model time absent: SWE-agent records no timestamps")


def _from_history(history: list[Any], draft: RunDraft, path: Path) -> None:
    pending: ToolDraft | None = None
    for i, message in enumerate(history):
        if not isinstance(message, dict):
            raise TraceError(f"history[{i}]: not a message object", path=str(path))
        role = message.get("role")
        if role == "assistant":
            content = as_str(message.get("thought")) or as_str(message.get("content")) or ""
            pending = _action_tool(as_str(message.get("action")), None)
            step = StepDraft(model=ModelDraft(message={"role": "assistant", "content": content}))
            step.tools = [pending] if pending else []
            draft.steps.append(step)
        elif role in ("tool", "user") and pending is not None:
            output = as_str(message.get("content")) or ""
            pending.output, pending.output_chars = output, len(output)
            pending = None
        elif role == "user" and draft.prompt is None and not draft.steps:
            draft.prompt = as_str(message.get("content"))
    draft.notes.append("steps from `history` (no trajectory): no times recorded")


def _action_tool(action: str | None, observation: str | None) -> ToolDraft | None:
    command = (action or "").strip()
    if not command:
        return None
    return ToolDraft(
        name=command.split(maxsplit=1)[0],
        arguments=command,
        output=observation,
        output_chars=None if observation is None else len(observation),
    )


def _tokens(stats: dict[str, Any], draft: RunDraft) -> None:
    """Run totals of `model_stats` spread over the model calls (estimated), or absent."""
    sent, received = as_int(stats.get("tokens_sent")), as_int(stats.get("tokens_received"))
    calls = [s.model for s in draft.steps if s.model is not None]
    if not calls or not sent or not received:
        draft.absent.update({"model_call.prompt_tokens", "model_call.completion_tokens"})
        draft.notes.append("token counts absent: info.model_stats has none (zeros)")
        return
    for model in calls:
        model.prompt_tokens = round(sent / len(calls))
        model.completion_tokens = round(received / len(calls))
        model.estimated["prompt_tokens"] = _SPREAD.format("tokens_sent")
        model.estimated["completion_tokens"] = _SPREAD.format("tokens_received")
    draft.absent.add("model_call.cached_tokens")


class SweAgentImporter:
    """The registry entry for SWE-agent trajectories."""

    name = FORMAT
    expects = (
        "a SWE-agent .traj: an object with `trajectory` (steps with `action`, `observation`, "
        "`thought`, `execution_time`) and/or `history` (messages with `agent`), and `info`"
    )

    def sniff(self, path: Path) -> bool:
        """An object with a `trajectory`/`history` list whose entries have SWE-agent keys
        (`thought`, `execution_time`, `message_type`, `agent`) and no event timestamps."""
        head = peek(path)
        if head.start != "{" or head.has_key("timestamp"):
            return False
        if head.has_list("trajectory"):
            return head.has_key("thought") or head.has_key("execution_time")
        return head.has_list("history") and (head.has_key("message_type") or head.has_key("agent"))

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_swe_agent`)."""
        return import_swe_agent(path)
