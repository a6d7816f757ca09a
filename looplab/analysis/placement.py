"""Re-timing a run tree event by event (`looplab replay --mode virtual` of a trace with
sub-runs): every (sub-)run warped by its own shift as `graph.walk_tree` walks it.

`retime_tree` places each run's events by `retime.retime_events` and then moves them by
the run's shift (its spawn and its joins, `graph.TreeWalk.shifts`); a tool call that only
waited for sub-runs (`SubRunEvent.spawn_call_id`) spans them re-timed, and a step's
tools phase follows its new span. Linear in the events (one pass to group them by run,
shifts found by bisection). `analysis.pathsplit` places the same way without copying.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from looplab.analysis.calltiming import TimingFn
from looplab.analysis.graph import TreeWalk, shift_at, walk_tree
from looplab.analysis.retime import retime_events
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    StepEvent,
    SubRunEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = ["place_tree", "retime_tree"]


def retime_tree(events: Sequence[TraceEvent], timing: TimingFn, note: str) -> list[TraceEvent]:
    """Events re-timed on the run tree: each (sub-)run warped by its own shift (its calls'
    changes, its spawn and its joins, as `graph.walk_tree` walks them); the `run_end` at
    the critical path. A tool call that only waited for sub-runs (`spawn_call_id`) spans
    them re-timed: from its own start to their latest re-timed end plus its recorded tail
    after it. A flat trace comes out as `retime.retime_events` makes it. Linear in the
    events (one pass to group them by run)."""
    return place_tree(events, timing, walk_tree(events, timing), note)


def place_tree(
    events: Sequence[TraceEvent], timing: TimingFn, walk: TreeWalk, note: str
) -> list[TraceEvent]:
    """`retime_tree` with the tree already walked at `timing` (`graph.walk_tree`)."""
    own: dict[str | None, list[TraceEvent]] = {}
    for event in events:
        if not isinstance(event, RunEndEvent):
            own.setdefault(event.subrun, []).append(event)
    spawned: dict[tuple[str | None, str | None], list[str]] = {}
    for event in events:
        if (
            isinstance(event, SubRunEvent)
            and event.subrun is not None
            and event.subrun in walk.ends
        ):
            spawned.setdefault((event.parent, event.spawn_call_id), []).append(event.subrun)
    out: list[TraceEvent] = []
    for run_id, steps in walk.shifts.items():
        mine = own.get(run_id, [])
        for before, after in zip(mine, retime_events(mine, timing, note), strict=True):
            if isinstance(after, ModelCallEvent):
                out.append(
                    _moved_call(after, shift_at(steps, before.start) - (after.start - before.start))
                )
                continue
            start = before.start + shift_at(steps, before.start)
            end = before.end + shift_at(steps, before.end)
            if isinstance(before, SubRunEvent) and before.subrun in walk.ends:
                start, end = walk.starts[before.subrun], walk.ends[before.subrun]
            if isinstance(before, ToolCallEvent) and before.call_id is not None:
                kids = spawned.get((run_id, before.call_id), [])
                if kids:
                    start, end = _spanning(before, kids, start, walk.starts, walk.ends, own)
            update: dict[str, Any] = {"start": start, "end": max(start, end)}
            if isinstance(after, StepEvent):  # its tools phase waited for sub-runs too
                span = max(start, end) - start
                model = min(after.model_s, span)
                update["model_s"] = model
                update["tool_s"] = max(0.0, span - model - after.overhead_s)
                update["overhead_s"] = span - model - update["tool_s"]
            out.append(after.model_copy(update=update))
    for last in (e for e in events if isinstance(e, RunEndEvent)):
        out.append(last.model_copy(update={"end": walk.ends[None], "model_s": walk.model_s}))
    return out


def _moved_call(call: ModelCallEvent, extra: float) -> ModelCallEvent:
    """A re-timed call moved by `extra` seconds (all its times)."""
    moved: dict[str, float | None] = {"start": call.start + extra, "end": call.end + extra}
    for name in ("sent", "first_token", "last_token"):
        value = getattr(call, name)
        moved[name] = None if value is None else value + extra
    return call.model_copy(update=moved)


def _spanning(
    call: ToolCallEvent,
    kids: list[str],
    start: float,
    starts: Mapping[str | None, float],
    ends: Mapping[str | None, float],
    own: Mapping[str | None, list[TraceEvent]],
) -> tuple[float, float]:
    """A spawning call's re-timed (start, end): it spans its sub-runs re-timed, keeping
    its recorded tail after their latest end."""
    recorded_last = max(max((e.end for e in own.get(k, [])), default=call.end) for k in kids)
    tail = max(0.0, call.end - recorded_last)
    return min(start, *(starts[k] for k in kids)), max(ends[k] for k in kids) + tail
