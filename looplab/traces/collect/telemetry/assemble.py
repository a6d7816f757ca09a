"""What every telemetry source shares: reading event values, placing calls, cutting steps,
hanging sub-runs, and taking a person's approval waits out of the run's time.

Events are logged when something ends (an API request, a tool call) and carry its
`duration_ms`: the duration is measured, the start is the event's time minus it (the
placement is derived, said in `estimated`). Numbers arrive as OTLP ints, doubles or
decimal strings (Codex formats them with Display), all read by `number`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from typing import Any

from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, SubRunDraft, ToolDraft
from looplab.traces.schema import MAX_TOKENS

__all__ = [
    "ENDED_AT",
    "Wait",
    "count",
    "ended",
    "excise_waits",
    "number",
    "steps_from",
    "subrun",
    "text",
]

ENDED_AT = "the event's time (logged when the call ended) minus its duration_ms"
"""How a start is placed from an end-of-call event."""

_MAX_MS = 7 * 86_400_000.0
"""A duration above a week is damage, not a call's length."""

Wait = tuple[float, float]
"""A person's wait (approval prompt): start and end, epoch seconds."""


def number(value: Any) -> float | None:
    """A finite number from an int, a double or a decimal string; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def count(value: Any) -> int | None:
    """A token count in 0..`MAX_TOKENS`, else None (a damaged count is not a count)."""
    n = number(value)
    return int(n) if n is not None and 0 <= n <= MAX_TOKENS else None


def text(value: Any) -> str | None:
    """A non-empty string (numbers as their text), else None."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def ended(time: float | None, duration_ms: Any) -> tuple[float | None, float | None, bool]:
    """(start, end, measured) of a call logged at its end with `duration_ms`; the duration
    missing or damaged: a zero-length call at the event's time, not measured."""
    ms = number(duration_ms)
    if time is None:
        return None, None, False
    if ms is None or not 0 <= ms <= _MAX_MS:
        return time, time, False
    return time - ms / 1000.0, time, True


def steps_from(models: list[ModelDraft], tools: list[ToolDraft]) -> list[StepDraft]:
    """One step per model call with the tools that start from it to the next (tools before
    the first call make a step of their own); calls without a start sort first."""
    ordered = sorted(models, key=lambda m: m.start or 0.0)
    starts = [m.start or 0.0 for m in ordered]
    steps = [StepDraft(model=m) for m in ordered]
    leading = StepDraft()
    for tool in sorted(tools, key=lambda t: t.start or 0.0):
        index = bisect.bisect_right(starts, tool.start or 0.0) - 1
        (steps[index] if index >= 0 else leading).tools.append(tool)
    return ([leading] if leading.tools else []) + steps


def subrun(
    ident: str, steps: list[StepDraft], main: list[StepDraft], agent: str | None
) -> SubRunDraft:
    """A sub-run of the top-level run: spawned by the main step whose model call started
    last before it, joined by the first main step starting after it ends; the main tool
    call around it (the tool that ran the sub-agent) is its spawning call."""
    times = [t for s in steps for t in _bounds(s) if t is not None]
    first, last = (min(times), max(times)) if times else (0.0, 0.0)
    starts = [s.model.start if s.model is not None else None for s in main]
    spawn = [i for i, t in enumerate(starts) if t is not None and t <= first]
    join = [i for i, t in enumerate(starts) if t is not None and t >= last]
    around = [
        tool.call_id
        for step in main
        for tool in step.tools
        if tool.start is not None and tool.end is not None and tool.start <= first
        if last <= tool.end and tool.call_id
    ]
    return SubRunDraft(
        id=ident,
        steps=steps,
        parent=None,
        parent_step=spawn[-1] if spawn else None,
        join_step=join[0] if join else None,
        spawn_call_id=around[-1] if around else None,
        agent=agent,
    )


def _bounds(step: StepDraft) -> list[float | None]:
    items: list[ModelDraft | ToolDraft] = [*([step.model] if step.model else []), *step.tools]
    return [t for item in items for t in (item.start, item.end)]


def excise_waits(
    draft: RunDraft, waits: Iterable[Wait], what: str = "a person's waits (approval prompts)"
) -> float:
    """Take a person's waits out of the run's time: every time after a wait moves earlier
    by it (a time inside one moves to its start), so the run is the agent's own time and
    a re-timing never counts a person's approval or next prompt. Said in the draft's
    notes, as `what`.

    Returns:
        The seconds removed.
    """
    merged = _merge(sorted(w for w in waits if w[1] > w[0]))
    if not merged:
        return 0.0
    removed = sum(end - start for start, end in merged)

    def shift(t: float | None) -> float | None:
        if t is None:
            return None
        before = 0.0
        for start, end in merged:
            if t >= end:
                before += end - start
            elif t > start:
                before += t - start
        return t - before

    for steps in [draft.steps, *(s.steps for s in draft.subruns)]:
        for step in steps:
            step.start, step.end = shift(step.start), shift(step.end)
            for model in [*([step.model] if step.model else []), *step.side_calls]:
                for name in ("start", "end", "sent", "first_token", "last_token"):
                    setattr(model, name, shift(getattr(model, name)))
            for tool in step.tools:
                tool.start, tool.end = shift(tool.start), shift(tool.end)
    draft.end_time = shift(draft.end_time)
    draft.notes.append(
        f"{what}: {len(merged)} ({removed:.3f} s) taken out of the run's time (every later "
        "time moved earlier): never the agent's"
    )
    return removed


def _merge(waits: list[Wait]) -> list[Wait]:
    out: list[Wait] = []
    for start, end in waits:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
