"""Turning an agent run (`agents.runner.TaskRun`) into `looplab-2` trace events.

The run's records go through the trace builder (`looplab.traces.assembly`), whose run axis has
its zero at the run's origin: its first model request's scheduled time. Step and model times
come from `time.perf_counter()`, sandbox events from `time.monotonic()`; on Linux both read
CLOCK_MONOTONIC, so they share one axis. Sandbox operations before the first step (its
`create`, the services) are events with `step` None and negative times.

Every failed model attempt is in the trace: a call that succeeded after retries carries
them in `attempts`; a call that never did is a `model_call` event with
`finish_reason: "error"`, no tokens, and all its attempts (the last one the fatal error).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from looplab.agents.records import ModelCallRecord, RunResult, SideCall, StepRecord, ToolCallRecord
from looplab.agents.runner import TaskRun
from looplab.sandbox_contract import SandboxEvent
from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import OUTPUT_LIMIT, EventBuilder
from looplab.traces.assembly.items import (
    ModelDraft,
    RunEndDraft,
    SandboxDraft,
    StepDraft,
    ToolDraft,
)
from looplab.traces.schema import SubRunEvent, TraceEvent

__all__ = ["OUTPUT_LIMIT", "run_events"]

DETAIL_LIMIT = 1000
"""Sandbox event details are cut to this many characters in traces."""

_Names = tuple[str, str | None]
"""(model id, latency profile name), stamped on every model call."""


def run_events(
    run_id: str,
    run: TaskRun,
    *,
    origin_wall: datetime,
    model: str,
    profile: str | None,
    loop_lag_p99_ms: float | None = None,
) -> list[TraceEvent]:
    """The model, tool, sandbox, step and run_end events of one finished run.

    Args:
        run_id: the run's id.
        run: the finished task run.
        origin_wall: UTC wall time at the run origin.
        model: model id the agent talked to.
        profile: latency profile name, for simulated backends.
        loop_lag_p99_ms: event-loop lag measured during the run (saturation signal).
    """
    result = run.result
    builder = EventBuilder(run_id, RunAxis(result.started, origin_wall))
    events: list[TraceEvent] = [builder.sandbox_op(None, _sandbox(e)) for e in run.setup_events]
    events += _steps(builder, result, (model, profile))
    events += _subruns(run_id, result, origin_wall, (model, profile))
    end = RunEndDraft(
        end_reason=result.end_reason,
        end_time=result.ended,
        success=run.check.passed,
        verdict_by="check",
        check_output=run.check.output[-4000:],
        error=result.error,
        sandbox_start_s=run.sandbox_start_s,
        end_to_end_s=None if run.setup_started is None else result.ended - run.setup_started,
        prompt=_first_user_text(result),
        loop_lag_p99_ms=loop_lag_p99_ms,
        knobs=dict(result.knobs),
        knob_stats=dict(result.knob_stats),
    )
    events.append(builder.run_end(end))
    return events


def _steps(builder: EventBuilder, result: RunResult, names: _Names) -> list[TraceEvent]:
    """Every step's events of one (sub-)run."""
    assistants = [m for m in result.messages if m.get("role") == "assistant"]
    outputs = {
        str(m.get("tool_call_id")): str(m.get("content") or "")
        for m in result.messages
        if m.get("role") == "tool"
    }
    events: list[TraceEvent] = []
    for position, step in enumerate(result.steps):
        message = assistants[position] if position < len(assistants) else None
        events.extend(builder.step(step.index, _step(builder, step, message, outputs, names)))
    return events


def _subruns(
    run_id: str, result: RunResult, origin_wall: datetime, names: _Names
) -> list[TraceEvent]:
    """The sub-agents' runs (`RunResult.subruns`, looplab-2): per sub-run a `subrun` event
    (spawned by the step whose `delegate` call ran it; joined by the next step, whose
    model call reads its result, or by the same step when the run ended there) and its
    own steps' events, tagged with its id, on the parent's axis (their own totals)."""
    events: list[TraceEvent] = []
    for number, sub in enumerate(result.subruns):
        name = f"sub{number}"
        axis = RunAxis(result.started, origin_wall)
        own = _steps(EventBuilder(run_id, axis), sub.result, names)
        start, end = axis.at(sub.result.started), axis.at(sub.result.ended)
        joined = sub.step + 1 if sub.step + 1 < len(result.steps) else sub.step
        declared = SubRunEvent(
            run_id=run_id,
            wall_time=axis.wall(start),
            start=start,
            end=max(start, end),
            subrun=name,
            parent_step=sub.step,
            join_step=joined,
            agent=sub.role,
            description=sub.task[:300],
        )
        events += [declared, *(e.model_copy(update={"subrun": name}) for e in own)]
    return events


def _step(
    builder: EventBuilder,
    step: StepRecord,
    message: dict[str, Any] | None,
    outputs: dict[str, str],
    names: _Names,
) -> StepDraft:
    """One step's items: its model call (or failed attempts), planning and reflection
    calls, tools and sandbox operations, with the step's bounds and model phase."""
    return StepDraft(
        model=_model(builder, step, message, names),
        side_calls=[_side(c, names) for c in step.side_calls],
        tools=[_tool(tool, outputs) for tool in step.tools],
        sandbox=[_sandbox(e) for e in step.sandbox_events],
        start=step.started,
        end=step.ended,
        model_phase=(step.started, step.model_ended),
    )


def _model(
    builder: EventBuilder, step: StepRecord, message: dict[str, Any] | None, names: _Names
) -> ModelDraft | None:
    """The step's model call; a call that never succeeded is one `error` call holding all
    its attempts (the last one fatal)."""
    attempts = [
        builder.attempt(a.started, a.ended, a.error, a.status, a.wait_s) for a in step.attempts
    ]
    call = step.model
    if call is None or call.timing is None:
        if call is not None or not attempts:
            return None
        return ModelDraft(
            start=step.started,
            end=step.model_ended,
            finish_reason="error",
            model=names[0],
            profile=names[1],
            request_id=step.attempts[-1].request_id,
            attempts=attempts,
        )
    draft = _timed(call, step.model_ended, names, message)
    draft.attempts = attempts
    draft.purpose = "actor" if step.side_calls else None
    return draft


def _side(call: SideCall, names: _Names) -> ModelDraft:
    """A planning or reflection call of the step, tagged with its `purpose`."""
    draft = _timed(call.record, call.ended, names, call.message)
    purpose: Literal["planner", "reflection"] = (
        "planner" if call.purpose == "planner" else "reflection"
    )
    draft.purpose = purpose
    return draft


def _timed(
    response: ModelCallRecord, ended: float, names: _Names, message: dict[str, Any] | None
) -> ModelDraft:
    """An answered model call: the client's times, tokens from its usage."""
    timing = response.timing
    return ModelDraft(
        start=timing.scheduled,
        end=timing.end if timing.end is not None else ended,
        sent=timing.sent,
        first_token=timing.first_token,
        last_token=timing.last_token,
        prompt_tokens=response.prompt_tokens,
        cached_tokens=response.cached_tokens,
        completion_tokens=response.completion_tokens,
        reasoning_tokens=response.reasoning_tokens,
        finish_reason=response.finish_reason,
        model=names[0],
        profile=names[1],
        request_id=response.request_id,
        message=message,
        transport=response.transport,
    )


def _tool(tool: ToolCallRecord, outputs: dict[str, str]) -> ToolDraft:
    """One tool call as the loop recorded it, with the result the model got."""
    return ToolDraft(
        name=tool.name,
        start=tool.started,
        end=tool.ended,
        call_id=tool.call_id,
        arguments=tool.arguments,
        ok=tool.ok,
        error=tool.error,
        output=outputs.get(tool.call_id),
        output_chars=tool.output_chars,
        synthetic=tool.synthetic,
        screenshot_jpeg=tool.screenshot,
        dispatch=tool.dispatch,
        dispatch_token=tool.dispatch_token,
        dispatch_fraction=tool.dispatch_fraction,
        queued_s=tool.queued_s,
        phases=dict(tool.phases or {}),
        observation=tool.observation,
        cut=tool.cut,
    )


def _sandbox(event: SandboxEvent) -> SandboxDraft:
    """A sandbox operation (before the first step: its `create`, whose detail says how the
    sandbox is isolated and what is limited), detail cut to `DETAIL_LIMIT` characters."""
    return SandboxDraft(
        op=event.kind,
        start=event.started,
        end=event.ended,
        sandbox_id=event.sandbox_id,
        detail=", ".join(f"{k}={v}" for k, v in event.detail.items())[:DETAIL_LIMIT],
        wall_time=event.wall_time,
    )


def _first_user_text(result: RunResult) -> str | None:
    for message in result.messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return None
