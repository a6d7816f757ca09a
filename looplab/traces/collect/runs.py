"""The spans of one trace -> a `RunDraft` (then `build_run`, the one trace-event builder).

A run is one trace id. Its model calls are the innermost model spans (an agent SDK's
`response` span around an instrumented client's `chat` span counts once, as the inner
one: the HTTP call); its tool calls are the outermost tool spans. Calls are ordered by
start; a step is one model call and the tool calls that start after it and before the next
(tools before the first model call make a step of their own). Span start/end are measured
times. The first token is measured where the span marks it (OpenInference's
`First Token Stream Event` of a streamed call, `looplab.ttft_s`), else absent: span ends
are not token times. The root span (agent, or any span without a parent) gives the run's
name, start and end, and its verdict: `looplab.success` (a boolean attribute), else its
status (ERROR failed, OK solved, UNSET unknown). The task id is `looplab.task` on a span
or on the resource (`OTEL_RESOURCE_ATTRIBUTES=looplab.task=ID`).
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from looplab.latency.presets import presets
from looplab.latency.profile import LatencyProfile
from looplab.traces.collect.conventions import (
    FIRST_TOKEN_EVENTS,
    PROFILE_ATTRIBUTE,
    SUCCESS_ATTRIBUTE,
    TASK_ATTRIBUTE,
    Role,
    first_value,
    role_of,
)
from looplab.traces.collect.spans import STATUS_ERROR, STATUS_OK, Span
from looplab.traces.collect.subruns import owners, subrun_drafts
from looplab.traces.end_reason import EndReason
from looplab.traces.identity import assign_profile
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.schema import MAX_TOKENS, TraceHeader

if TYPE_CHECKING:
    from looplab.traces.collect.receiver import FinishedTrace

__all__ = ["FORMAT", "assign_served_profile", "draft_run"]

FORMAT = "otlp"
"""The `fmt` of collected runs: their traces' source is `import:otlp`."""

_MEASURED = "measured: span start/end"
_MAX_TTFT_S = 86_400.0
"""A `looplab.ttft_s` above a day is damage, not a time to first token."""
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def draft_run(trace_id: str, spans: list[Span], part: int = 1) -> RunDraft:
    """One run from all spans of a trace received so far.

    Args:
        trace_id: the trace's id (hex).
        spans: its spans, in any order.
        part: 1, or N for spans of a trace that arrived after its run was written (they
            make a run of their own, never replacing the first).

    Returns:
        The draft; `build_run(draft)` makes the trace.
    """
    roles = {s.span_id: role_of(s.attributes) for s in spans}
    enclosing = _enclosing_models(spans, roles)
    models = [s for s in spans if roles[s.span_id] == "model" and s.span_id not in enclosing]
    nested = _below_a_tool(spans, roles)
    tools = [s for s in spans if roles[s.span_id] == "tool" and s.span_id not in nested]
    root = _root(spans, roles)
    owned = owners(spans, roles)  # nested agent spans: sub-runs (collect/subruns.py)
    own = owned[0]
    draft = RunDraft(
        fmt=FORMAT,
        run_id=_run_name(root, spans, roles, trace_id),
        source_path=Path(f"otlp:{trace_id}"),
        source_key=str(part),
        source_digest=trace_id,
        steps=_steps(
            [m for m in models if own[m.span_id] is None],
            [t for t in tools if own[t.span_id] is None],
        ),
    )
    draft.subruns = subrun_drafts(spans, owned, _steps, (models, tools), draft.steps)
    _describe(draft, root, spans, roles, part)
    return draft


def _enclosing_models(spans: list[Span], roles: dict[str, Role | None]) -> set[str]:
    """Ids of model spans with another model span below them (the innermost one counts).

    Linear: each span is climbed through once (a climb stops at a span already climbed
    through, whose model ancestors are already found), a parent cycle included."""
    parents = {s.span_id: s.parent_id for s in spans}
    found: set[str] = set()
    climbed: set[str] = set()
    for span in spans:
        if roles[span.span_id] != "model":
            continue
        current = span.parent_id
        while current is not None and current in parents and current not in climbed:
            if roles[current] == "model":
                found.add(current)
            climbed.add(current)
            current = parents[current]
    return found


def _below_a_tool(spans: list[Span], roles: dict[str, Role | None]) -> set[str]:
    """Ids of spans with a tool span among their ancestors below the nearest agent span
    (count the outermost tool call; a sub-agent's own tools count: collect/subruns.py).

    Linear: each span's answer is memoized; a parent cycle counts as no tool above."""
    parents = {s.span_id: s.parent_id for s in spans}
    above: dict[str, bool] = {}  # span id -> a tool span is among its strict ancestors
    for span in spans:
        path: list[str] = []
        current: str | None = span.span_id
        on_path: set[str] = set()
        while current is not None and current not in above and current not in on_path:
            path.append(current)
            on_path.add(current)
            current = parents.get(current)
        for node in reversed(path):  # top-down: each parent's answer is known first
            parent = parents.get(node)
            above[node] = (
                parent is not None
                and parent in parents
                and (
                    roles.get(parent) == "tool"
                    or (roles.get(parent) != "agent" and above.get(parent, False))
                )
            )
    return {span_id for span_id, tool_above in above.items() if tool_above}


def _root(spans: list[Span], roles: dict[str, Role | None]) -> Span | None:
    """The span without a parent (the earliest, if several), else the outermost agent span."""
    ids = {s.span_id for s in spans}
    tops = [s for s in spans if s.parent_id is None] or [
        s for s in spans if roles[s.span_id] == "agent" and s.parent_id not in ids
    ]
    return min(tops, key=lambda s: s.start or 0.0) if tops else None


def _run_name(
    root: Span | None, spans: list[Span], roles: dict[str, Role | None], trace_id: str
) -> str:
    """`<agent name>-<trace id prefix>`: the root's agent name, else the first agent span's
    (an SDK's `Agent workflow` root names none), else the service's or the root's name."""
    agents = [s for s in sorted(spans, key=lambda s: s.start or 0.0) if roles[s.span_id] == "agent"]
    named = [first_value(s.attributes, "agent_name") for s in ([root] if root else []) + agents]
    name = next((n for n in named if n is not None), None)
    if name is None and root is not None:
        name = root.resource.get("service.name") or root.name
    cleaned = _NAME.sub("-", str(name or "otlp")).strip("-.")[:60]
    return f"{cleaned or 'otlp'}-{trace_id[:8]}"


def _steps(models: list[Span], tools: list[Span]) -> list[StepDraft]:
    """One step per model call with the tools that start from it to the next (n log n)."""
    ordered = sorted(models, key=lambda s: s.start or 0.0)
    starts = [m.start or 0.0 for m in ordered]
    steps = [StepDraft(model=_model(m)) for m in ordered]
    leading = StepDraft()
    for tool in sorted(tools, key=lambda s: s.start or 0.0):
        index = bisect.bisect_right(starts, tool.start or 0.0) - 1
        (steps[index] if index >= 0 else leading).tools.append(_tool(tool))
    return ([leading] if leading.tools else []) + steps


def _model(span: Span) -> ModelDraft:
    attrs = span.attributes
    draft = ModelDraft(
        start=span.start,
        end=span.end,
        prompt_tokens=_count(first_value(attrs, "prompt_tokens")),
        cached_tokens=_count(first_value(attrs, "cached_tokens")),
        completion_tokens=_count(first_value(attrs, "completion_tokens")),
        reasoning_tokens=_count(first_value(attrs, "reasoning_tokens")),
        finish_reason=_text(first_value(attrs, "finish_reason")),
        model=_text(first_value(attrs, "model")),
        request_id=_text(first_value(attrs, "request_id")),
        duration_measured=True,
    )
    first = _first_token(span)
    if first is not None:
        draft.first_token = first
        draft.sent = span.start
        draft.estimated["sent"] = "the span's start (the client call began)"
        draft.last_token = span.end
        draft.estimated["last_token"] = "the span's end (the stream was read to its end)"
    return draft


def _first_token(span: Span) -> float | None:
    for event in span.events:
        if event.name in FIRST_TOKEN_EVENTS and event.time is not None:
            return event.time
    ttft = first_value(span.attributes, "ttft_s")
    if _is_number(ttft) and 0 <= ttft <= _MAX_TTFT_S and span.start is not None:
        return span.start + float(ttft)
    return None


def _tool(span: Span) -> ToolDraft:
    attrs = span.attributes
    failed = span.status_code == STATUS_ERROR
    output = _text(first_value(attrs, "tool_output"))
    exit_code = first_value(attrs, "exit_code")
    return ToolDraft(
        name=_text(first_value(attrs, "tool_name")) or span.name or "tool",
        start=span.start,
        end=span.end,
        call_id=_text(first_value(attrs, "tool_call_id")),
        arguments=_text(first_value(attrs, "tool_arguments")) or "",
        ok=False if failed else (True if span.status_code == 1 else None),
        exit_code=exit_code if isinstance(exit_code, int) else None,
        error=(span.status_message or "error") if failed else None,
        output=output,
        output_chars=len(output) if output is not None else None,
        duration_measured=True,
    )


def _describe(
    draft: RunDraft,
    root: Span | None,
    spans: list[Span],
    roles: dict[str, Role | None],
    part: int,
) -> None:
    """Run-level fields, timing provenance, absent fields and notes."""
    steps = draft.steps
    calls = [s.model for s in steps if s.model is not None]
    if root is not None:
        draft.agent = _text(first_value(root.attributes, "agent_name")) or root.name or None
        draft.end_time = root.end
        draft.end_reason = _text(root.attributes.get("looplab.end_reason"))
        _verdict(draft, root)
    draft.task = _task(root, spans)
    if root is None:
        draft.notes.append("no root span received (the run's own span never arrived)")
    draft.model_timing = _MEASURED if calls else "absent"
    draft.tool_timing = _MEASURED if any(s.tools for s in steps) else "absent"
    timed = sum(1 for c in calls if c.first_token is not None)
    if timed:
        draft.notes.append(
            f"TTFT measured on {timed} of {len(calls)} model calls (a first-token mark in the "
            "span; sent = the span's start, decode = first token -> the span's end: estimated)"
        )
    if calls and not timed:
        draft.absent.update({"model_call.first_token", "model_call.last_token"})
        draft.notes.append(
            "TTFT absent: no span marks the first token (OpenInference's streamed openai "
            "calls do; GenAI spans carry no first-token time)"
        )
    if part > 1:
        draft.notes.append(f"spans that arrived after the run was written (part {part})")
    repaired = Counter(note for s in spans for note in s.repaired)
    for note, n in sorted(repaired.items())[:20]:
        draft.notes.append(f"repaired at the door ({n} span(s)): {note}")
    ignored = Counter(_kind(s) for s in spans if roles[s.span_id] is None)
    if ignored:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(ignored.items()))
        draft.notes.append(f"{len(spans)} spans; {ignored.total()} are not calls ({kinds})")


def _verdict(draft: RunDraft, root: Span) -> None:
    """Success from the agent span (`conventions.SUCCESS_ATTRIBUTE`, else its status:
    ERROR failed, OK solved, UNSET unknown); `verdict_by` is `span`."""
    draft.verdict_by = "span"
    success = root.attributes.get(SUCCESS_ATTRIBUTE)  # also `looplab export otel`'s run span
    if isinstance(success, str) and success.lower() in ("true", "false"):
        success = success.lower() == "true"
    draft.success = success if isinstance(success, bool) else None
    if root.status_code == STATUS_ERROR:
        draft.success = False
        draft.end_reason = EndReason.ERROR
        draft.error = root.status_message or "the root span's status is ERROR"
    elif draft.success is None and root.status_code == STATUS_OK:
        draft.success = True
        draft.notes.append("solved: the agent span's status is OK")


def _task(root: Span | None, spans: list[Span]) -> str | None:
    """The run's task id (`conventions.TASK_ATTRIBUTE`): the root span's, else the first
    span's that has one, else a resource's."""
    ordered = ([root] if root is not None else []) + sorted(spans, key=_start_key)
    for span in ordered:
        task = _text(first_value(span.attributes, "task"))
        if task:
            return task
    return next((t for s in ordered if (t := _text(s.resource.get(TASK_ATTRIBUTE)))), None)


def _start_key(span: Span) -> float:
    """A span's start for ordering (a span without one last)."""
    return span.start if span.start is not None else math.inf


def _kind(span: Span) -> str:
    """What a span that is not a call is: its OpenInference kind or GenAI operation."""
    attrs = span.attributes
    kind = attrs.get("openinference.span.kind") or attrs.get("gen_ai.operation.name")
    return str(kind or "unlabelled")[:40]


def _is_number(value: Any) -> bool:
    """A finite int or float (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


def _count(value: Any) -> int | None:
    """A token count in 0..`MAX_TOKENS`, else None (a damaged count is not a count)."""
    if not _is_number(value) or not 0 <= value <= MAX_TOKENS:
        return None
    return int(value)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def assign_served_profile(
    header: TraceHeader, trace: FinishedTrace | None, given: LatencyProfile | None
) -> None:
    """The profile that served the calls: the spans' `looplab.profile` (its preset's
    dump when it names one, so the run is priced), else `-p`'s."""
    said = None if trace is None else _said_profile(trace)
    if said is not None:
        preset = presets().get(said)
        dumped = preset.model_dump(mode="json", by_alias=True) if preset else None
        rate = preset.decode_tps if preset else None
        assign_profile(header, said, rate, "the spans' looplab.profile attribute", dumped)
    elif given is not None:
        dumped = given.model_dump(mode="json", by_alias=True)
        how = "given with looplab collect -p"
        assign_profile(header, given.name, given.decode_tps, how, dumped)


def _said_profile(trace: FinishedTrace) -> str | None:
    """The profile the spans name (`looplab.profile`, on a span or its resource)."""
    for span in trace.spans:
        for attributes in (span.attributes, span.resource):
            value = attributes.get(PROFILE_ATTRIBUTE)
            if isinstance(value, str) and value:
                return value
    return None
