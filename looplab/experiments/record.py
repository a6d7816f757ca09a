"""Turning an agent run (`agents.runner.TaskRun`) into `looplab-1` trace events.

The run axis's zero is the run's origin: its first model request's scheduled time. Step
and model times come from `time.perf_counter()`, sandbox events from `time.monotonic()`;
on Linux both read CLOCK_MONOTONIC, so they share one axis. Sandbox operations before the
first step (its `create`, the services) are events with `step` None and negative times.

Every failed model attempt is in the trace: a call that succeeded after retries carries
them in `attempts`; a call that never did is a `model_call` event with
`finish_reason: "error"`, no tokens, and all its attempts (the last one the fatal error).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal

from looplab.agents.records import ModelCallRecord, RunResult, SideCall, StepRecord, ToolCallRecord
from looplab.agents.runner import TaskRun
from looplab.sandbox import SandboxEvent
from looplab.traces.schema import (
    Attempt,
    ModelCallEvent,
    RunEndEvent,
    SandboxOpEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = ["OUTPUT_LIMIT", "run_events"]

OUTPUT_LIMIT = 64 * 1024
"""Tool outputs are cut to this many characters in traces."""
DETAIL_LIMIT = 1000
"""Sandbox event details are cut to this many characters in traces."""


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
    origin = result.started
    assistants = [m for m in result.messages if m.get("role") == "assistant"]
    outputs = {
        str(m.get("tool_call_id")): str(m.get("content") or "")
        for m in result.messages
        if m.get("role") == "tool"
    }

    def at(t: float) -> float:
        return t - origin

    def wall(t: float) -> datetime:
        return origin_wall + timedelta(seconds=t - origin)

    events: list[TraceEvent] = [_setup_event(run_id, e, at) for e in run.setup_events]
    for position, step in enumerate(result.steps):
        message = assistants[position] if position < len(assistants) else None
        events.extend(_step_events(run_id, step, message, outputs, at, wall, model, profile))
    events.append(
        RunEndEvent(
            run_id=run_id,
            wall_time=origin_wall,
            start=0.0,
            end=at(result.ended),
            end_reason=result.end_reason,
            success=run.check.passed,
            check_output=run.check.output[-4000:],
            steps=len(result.steps),
            model_s=result.model_s,
            tool_s=result.tool_s,
            error=result.error,
            sandbox_start_s=run.sandbox_start_s,
            end_to_end_s=None if run.setup_started is None else result.ended - run.setup_started,
            prompt=_first_user_text(result),
            loop_lag_p99_ms=loop_lag_p99_ms,
            knobs=dict(result.knobs),
            knob_stats=dict(result.knob_stats),
        )
    )
    return events


def _step_events(
    run_id: str,
    step: StepRecord,
    message: dict[str, Any] | None,
    outputs: dict[str, str],
    at: Callable[[float], float],
    wall: Callable[[float], datetime],
    model: str,
    profile: str | None,
) -> list[TraceEvent]:
    """One step's events: its model call (or failed attempts), tools, sandbox ops, step."""
    events: list[TraceEvent] = _model_events(run_id, step, message, at, wall, model, profile)
    events.extend(
        _side_event(run_id, step.index, c, at, wall, model, profile) for c in step.side_calls
    )
    events.extend(_tool_event(run_id, step.index, tool, outputs, at, wall) for tool in step.tools)
    events.extend(_setup_event(run_id, e, at, step.index) for e in step.sandbox_events)
    events.append(
        StepEvent(
            run_id=run_id,
            step=step.index,
            wall_time=wall(step.started),
            start=at(step.started),
            end=at(step.ended),
            model_s=step.model_s,
            tool_s=step.tool_s,
            overhead_s=step.overhead_s,
            phases=step.phases(),
        )
    )
    return events


def _model_events(
    run_id: str,
    step: StepRecord,
    message: dict[str, Any] | None,
    at: Callable[[float], float],
    wall: Callable[[float], datetime],
    model: str,
    profile: str | None,
) -> list[TraceEvent]:
    """The step's model call; a call that never succeeded is one `error` event holding all
    its attempts (the last one fatal)."""
    attempts = [
        Attempt(
            start=at(a.started), end=at(a.ended), error=a.error, status=a.status, wait_s=a.wait_s
        )
        for a in step.attempts
    ]
    call = step.model
    timing = call.timing if call is not None else None
    if call is None or timing is None:
        if call is not None or not attempts:
            return []
        return [
            ModelCallEvent(
                run_id=run_id,
                step=step.index,
                wall_time=wall(step.started),
                start=at(step.started),
                end=at(step.model_ended),
                finish_reason="error",
                model=model,
                profile=profile,
                request_id=step.attempts[-1].request_id,
                attempts=attempts,
            )
        ]
    return [
        _timed_call(
            run_id,
            step.index,
            call,
            step.model_ended,
            (at, wall),
            (model, profile),
            message=message,
            attempts=attempts,
            purpose="actor" if step.side_calls else None,
        )
    ]


def _side_event(
    run_id: str,
    step: int,
    call: SideCall,
    at: Callable[[float], float],
    wall: Callable[[float], datetime],
    model: str,
    profile: str | None,
) -> ModelCallEvent:
    """A planning or reflection call of the step, tagged with its `purpose`."""
    purpose: Literal["planner", "reflection"] = (
        "planner" if call.purpose == "planner" else "reflection"
    )
    return _timed_call(
        run_id,
        step,
        call.record,
        call.ended,
        (at, wall),
        (model, profile),
        message=call.message,
        attempts=[],
        purpose=purpose,
    )


def _timed_call(
    run_id: str,
    step: int,
    response: ModelCallRecord,
    ended: float,
    clocks: tuple[Callable[[float], float], Callable[[float], datetime]],
    names: tuple[str, str | None],
    *,
    message: dict[str, Any] | None,
    attempts: list[Attempt],
    purpose: Literal["actor", "planner", "reflection"] | None,
) -> ModelCallEvent:
    """One answered model call (the step's action call, or a planning or reflection call)
    as its event: times on the run's clock, tokens from its usage."""
    at, wall = clocks
    timing = response.timing
    return ModelCallEvent(
        run_id=run_id,
        step=step,
        wall_time=wall(timing.scheduled),
        start=at(timing.scheduled),
        end=at(timing.end if timing.end is not None else ended),
        sent=at(timing.sent),
        first_token=None if timing.first_token is None else at(timing.first_token),
        last_token=None if timing.last_token is None else at(timing.last_token),
        prompt_tokens=response.prompt_tokens,
        cached_tokens=response.cached_tokens,
        completion_tokens=response.completion_tokens,
        reasoning_tokens=response.reasoning_tokens,
        finish_reason=response.finish_reason,
        model=names[0],
        profile=names[1],
        request_id=response.request_id,
        message=message,
        attempts=attempts,
        purpose=purpose,
        transport=response.transport,
    )


def _tool_event(
    run_id: str,
    step: int,
    tool: ToolCallRecord,
    outputs: dict[str, str],
    at: Callable[[float], float],
    wall: Callable[[float], datetime],
) -> ToolCallEvent:
    """One tool call; its output cut to `OUTPUT_LIMIT` characters."""
    output = outputs.get(tool.call_id)
    return ToolCallEvent(
        run_id=run_id,
        step=step,
        wall_time=wall(tool.started),
        start=at(tool.started),
        end=at(tool.ended),
        call_id=tool.call_id,
        name=tool.name,
        arguments=tool.arguments,
        ok=tool.ok,
        error=tool.error,
        output=None if output is None else output[:OUTPUT_LIMIT],
        output_chars=tool.output_chars,
        synthetic=tool.synthetic,
        screenshot=None if tool.screenshot is None else _jpeg_url(tool.screenshot),
        dispatch=tool.dispatch,
        dispatch_token=tool.dispatch_token,
        dispatch_fraction=tool.dispatch_fraction,
        queued_s=tool.queued_s,
        phases=dict(tool.phases or {}),
        observation=tool.observation,
    )


def _jpeg_url(jpeg: bytes) -> str:
    """A JPEG as a `data:` URL (how traces keep screenshots)."""
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def _setup_event(
    run_id: str, event: SandboxEvent, at: Callable[[float], float], step: int | None = None
) -> SandboxOpEvent:
    """A sandbox operation as a trace event (step None: before the first step, e.g. its
    `create`, whose detail says how the sandbox is isolated and what is limited)."""
    return SandboxOpEvent(
        run_id=run_id,
        step=step,
        wall_time=event.wall_time,
        start=at(event.started),
        end=at(event.ended),
        op=event.kind,
        sandbox_id=event.sandbox_id,
        detail=", ".join(f"{k}={v}" for k, v in event.detail.items())[:DETAIL_LIMIT],
    )


def _first_user_text(result: RunResult) -> str | None:
    for message in result.messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return None
