"""ATIF trajectories (Harbor's Agent Trajectory Interchange Format, RFC 0001) -> traces.

Accepted: one ATIF trajectory (`schema_version` `ATIF-v1.0` ... `ATIF-v1.8`,
`traces.exporters.atif.ATIF_VERSIONS`) as a JSON file, or several as JSON lines; one run each.
Embedded `subagent_trajectories` (each with its own `steps`, found by `trajectory_id` or
`session_id`, nested ones too) become sub-runs (looplab-2): spawned by the agent step
whose observation result carries a `subagent_trajectory_ref` naming it (its
`source_call_id` is the spawning call) and joined by the next agent step, whose model call
then starts no earlier than the sub-run's last timestamp (it read the result).

Each `agent` step is one model call: `model_name` (else the agent's), `message` and
`tool_calls` (the assistant message), `metrics` (`prompt_tokens`, `completion_tokens`,
`cached_tokens`; `extra.reasoning_tokens`), and its tool calls with their results
(`observation.results`, matched by `source_call_id`). The first `user` step is the
prompt. Times:

- a trajectory `looplab export atif` wrote carries looplab's times in `extra.looplab`
  (`traces/exporters/atif.py`): every model call's and tool call's start, end, sent, first and last
  token, as measured (or estimated) in the original trace;
- any other: an ATIF step has one timestamp, read as when the step was complete, and no
  durations. A model call runs from the previous step's timestamp to its own (estimated:
  the tools and harness time between the two is inside it, ATIF cannot separate them);
  its tools sit at its timestamp with zero length (their times absent); the first step's
  call has no start (placed at zero length).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.exporters.atif import ATIF_VERSIONS, EXTRA_KEY
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import (
    ModelDraft,
    RunDraft,
    StepDraft,
    SubRunDraft,
    ToolDraft,
)
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import (
    as_float,
    as_int,
    as_str,
    dig,
    json_records,
    obj,
    parse_time,
    safe_run_id,
)

__all__ = ["AtifImporter", "import_atif", "trajectory_draft"]

FORMAT = "atif"
_PREVIOUS = "the previous ATIF step's timestamp (the agent's time between steps is inside)"
_OWN = "the ATIF step's timestamp (when the step was complete)"
_NO_TOOL_TIME = "ATIF records no tool times: placed at the step's timestamp, zero length"


def import_atif(path: Path) -> list[ImportedRun]:
    """Import every ATIF trajectory in `path` (module docstring).

    Raises:
        TraceError: not JSON, or a record that is not an ATIF trajectory (named).
    """
    runs = []
    for index, (where, record) in enumerate(json_records(path)):
        version = record.get("schema_version") if isinstance(record, dict) else None
        if version not in ATIF_VERSIONS or not isinstance(record.get("steps"), list):
            raise TraceError(
                f"{where}not an ATIF trajectory (schema_version {version!r:.40}; expected "
                f"one of {', '.join(ATIF_VERSIONS)} and a steps array)",
                path=str(path),
            )
        runs.append(build_run(_draft(record, path, str(index))))
    if not runs:
        raise TraceError("no ATIF trajectory in the file", path=str(path))
    return runs


def trajectory_draft(data: dict[str, Any], path: Path, key: str) -> RunDraft:
    """One ATIF trajectory's draft, before `build_run` (the Harbor importer reads a
    trial's `agent/trajectory.json` so, then adds the trial's phases and verdict)."""
    return _draft(data, path, key)


def _draft(data: dict[str, Any], path: Path, key: str) -> RunDraft:
    """One trajectory's draft (times as the module docstring says)."""
    agent = obj(data.get("agent"))
    ours = obj(dig(data, "extra", EXTRA_KEY))
    end = obj(ours.get("end"))
    name = as_str(agent.get("name"))
    version = as_str(agent.get("version"))
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(as_str(data.get("session_id")) or path.stem),
        source_path=path,
        source_key=key,
        agent=f"{name} {version}" if name and version and not ours else name,
        model=as_str(agent.get("model_name")),
        task=as_str(ours.get("task")),
        end_reason=as_str(end.get("end_reason")),
        success=end.get("success") if isinstance(end.get("success"), bool) else None,
        error=as_str(end.get("error")),
    )
    origin = ours.get("origin")
    base = parse_time(origin, "extra.looplab.origin", path) if origin is not None else None
    draft.steps, draft.prompt, spawns = _steps(data, draft.model, base, path)
    if base is not None and end.get("end") is not None:
        draft.end_time = base + float(end["end"])
    draft.subruns = _subruns(data, draft.steps, spawns, None, (base, path))
    exported = base is not None
    draft.model_timing = (
        "measured: looplab's own times (extra.looplab, written by looplab export atif)"
        if exported
        else f"estimated: from {_PREVIOUS} to {_OWN}"
    )
    draft.tool_timing = (
        "measured: looplab's own times (extra.looplab)"
        if exported
        else "absent: ATIF records no tool times (their time is inside the next model call)"
    )
    if not exported:
        draft.absent.update(
            {
                "model_call.sent",
                "model_call.first_token",
                "model_call.last_token",
                "tool_call.duration",
            }
        )
    return draft


def _steps(
    data: dict[str, Any], model: str | None, base: float | None, path: Path
) -> tuple[list[StepDraft], str | None, dict[str, tuple[int, str | None]]]:
    """A trajectory's agent steps, its prompt, and the sub-trajectories its steps spawned
    (referenced id -> (agent step index, spawning call id))."""
    steps = [obj(s) for s in data.get("steps") or []]
    stamps = [_stamp(s, i, path) for i, s in enumerate(steps)]
    out: list[StepDraft] = []
    prompt: str | None = None
    spawns: dict[str, tuple[int, str | None]] = {}
    for index, step in enumerate(steps):
        source = step.get("source")
        if source == "user" and prompt is None:
            prompt = _text(step.get("message"))
        if source != "agent":
            continue
        for result in (obj(x) for x in dig(step, "observation", "results") or []):
            for ref in (obj(r) for r in result.get("subagent_trajectory_ref") or []):
                for key in ("trajectory_id", "session_id"):
                    if as_str(ref.get(key)):
                        spawns[str(ref[key])] = (len(out), as_str(result.get("source_call_id")))
        before = next((t for t in reversed(stamps[:index]) if t is not None), None)
        out.append(
            _step(
                step,
                as_str(obj(data.get("agent")).get("model_name")) or model,
                base,
                (before, stamps[index]),
            )
        )
    return out, prompt, spawns


def _subruns(
    data: dict[str, Any],
    parent_steps: list[StepDraft],
    spawns: dict[str, tuple[int, str | None]],
    parent: str | None,
    where: tuple[float | None, Path],
) -> list[SubRunDraft]:
    """The embedded sub-trajectories as sub-runs (nested ones after their parent); a
    joining step's model call starts no earlier than the sub-run's end."""
    base, path = where
    out: list[SubRunDraft] = []
    for k, sub in enumerate(obj(x) for x in data.get("subagent_trajectories") or []):
        key = as_str(sub.get("trajectory_id")) or as_str(sub.get("session_id")) or f"sub-{k}"
        steps, prompt, inner = _steps(sub, None, base, path)
        spawned, call_id = spawns.get(key, (None, None))
        join = spawned + 1 if spawned is not None and spawned + 1 < len(parent_steps) else None
        out.append(
            SubRunDraft(
                id=safe_run_id(key),
                steps=steps,
                parent=parent,
                parent_step=spawned,
                join_step=join,
                spawn_call_id=call_id,
                agent=as_str(obj(sub.get("agent")).get("name")),
                description=prompt,
            )
        )
        ends = [t for s in steps for t in _times(s) if t is not None]
        joined = parent_steps[join].model if join is not None else None
        if joined is not None and ends and joined.start is not None and joined.start < max(ends):
            joined.start = max(ends)
            joined.estimated["start"] = "the joined sub-run's last timestamp (it read its result)"
        out += _subruns(sub, steps, inner, safe_run_id(key), where)
    return out


def _times(step: StepDraft) -> list[float | None]:
    return [
        *(x for t in step.tools for x in (t.start, t.end)),
        *((step.model.start, step.model.end) if step.model else ()),
    ]


def _stamp(step: dict[str, Any], index: int, path: Path) -> float | None:
    value = step.get("timestamp")
    return None if value is None else parse_time(value, f"steps[{index}].timestamp", path)


def _text(message: Any) -> str | None:
    """A step's message as text (content parts: their text parts joined)."""
    if isinstance(message, list):
        parts = [as_str(obj(p).get("text")) for p in message]
        return "\n".join(p for p in parts if p) or None
    return as_str(message)


def _step(
    step: dict[str, Any],
    model: str | None,
    base: float | None,
    times: tuple[float | None, float | None],
) -> StepDraft:
    """One agent step: its model call and tool calls (`times`: the previous step's
    timestamp and its own)."""
    before, own = times
    ours = obj(dig(step, "extra", EXTRA_KEY))
    timing = obj(ours.get("model_call"))
    metrics = obj(step.get("metrics"))
    calls = [obj(c) for c in step.get("tool_calls") or []]
    results = {
        as_str(r.get("source_call_id")): r
        for r in (obj(x) for x in dig(step, "observation", "results") or [])
    }
    message: dict[str, Any] = {"role": "assistant", "content": _text(step.get("message"))}
    if calls:
        message["tool_calls"] = [
            {
                "id": as_str(c.get("tool_call_id")),
                "type": "function",
                "function": {
                    "name": as_str(c.get("function_name")),
                    "arguments": json.dumps(c.get("arguments") or {}),
                },
            }
            for c in calls
        ]
    if isinstance(step.get("reasoning_content"), str):
        message["reasoning"] = step["reasoning_content"]
    m = ModelDraft(
        prompt_tokens=as_int(metrics.get("prompt_tokens")),
        completion_tokens=as_int(metrics.get("completion_tokens")),
        cached_tokens=as_int(metrics.get("cached_tokens")),
        reasoning_tokens=as_int(dig(metrics, "extra", "reasoning_tokens")),
        model=as_str(step.get("model_name")) or model,
        message=message,
        finish_reason=as_str(timing.get("finish_reason")),
        request_id=as_str(timing.get("request_id")),
    )
    if base is not None and timing:
        for field in ("start", "end", "sent", "first_token", "last_token"):
            value = as_float(timing.get(field))
            setattr(m, field, None if value is None else base + value)
        m.estimated = {str(k): str(v) for k, v in obj(timing.get("estimated")).items()}
        m.duration_measured = "start" not in m.estimated and "end" not in m.estimated
    else:
        m.start, m.end = before, own
        m.estimated = {"start": _PREVIOUS, "end": _OWN}
    tools = [_tool(c, results.get(as_str(c.get("tool_call_id"))), ours, base, own) for c in calls]
    return StepDraft(model=m, tools=tools)


def _tool(
    call: dict[str, Any],
    result: dict[str, Any] | None,
    ours: dict[str, Any],
    base: float | None,
    own: float | None,
) -> ToolDraft:
    """One tool call with its result; looplab's own record of it when there is one."""
    call_id = as_str(call.get("tool_call_id"))
    mine = next((obj(t) for t in ours.get("tools") or [] if obj(t).get("call_id") == call_id), {})
    content = (result or {}).get("content")
    output = _text(content)
    tool = ToolDraft(
        name=as_str(call.get("function_name")) or "tool",
        call_id=call_id,
        arguments=as_str(mine.get("arguments")) or json.dumps(call.get("arguments") or {}),
        output=output,
        output_chars=as_int(mine.get("output_chars")) or (len(output) if output else None),
        ok=mine.get("ok") if isinstance(mine.get("ok"), bool) else None,
        exit_code=as_int(mine.get("exit_code")),
        error=as_str(mine.get("error")),
    )
    if base is not None and mine:
        start, end = as_float(mine.get("start")), as_float(mine.get("end"))
        tool.start = None if start is None else base + start
        tool.end = None if end is None else base + end
        tool.estimated = {str(k): str(v) for k, v in obj(mine.get("estimated")).items()}
        tool.duration_measured = not tool.estimated
    else:
        tool.start = tool.end = own
        tool.estimated = {"start": _NO_TOOL_TIME, "end": _NO_TOOL_TIME}
    return tool


class AtifImporter:
    """The registry entry for ATIF trajectories."""

    name = FORMAT
    expects = (
        "an ATIF trajectory (Harbor RFC 0001: `schema_version` ATIF-v1.x, `agent`, `steps` "
        "with step_id/source/message/tool_calls/observation/metrics), JSON or JSON lines"
    )

    def sniff(self, path: Path) -> bool:
        """An ATIF `schema_version` near the start."""
        return peek(path).has_value("schema_version", 'ATIF-v1\\.[0-9]+"')

    def load(self, path: Path) -> list[ImportedRun]:
        """One run per trajectory (see `import_atif`)."""
        return import_atif(path)
