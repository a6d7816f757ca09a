"""`build_run`: a draft -> the trace's header, events and import report.

Puts the draft on the run axis (zero = the first model call's start), makes the events
(run_start; per step the model call, tool calls, sandbox operations and the step summary;
run_end), computes each step's split and the run totals, fills the header's `absent`, and
writes the `ImportReport` that says what was recovered.

A step's `tool_s` counts tool time outside the model call (tools a harness starts while
the model still streams overlap it), so `model_s + tool_s + overhead_s` is its wall time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import ValidationError

from looplab.traces.importers.axis import Axis, is_timed, run_origin, union_outside
from looplab.traces.importers.drafts import ModelDraft, RunDraft, SandboxDraft, StepDraft, ToolDraft
from looplab.traces.importers.imported import ImportedRun, ImportReport
from looplab.traces.importers.source import BadValue, cut, source_digest
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    SandboxOpEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)

__all__ = ["build_run", "run_identity"]

Span = tuple[float, float]


@dataclass
class _Totals:
    """Run totals accumulated step by step."""

    model_calls: int = 0
    tool_calls: int = 0
    sandbox_ops: int = 0
    timed_models: int = 0
    timed_tools: int = 0
    prompt: int | None = None
    cached: int | None = None
    completion: int | None = None
    model_s: float = 0.0
    tool_s: float = 0.0

    def add_model(self, m: ModelDraft) -> None:
        self.model_calls += 1
        if m.prompt_tokens is not None:
            self.prompt = (self.prompt or 0) + m.prompt_tokens
        if m.cached_tokens is not None:
            self.cached = (self.cached or 0) + m.cached_tokens
        if m.completion_tokens is not None:
            self.completion = (self.completion or 0) + m.completion_tokens


def build_run(draft: RunDraft) -> ImportedRun:
    """Put a draft on the run axis and make the header, events and report.

    Returns:
        The imported run; its events are run_start, then per step the model call, tool
        calls, sandbox operations and the step summary, then run_end.

    Raises:
        BadValue: a value the schema refuses (named by step and field), or a non-finite time.
    """
    draft.run_id = run_identity(draft)
    axis = Axis(run_origin(draft))
    totals = _Totals()
    with _named("run_start"):
        events: list[TraceEvent] = [_run_start(draft, axis)]
    for index, step in enumerate(draft.steps):
        with _named(f"step {index}"):
            events.extend(_step_events(draft, index, step, axis, totals))
    _note_untimed(draft, totals)
    with _named("run_end"):
        end = _run_end(draft, axis, totals)
    events.append(end)
    with _named("header"):
        header = _header(draft, axis)
    return ImportedRun(header=header, events=events, report=_report(draft, totals, end))


def run_identity(draft: RunDraft) -> str:
    """`<the source's id>.<8 hex>`: the hex digests the source file's bytes (or the draft's
    `source_digest`: a received trace's id) and the run's key within it, so two files with
    the same instance id never collide, while importing the same file again (from anywhere)
    gives the same ids."""
    digest = draft.source_digest or source_digest(draft.source_path)
    key = f"{digest}\0{draft.source_key}".encode()
    return f"{draft.run_id}.{hashlib.sha256(key).hexdigest()[:8]}"


@contextmanager
def _named(where: str) -> Iterator[None]:
    """A value the schema refuses becomes a `BadValue` naming the part and the field."""
    try:
        yield
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = ".".join(str(p) for p in problem["loc"])
        raise BadValue(f"{where}: {field}: {problem['msg']}") from None


def _run_start(draft: RunDraft, axis: Axis) -> RunStartEvent:
    return RunStartEvent(
        run_id=draft.run_id,
        wall_time=axis.wall(0.0),
        start=0.0,
        end=0.0,
        task=draft.task,
        prompt=draft.prompt,
        sandbox_start_s=draft.sandbox_start_s,
        estimated=(
            {"sandbox_start_s": draft.sandbox_start_how}
            if draft.sandbox_start_s is not None and draft.sandbox_start_how
            else {}
        ),
    )


def _step_events(
    draft: RunDraft, index: int, step: StepDraft, axis: Axis, totals: _Totals
) -> list[TraceEvent]:
    """The step's model call, tool calls, sandbox operations and summary (if it has times)."""
    step_estimated: dict[str, str] = {}
    events: list[TraceEvent] = []
    model_span: Span | None = None
    if step.model is not None:
        call = _model_event(draft.run_id, index, step.model, axis, step_estimated, totals)
        model_span = (call.start, call.end)
        events.append(call)
    tool_spans: list[Span] = []
    for tool in step.tools:
        event = _tool_event(draft.run_id, index, tool, axis, step_estimated, totals)
        tool_spans.append((event.start, event.end))
        events.append(event)
    for op in step.sandbox:
        events.append(_sandbox_event(draft.run_id, index, op, axis))
        totals.sandbox_ops += 1
    summary = _step_summary(draft.run_id, index, model_span, tool_spans, step_estimated, axis)
    if summary is not None:
        totals.model_s += summary.model_s
        totals.tool_s += summary.tool_s
        events.append(summary)
    return events


def _model_event(
    run_id: str, index: int, m: ModelDraft, axis: Axis, step_est: dict[str, str], totals: _Totals
) -> ModelCallEvent:
    est = dict(m.estimated)
    start, end = axis.place(m.start, m.end, est)
    if is_timed(est):
        totals.timed_models += 1
    else:
        step_est["model_s"] = "the model call has no times: counted as zero"
    if ("start" in est or "end" in est) and not m.duration_measured:
        step_est.setdefault("model_s", "from the model call's estimated start/end")
    event = ModelCallEvent(
        run_id=run_id,
        step=index,
        wall_time=axis.wall(start),
        start=start,
        end=end,
        estimated=est,
        sent=axis.rel(m.sent),
        first_token=axis.rel(m.first_token),
        last_token=axis.rel(m.last_token),
        prompt_tokens=m.prompt_tokens,
        cached_tokens=m.cached_tokens,
        completion_tokens=m.completion_tokens,
        reasoning_tokens=m.reasoning_tokens,
        finish_reason=m.finish_reason,
        model=m.model,
        request_id=m.request_id,
        message=m.message,
    )
    totals.add_model(m)
    return event


def _tool_event(
    run_id: str, index: int, t: ToolDraft, axis: Axis, step_est: dict[str, str], totals: _Totals
) -> ToolCallEvent:
    est = dict(t.estimated)
    start, end = axis.place(t.start, t.end, est, t.duration)
    if is_timed(est):
        totals.timed_tools += 1
    else:
        step_est["tool_s"] = "a tool call has no times: counted as zero"
    if ("start" in est or "end" in est) and not t.duration_measured:
        step_est.setdefault("tool_s", "from tool calls' estimated start/end")
    totals.tool_calls += 1
    return ToolCallEvent(
        run_id=run_id,
        step=index,
        wall_time=axis.wall(start),
        start=start,
        end=end,
        estimated=est,
        call_id=t.call_id,
        name=t.name,
        arguments=t.arguments,
        ok=t.ok,
        exit_code=t.exit_code,
        error=t.error,
        output=cut(t.output),
        output_chars=t.output_chars,
    )


def _sandbox_event(run_id: str, index: int, s: SandboxDraft, axis: Axis) -> SandboxOpEvent:
    est = dict(s.estimated)
    start, end = axis.place(s.start, s.end, est)
    return SandboxOpEvent(
        run_id=run_id,
        step=index,
        wall_time=axis.wall(start),
        start=start,
        end=end,
        estimated=est,
        op=s.op,
        sandbox_id=s.sandbox_id,
        detail=s.detail,
    )


def _step_summary(
    run_id: str,
    index: int,
    model_span: Span | None,
    tool_spans: list[Span],
    estimated: dict[str, str],
    axis: Axis,
) -> StepEvent | None:
    """The step's split: model time, tool time outside the model call, the rest overhead."""
    spans = ([model_span] if model_span else []) + tool_spans
    if not spans:
        return None
    step_start = min(a for a, _ in spans)
    step_end = max(b for _, b in spans)
    model_s = model_span[1] - model_span[0] if model_span else 0.0
    tool_s = union_outside(tool_spans, model_span or (step_start, step_start))
    overhead = max(0.0, (step_end - step_start) - model_s - tool_s)
    if model_span is not None and any(a < model_span[1] for a, _ in tool_spans):
        estimated.setdefault(
            "tool_s", "tool time overlapping the model call is counted as model time"
        )
    if estimated:
        estimated.setdefault("overhead_s", "step wall minus the estimated splits")
    return StepEvent(
        run_id=run_id,
        step=index,
        wall_time=axis.wall(step_start),
        start=step_start,
        end=step_end,
        estimated=estimated,
        model_s=model_s,
        tool_s=tool_s,
        overhead_s=overhead,
    )


def _note_untimed(draft: RunDraft, totals: _Totals) -> None:
    """Name the calls without times in the header (absent fields and a note)."""
    for what, timed, count, prefix in (
        ("model calls", totals.timed_models, totals.model_calls, "model_call"),
        ("tool calls", totals.timed_tools, totals.tool_calls, "tool_call"),
    ):
        if timed < count:
            draft.absent.update({f"{prefix}.start", f"{prefix}.end"})
            draft.notes.append(
                f"{count - timed} of {count} {what} have no times (zero-length "
                "placeholders; totals cover the timed ones)"
            )
    if draft.end_reason is None:
        draft.absent.add("run_end.end_reason")
    if draft.success is None:
        draft.absent.add("run_end.success")


def _run_end(draft: RunDraft, axis: Axis, totals: _Totals) -> RunEndEvent:
    end = axis.cursor
    if draft.end_time is not None and axis.origin is not None:
        end = max(end, draft.end_time - axis.origin)
    return RunEndEvent(
        run_id=draft.run_id,
        wall_time=axis.wall(0.0),
        start=0.0,
        end=end,
        estimated={},
        end_reason=draft.end_reason or "unknown",
        success=draft.success,
        check_output=draft.check_output,
        steps=len(draft.steps),
        # a run without tool calls spent 0 s in tools: known, not absent
        model_s=totals.model_s if totals.timed_models else None,
        tool_s=totals.tool_s if totals.timed_tools or not totals.tool_calls else None,
        error=draft.error,
    )


def _header(draft: RunDraft, axis: Axis) -> TraceHeader:
    if axis.origin is None:
        draft.absent.add("wall_time")
    return TraceHeader(
        run_id=draft.run_id,
        created=draft.created or (axis.wall(0.0) or datetime.fromtimestamp(0, UTC)),
        source=f"import:{draft.fmt}",
        source_path=str(draft.source_path),
        task=draft.task,
        agent=draft.agent,
        model=draft.model or next((m for m in _call_models(draft) if m), None),
        sandbox=draft.sandbox,
        clock="recorded",
        absent=sorted(draft.absent),
        notes=[
            f"model time: {draft.model_timing}",
            f"tool time: {draft.tool_timing}",
            *draft.notes,
        ],
    )


def _call_models(draft: RunDraft) -> list[str | None]:
    """The model ids the calls name (the header's model when the source names no other)."""
    return [s.model.model for s in draft.steps if s.model is not None]


def _report(draft: RunDraft, totals: _Totals, end: RunEndEvent) -> ImportReport:
    return ImportReport(
        fmt=draft.fmt,
        run_id=draft.run_id,
        source_path=str(draft.source_path),
        steps=len(draft.steps),
        model_calls=totals.model_calls,
        tool_calls=totals.tool_calls,
        sandbox_ops=totals.sandbox_ops,
        prompt_tokens=totals.prompt,
        cached_tokens=totals.cached,
        completion_tokens=totals.completion,
        model_s=end.model_s,
        tool_s=end.tool_s,
        model_timing=draft.model_timing,
        tool_timing=draft.tool_timing,
        end_reason=end.end_reason,
        success=draft.success,
        absent=sorted(draft.absent),
        notes=list(draft.notes),
    )
