"""Traces -> ATIF, Harbor's Agent Trajectory Interchange Format (RFC 0001).

`export_atif(trace)` returns one ATIF trajectory (`ATIF_VERSION`): the root's
`schema_version`, `session_id` (the run id), `agent` (`name`, `version`, `model_name`),
`steps`, `final_metrics` (total prompt / completion / cached tokens, total steps),
`notes` and `extra`. Steps, numbered from 1:

- a `user` step with the run's prompt (or task), stamped at the run's start, when the
  trace has one;
- one `agent` step per model call, stamped when its reply was complete (UTC ISO 8601):
  `model_name`, `message` (the reply's text), `reasoning_content` when the reply carried
  its reasoning, `tool_calls` (`tool_call_id`, `function_name`, `arguments` as an object;
  arguments that are not a JSON object go under `input`), `observation.results` (each
  tool's output, by `source_call_id`) and `metrics` (`prompt_tokens`,
  `completion_tokens`, `cached_tokens`; reasoning tokens in `metrics.extra`). A step's
  tool calls belong to its action call (the step's only call, or the one whose purpose
  is `actor`; else its last).

ATIF has one timestamp per step; looplab's timings ride in `extra.looplab` (`EXTRA_KEY`):
on the root, `origin` (the UTC wall time of the run axis' zero), the run's end and
provenance; on each agent step, `model_call` (`start`, `end`, `sent`, `first_token`,
`last_token`, `reasoning_s` on the run axis, `finish_reason`, `request_id`, `purpose`,
`estimated`), `tools` (name, call id, arguments text, `start`, `end`, ok, exit code,
error, output length, estimated) and the step's `model_s` / `tool_s` / `overhead_s`.
`looplab import atif` reads them back, so a round trip keeps steps, tokens and times;
any other ATIF file imports from its step timestamps (`importers/atif.py`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from looplab import __version__
from looplab.traces.io import Trace
from looplab.traces.schema import ModelCallEvent, StepEvent, ToolCallEvent

__all__ = ["ATIF_VERSION", "ATIF_VERSIONS", "EXTRA_KEY", "export_atif", "run_origin_wall"]

ATIF_VERSION = "ATIF-v1.7"
"""The version `export_atif` writes."""
ATIF_VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(9))
"""The versions `looplab import atif` reads (v1.0 ... v1.8)."""
EXTRA_KEY = "looplab"
"""The key of looplab's own data in ATIF `extra` objects."""


def run_origin_wall(trace: Trace) -> datetime:
    """The UTC wall time of the run axis' zero (the first timed event's wall time less its
    start; the header's creation time when no event has one)."""
    for event in trace.events:
        if event.wall_time is not None:
            wall = event.wall_time
            wall = wall if wall.tzinfo else wall.replace(tzinfo=UTC)
            return wall - timedelta(seconds=event.start)
    created = trace.header.created
    return created if created.tzinfo else created.replace(tzinfo=UTC)


def export_atif(trace: Trace) -> dict[str, Any]:
    """One trace as an ATIF trajectory (see the module docstring), ready for `json.dumps`."""
    header = trace.header
    origin = run_origin_wall(trace)

    def stamp(t: float) -> str:
        return (origin + timedelta(seconds=t)).isoformat().replace("+00:00", "Z")

    steps: list[dict[str, Any]] = []
    start = next((e for e in trace.events if e.kind == "run_start"), None)
    prompt = getattr(start, "prompt", None) or getattr(start, "task", None) or header.task
    if prompt:
        steps.append(
            {"step_id": 1, "timestamp": stamp(0.0), "source": "user", "message": str(prompt)}
        )
    tools: dict[int | None, list[ToolCallEvent]] = defaultdict(list)
    for tool in trace.tool_calls():
        tools[tool.step].append(tool)
    summaries = {s.step: s for s in trace.steps()}
    calls = trace.model_calls()
    actors = _action_calls(calls)
    for call in calls:
        mine = tools.get(call.step, []) if id(call) in actors else []
        step = _agent_step(call, mine, summaries.get(call.step), header.model, stamp)
        steps.append({"step_id": len(steps) + 1, **step})
    end = trace.end
    totals = {
        "total_prompt_tokens": sum(c.prompt_tokens or 0 for c in calls),
        "total_completion_tokens": sum(c.completion_tokens or 0 for c in calls),
        "total_cached_tokens": sum(c.cached_tokens or 0 for c in calls),
        "total_steps": len(steps),
    }
    root_extra = {
        "trace_format": header.trace_format,
        "run_id": header.run_id,
        "origin": origin.isoformat(),
        "source": header.source,
        "task": header.task,
        "clock": header.clock,
        "absent": list(header.absent),
        "end": None
        if end is None
        else end.model_dump(
            mode="json", include={"end", "end_reason", "success", "steps", "error", "exit_code"}
        ),
    }
    agent: dict[str, Any] = {"name": header.agent or "looplab", "version": __version__}
    if header.model:
        agent["model_name"] = header.model
    return {
        "schema_version": ATIF_VERSION,
        "session_id": header.run_id,
        "agent": agent,
        "steps": steps,
        "notes": (
            f"exported by looplab {__version__} from trace {header.run_id} ({header.source}); "
            f"per-call and per-tool times on the run axis in extra.{EXTRA_KEY}"
        ),
        "final_metrics": totals,
        "extra": {EXTRA_KEY: root_extra},
    }


def _action_calls(calls: list[ModelCallEvent]) -> set[int]:
    """The ids of each step's action call (the one its tool calls belong to)."""
    by_step: dict[int | None, list[ModelCallEvent]] = defaultdict(list)
    for call in calls:
        by_step[call.step].append(call)
    chosen: set[int] = set()
    for group in by_step.values():
        actor = next((c for c in group if c.purpose == "actor"), group[-1])
        chosen.add(id(actor))
    return chosen


def _arguments(text: str) -> dict[str, Any]:
    """Tool arguments as the object ATIF wants (`{"input": text}` when not one)."""
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {"input": text}
    return value if isinstance(value, dict) else {"input": value}


def _agent_step(
    call: ModelCallEvent,
    tools: list[ToolCallEvent],
    summary: StepEvent | None,
    model: str | None,
    stamp: Any,
) -> dict[str, Any]:
    """One model call (and the tools it led to) as an ATIF agent step, less its id."""
    message = call.message or {}
    content = message.get("content")
    step: dict[str, Any] = {
        "timestamp": stamp(call.end),
        "source": "agent",
        "message": content if isinstance(content, str) else "",
    }
    if call.model or model:
        step["model_name"] = call.model or model
    reasoning = message.get("reasoning") or message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        step["reasoning_content"] = reasoning
    ids = [t.call_id or f"{call.run_id}-s{call.step}-t{i}" for i, t in enumerate(tools)]
    if tools:
        step["tool_calls"] = [
            {"tool_call_id": i, "function_name": t.name, "arguments": _arguments(t.arguments)}
            for i, t in zip(ids, tools, strict=True)
        ]
        step["observation"] = {
            "results": [
                {"source_call_id": i, "content": t.output} for i, t in zip(ids, tools, strict=True)
            ]
        }
    metrics: dict[str, Any] = {
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "cached_tokens": call.cached_tokens,
    }
    metrics = {k: v for k, v in metrics.items() if v is not None}
    if call.reasoning_tokens is not None:
        metrics["extra"] = {"reasoning_tokens": call.reasoning_tokens}
    if metrics:
        step["metrics"] = metrics
    ours = _looplab_extra(call, tools, ids, summary)
    step["extra"] = {EXTRA_KEY: ours}
    return step


def _looplab_extra(
    call: ModelCallEvent, tools: list[ToolCallEvent], ids: list[str], summary: StepEvent | None
) -> dict[str, Any]:
    """looplab's own times of an agent step (`extra.looplab`, module docstring)."""
    timing = call.model_dump(
        mode="json",
        include={
            "step",
            "start",
            "end",
            "sent",
            "first_token",
            "last_token",
            "reasoning_s",
            "finish_reason",
            "request_id",
            "purpose",
            "estimated",
            "profile",
        },
    )
    ours: dict[str, Any] = {
        "model_call": timing,
        "tools": [
            {
                "call_id": i,
                **t.model_dump(
                    mode="json",
                    include={
                        "name",
                        "arguments",
                        "start",
                        "end",
                        "ok",
                        "exit_code",
                        "error",
                        "output_chars",
                        "estimated",
                    },
                ),
            }
            for i, t in zip(ids, tools, strict=True)
        ],
    }
    if summary is not None:
        ours["split"] = summary.model_dump(
            mode="json", include={"model_s", "tool_s", "overhead_s", "end"}
        )
    return ours
