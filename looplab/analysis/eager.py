"""The eager sandbox (`agent.eager_sandbox`) on the virtual clock.

With the knob, the sandbox is created and started (real work) while the first model call
runs, and the first tool call waits for it. On the virtual clock the simulator answers at
once, so the recorded wait is nearly the whole setup; the time warp
(`retime.retime_events`) then puts that wait after the virtual model call, as if the two
had not overlapped, and stretches the setup events that ended after the call. This module
lays step 0 out again, after the warp and `looplab.analysis.overlap`:

- the setup's sandbox events (step None, ending after the first request began and
  starting before step 0's first tool: not the check's) keep their real times: setup is
  real wall work, and the run axis starts at the first request on both clocks;
- step 0's first tool starts at the later of when it was ready on the virtual timeline
  (its warped start less its recorded `queued_s`, which holds the sandbox wait; a step
  that `overlap` laid out already starts its calls when ready) and the setup's real end;
- everything from that tool on moves by the difference: step 0's end and tool time, the
  later steps, the run's end and end-to-end time; the tool's `queued_s` and the run's
  `knob_stats.sandbox_wait_s` become the virtual wait.

Runs without a setup overlapping the first request are returned unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from looplab.analysis.overlap import OVERLAPPED, moved, refresh_run_end
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    SandboxOpEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = ["apply_eager_setup"]


def apply_eager_setup(
    before: Sequence[TraceEvent], after: Sequence[TraceEvent]
) -> list[TraceEvent]:
    """Re-lay step 0 of a run whose setup overlapped its first model call (module docstring).

    Args:
        before: the run's events on the real axis.
        after: the same events, in the same order, on the virtual timeline.
    """
    out = list(after)
    requests = [e.start for e in before if isinstance(e, ModelCallEvent)]
    tools = [i for i, e in enumerate(out) if isinstance(e, ToolCallEvent) and e.step == 0]
    if not requests or not tools:
        return out
    waited = min(before[i].start for i in tools)  # setup ran before it; the check after
    setup = {
        index
        for index, event in enumerate(before)
        if isinstance(event, SandboxOpEvent)
        and event.step is None
        and min(requests) < event.end
        and event.start < waited
    }
    if not setup:
        return out
    for index in setup:
        out[index] = before[index]
    setup_end = max(before[index].end for index in setup)
    first = out[min(tools, key=lambda i: out[i].start)]
    assert isinstance(first, ToolCallEvent)
    relaid = any(getattr(before[i], "dispatch", None) in OVERLAPPED for i in tools)
    ready = first.start if relaid else first.start - (first.queued_s or 0.0)
    start = max(ready, setup_end)
    _shift_from(out, setup, first.start, start - first.start, wait=start - ready)
    return out


def _shift_from(
    out: list[TraceEvent], setup: set[int], when: float, by: float, *, wait: float
) -> None:
    """Move what starts at or after `when` by `by`; step 0 and the run's end stretch."""
    for index, event in enumerate(out):
        if index in setup or isinstance(event, RunStartEvent):
            continue
        if isinstance(event, RunEndEvent):
            stats = dict(event.knob_stats)
            if "sandbox_wait_s" in stats:
                stats["sandbox_wait_s"] = max(0.0, wait)
            e2e = None if event.end_to_end_s is None else event.end_to_end_s + by
            update = {"end": event.end + by, "end_to_end_s": e2e, "knob_stats": stats}
            out[index] = event.model_copy(update=update)
        elif isinstance(event, StepEvent) and event.step == 0:
            tool_s = max(0.0, event.tool_s + by)
            out[index] = event.model_copy(update={"end": event.end + by, "tool_s": tool_s})
        elif event.start >= when - 1e-9:
            event = moved(event, by)
            if isinstance(event, ToolCallEvent) and event.start == when + by:
                event = event.model_copy(update={"queued_s": max(0.0, wait)})
            out[index] = event
    refresh_run_end(out)  # the run's model and tool time follow the steps'
