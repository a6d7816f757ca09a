"""`build_run`: a draft -> the trace's header, events and import report.

Puts the draft on the run axis (zero = the first model call's start; epoch seconds), and
feeds it to the trace builder (`looplab.traces.assembly`: run_start; per step the model call,
tool calls, sandbox operations and the step's split; run_end with the totals), fills the
header's `absent`, and writes the `ImportReport` that says what was recovered.

A step's `tool_s` counts tool time outside the model call (tools a harness starts while
the model still streams overlap it), so `model_s + tool_s + overhead_s` is its wall time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from pydantic import ValidationError

from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import EventBuilder, RunTotals
from looplab.traces.assembly.items import RunEndDraft
from looplab.traces.identity import run_identity as comparison_identity
from looplab.traces.importers.axis import run_origin
from looplab.traces.importers.drafts import RunDraft, SubRunDraft
from looplab.traces.importers.imported import ImportedRun, ImportReport
from looplab.traces.importers.source import BadValue, source_digest
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    SubRunEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)

__all__ = ["build_run", "imported_run_id"]


def build_run(draft: RunDraft) -> ImportedRun:
    """Put a draft on the run axis and make the header, events and report.

    Returns:
        The imported run; its events are run_start, then per step the model call, tool
        calls, sandbox operations and the step summary, then run_end.

    Raises:
        BadValue: a value the schema refuses (named by step and field), or a non-finite time.
    """
    draft.run_id = imported_run_id(draft)
    axis = RunAxis(run_origin(draft), epoch=True)
    builder = EventBuilder(draft.run_id, axis, inferred=True)
    with _named("run_start"):
        events: list[TraceEvent] = [_run_start(draft, builder)]
    for index, step in enumerate(draft.steps):
        with _named(f"step {index}"):
            events.extend(builder.step(index, step))
    for sub in draft.subruns:
        with _named(f"sub-run {sub.id}"):
            events.extend(_subrun(builder, sub))
    _note_untimed(draft, builder.totals)
    with _named("run_end"):
        end = builder.run_end(
            RunEndDraft(
                end_reason=draft.end_reason,
                end_time=draft.end_time,
                success=draft.success,
                verdict_by=draft.verdict_by,
                check_output=draft.check_output,
                error=draft.error,
            )
        )
    events.append(end)
    with _named("header"):
        header = _header(draft, axis)
    report = _report(draft, builder.totals, end)
    report.subruns = sum(isinstance(e, SubRunEvent) for e in events)
    report.concurrent_calls = concurrent_calls(events)
    return ImportedRun(header=header, events=events, report=report)


def _subrun(builder: EventBuilder, sub: SubRunDraft) -> list[TraceEvent]:
    """A sub-run's events, tagged with its id, after its `subrun` declaration."""
    own: list[TraceEvent] = []
    for index, step in enumerate(sub.steps):
        own.extend(e.model_copy(update={"subrun": sub.id}) for e in builder.step(index, step))
    if not own:
        return []
    start = min(e.start for e in own)
    declared = SubRunEvent(
        run_id=builder.run_id,
        subrun=sub.id,
        wall_time=builder.axis.wall(start),
        start=start,
        end=max(e.end for e in own),
        parent=sub.parent,
        parent_step=sub.parent_step,
        join_step=sub.join_step,
        spawn_call_id=sub.spawn_call_id,
        agent=sub.agent,
        description=sub.description[:500] if sub.description else None,
    )
    return [declared, *own]


def concurrent_calls(events: list[TraceEvent]) -> int:
    """Model and tool calls whose time overlaps another call's (parallel tool calls, a
    sub-run beside its parent); zero-length calls never overlap."""
    spans = sorted(
        (e.start, e.end)
        for e in events
        if isinstance(e, ModelCallEvent | ToolCallEvent) and e.end > e.start
    )
    overlapping = [False] * len(spans)
    reach, holder = float("-inf"), -1
    for index, (start, end) in enumerate(spans):
        if start < reach:
            overlapping[index] = overlapping[holder] = True
        if end > reach:
            reach, holder = end, index
    return sum(overlapping)


def imported_run_id(draft: RunDraft) -> str:
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


def _run_start(draft: RunDraft, builder: EventBuilder) -> TraceEvent:
    return builder.run_start(
        task=draft.task,
        prompt=draft.prompt,
        sandbox_start_s=draft.sandbox_start_s,
        estimated=(
            {"sandbox_start_s": draft.sandbox_start_how}
            if draft.sandbox_start_s is not None and draft.sandbox_start_how
            else {}
        ),
    )


def _note_untimed(draft: RunDraft, totals: RunTotals) -> None:
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


def _header(draft: RunDraft, axis: RunAxis) -> TraceHeader:
    if axis.origin is None:
        draft.absent.add("wall_time")
    model = draft.model or next((m for m in _call_models(draft) if m), None)
    return TraceHeader(
        run_id=draft.run_id,
        created=draft.created or (axis.wall(0.0) or datetime.fromtimestamp(0, UTC)),
        source=f"import:{draft.fmt}",
        source_path=str(draft.source_path),
        task=draft.task,
        agent=draft.agent,
        model=model,
        sandbox=draft.sandbox,
        backend=draft.backend,
        clock="recorded",
        identity=comparison_identity(
            agent=draft.agent or f"import:{draft.fmt}",
            tasks=f"import:{draft.fmt}",
            clock="recorded",
            model=model,
        ),
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


def _report(draft: RunDraft, totals: RunTotals, end: RunEndEvent) -> ImportReport:
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
        model=draft.model or next((m for m in _call_models(draft) if m), None),
    )
