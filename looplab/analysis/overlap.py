"""Tool time that overlaps the model's decode, on the virtual clock.

On the virtual clock the simulator answers at once, so a tool started while the reply
streamed (`dispatch: stream`) or speculatively before it (`dispatch: speculative`) really
ran next to a near-zero model call; the plain time warp (`retime.retime_events`) then puts
it at the start of the call and its tail after the call, as if nothing overlapped. This
module lays those steps out again, after the warp:

- a streamed call is ready at its stream position on the virtual call: first token +
  `dispatch_fraction` x (last - first token); a speculative one at the call's start plus
  its real lead; a call dispatched after the message when the virtual reply ends;
- calls then start in the reply's order as slots free up (`tool_limit`, from the run's
  `knob_stats`), each lasting what it really took; a speculative one needs no slot;
- the step's tools phase ends at the later of the reply's end and the last call's end,
  its harness time after that is kept, and everything after the step moves by the
  difference to the warped layout.

Steps without such calls are left as warped. The step split keeps its invariant: model +
tools + overhead = the step's time, tools counting only the time not hidden by the model.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = ["OVERLAPPED", "apply_overlap", "moved", "refresh_run_end"]

OVERLAPPED = ("stream", "speculative")


@dataclass
class _Step:
    call: int | None = None
    tools: list[int] = field(default_factory=list)
    others: list[int] = field(default_factory=list)
    event: int | None = None


def apply_overlap(before: Sequence[TraceEvent], after: Sequence[TraceEvent]) -> list[TraceEvent]:
    """Re-lay steps whose tools overlapped their model call (see the module docstring).

    Args:
        before: the run's events on the real axis.
        after: the same events, in the same order, after the virtual-clock warp.
    """
    out = list(after)
    steps: dict[int, _Step] = {}
    for index, event in enumerate(before):
        if event.step is None:
            continue
        step = steps.setdefault(event.step, _Step())
        if isinstance(event, ModelCallEvent):
            step.call = index
        elif isinstance(event, ToolCallEvent):
            step.tools.append(index)
        elif isinstance(event, StepEvent):
            step.event = index
        else:
            step.others.append(index)
    end = next((e for e in before if isinstance(e, RunEndEvent)), None)
    limit = int(end.knob_stats.get("tool_limit", 1)) if end is not None else 1
    moves: list[tuple[float, float]] = []  # (real time, extra shift from then on)
    shift = 0.0
    for number in sorted(steps):
        step = steps[number]
        overlapped = any(_dispatch(before[i]) in OVERLAPPED for i in step.tools)
        if not overlapped or step.call is None or step.event is None:
            _shift(out, [*step.tools, *step.others, step.event, step.call], shift)
            continue
        delta = _relayout(before, out, step, limit, shift)
        moves.append((before[step.event].end, delta))
        shift += delta
    _shift_rest(before, out, steps, moves)
    refresh_run_end(out, shift)
    return out


def _dispatch(event: TraceEvent) -> str | None:
    return event.dispatch if isinstance(event, ToolCallEvent) else None


def _shift(out: list[TraceEvent], indices: list[int | None], by: float) -> None:
    if by == 0:
        return
    for index in indices:
        if index is not None:
            out[index] = moved(out[index], by)


def moved(event: TraceEvent, by: float) -> TraceEvent:
    """`event` moved by `by` seconds (a model call with its sent and token times)."""
    update: dict[str, float | None] = {"start": event.start + by, "end": event.end + by}
    if isinstance(event, ModelCallEvent):
        for name in ("sent", "first_token", "last_token"):
            value = getattr(event, name)
            update[name] = None if value is None else value + by
    return event.model_copy(update=update)


def _relayout(
    before: Sequence[TraceEvent], out: list[TraceEvent], step: _Step, limit: int, shift: float
) -> float:
    """Lay one overlapped step out; return how much later (or earlier) it now ends."""
    assert step.call is not None
    assert step.event is not None
    real_call, call = before[step.call], moved(out[step.call], shift)
    assert isinstance(call, ModelCallEvent)
    out[step.call] = call
    _shift(out, list(step.others), shift)
    slots = [call.start] * max(1, limit)
    tool_starts: list[float] = []
    tool_ends: list[float] = []
    for index in step.tools:
        real, tool = before[index], out[index]
        assert isinstance(real, ToolCallEvent)
        ready = _ready(real, real_call, call)
        speculative = real.dispatch == "speculative"
        start = ready if speculative else max(ready, heapq.heappop(slots))
        finish = start + (real.end - real.start)
        if real.dispatch != "speculative":
            heapq.heappush(slots, finish)
        out[index] = tool.model_copy(update={"start": start, "end": finish})
        tool_starts.append(start)
        tool_ends.append(finish)
        _carry_sandbox_events(before, out, step, real, start)
    real_step = before[step.event]
    assert isinstance(real_step, StepEvent)
    # the model phase ends when the step's reply is assembled, a moment after the call's
    # last byte: tools phase and harness time count from there, so model + tools +
    # overhead add up to the step's wall time on both axes
    real_model_end = max(real_call.end, real_step.start + real_step.model_s)
    real_tools_end = max([real_model_end, *(before[i].end for i in step.tools)])
    harness = max(0.0, real_step.end - real_tools_end)
    warped = out[step.event]
    assert isinstance(warped, StepEvent)
    start = warped.start + shift
    model_end = max(call.end, start + warped.model_s)
    tools_end = max([model_end, *tool_ends])
    first = max(min(tool_starts, default=model_end), model_end)
    tool_s = max(0.0, tools_end - first) if tool_ends else 0.0
    new_end = tools_end + harness
    out[step.event] = warped.model_copy(
        update={
            "start": start,
            "end": new_end,
            "tool_s": tool_s,
            "overhead_s": max(0.0, (new_end - start) - warped.model_s - tool_s),
        }
    )
    return new_end - (warped.end + shift)


def _ready(real: ToolCallEvent, real_call: TraceEvent, call: ModelCallEvent) -> float:
    """When a call could start on the virtual timeline (module docstring)."""
    if real.dispatch == "speculative":
        return call.start + max(0.0, real.start - real_call.start)
    fraction = real.dispatch_fraction
    streamed = real.dispatch == "stream" and real.start < real_call.end
    if streamed and fraction is not None and call.first_token is not None:
        last = call.last_token if call.last_token is not None else call.end
        return call.first_token + fraction * (last - call.first_token)
    return call.end + max(0.0, real.start - (real.queued_s or 0.0) - real_call.end)


def _carry_sandbox_events(
    before: Sequence[TraceEvent], out: list[TraceEvent], step: _Step, tool: TraceEvent, at: float
) -> None:
    """Sandbox events that happened during a moved call move with it."""
    for index in step.others:
        real = before[index]
        if tool.start <= real.start <= tool.end:
            offset = real.start - tool.start
            out[index] = out[index].model_copy(
                update={"start": at + offset, "end": at + offset + real.duration_s}
            )


def _shift_rest(
    before: Sequence[TraceEvent],
    out: list[TraceEvent],
    steps: dict[int, _Step],
    moves: list[tuple[float, float]],
) -> None:
    """Events outside any step (setup) move by the shifts of the steps before them."""
    if not moves:
        return
    for index, event in enumerate(before):
        if event.step is not None or isinstance(event, RunEndEvent):
            continue
        by = sum(delta for when, delta in moves if when <= event.start)
        _shift(out, [index], by)


def refresh_run_end(out: list[TraceEvent], shift: float = 0.0) -> None:
    """The run end moved by `shift` (its end-to-end time too), its model and tool time
    the sum of its steps'."""
    steps = [e for e in out if isinstance(e, StepEvent)]
    for index, event in enumerate(out):
        if isinstance(event, RunEndEvent):
            out[index] = event.model_copy(
                update={
                    "end": event.end + shift,
                    "end_to_end_s": None
                    if event.end_to_end_s is None
                    else event.end_to_end_s + shift,
                    "model_s": sum(s.model_s for s in steps),
                    "tool_s": sum(s.tool_s for s in steps),
                }
            )
