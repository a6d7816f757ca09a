"""Re-timing traces: what a recorded run would have taken with other model timings.

A trace is re-timed by replacing each model call's duration and shifting everything
after it by the difference (a piecewise time warp): tool calls, sandbox operations and
harness overhead keep their recorded durations and order. Three users:

- the virtual clock (`compose_virtual_timeline`): model times from the simulator's own
  schedule (what it would have waited), tools as they really ran, and tools that
  overlapped a model call (streamed or speculative) laid out again by
  `looplab.analysis.overlap`;
- `looplab replay --mode virtual` (`retime_trace` with `profile_model_timing`): every model
  call recomputed from a latency profile and the call's recorded token counts;
- `looplab sweep` (`sweep_trace`): the same, totals only, over a grid of rates and TTFTs.

One convention for a call's phases everywhere (trace, store, report, sweep): TTFT +
prefill (to the first token of any kind), hidden reasoning decode (to the first visible
token), visible decode. Reasoning is decoded at the decode rate, so it scales with it
(`SweepPoint.rate_scaled_s`), but it is reported as its own phase. For wall-clock runs
against the simulator, `annotate_reasoning` takes the reasoning time from its schedule.

Model timing from a profile comes from the one call-timing function,
`looplab.latency.timing.TimingModel.plan` (its module docstring has the formula), fed
with the call's recorded prompt, cached, reasoning and visible token counts and the TTFT
jitter's mean, each call paying the per-call overhead of its recorded `transport`
(`request_overhead_s` over HTTP, `websocket_overhead_s` on a WebSocket). Calls without
token counts keep their recorded timing (and say so).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from looplab.analysis.calltiming import (
    ModelTiming,
    TimingFn,
    call_tokens,
    model_timing,
    retimed_duration,
)
from looplab.analysis.eager import apply_eager_setup
from looplab.analysis.graph import walk_tree
from looplab.analysis.overlap import apply_overlap
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import CallTokens, TimingModel
from looplab.latency.token_track import ServedPhases
from looplab.traces.io import Trace
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    StepEvent,
    TraceEvent,
)

__all__ = [
    "ModelTiming",
    "SweepBase",
    "SweepPoint",
    "annotate_reasoning",
    "call_tokens",
    "compose_virtual_timeline",
    "profile_model_timing",
    "retime_events",
    "simulator_record",
    "sweep_base",
    "sweep_points",
    "sweep_trace",
]

# re-exported: ModelTiming, TimingFn, call_tokens (their home is `calltiming`)


def retime_events(events: Sequence[TraceEvent], timing: TimingFn, note: str) -> list[TraceEvent]:
    """Events with model calls re-timed by `timing` and the rest shifted accordingly.

    Args:
        events: a run's events (any order; times on the run axis).
        timing: new timing of a model call, or None to keep the recorded one.
        note: how the new values were obtained, stored in each changed call's `estimated`.
    """
    calls = sorted(
        (e for e in events if isinstance(e, ModelCallEvent)), key=lambda e: (e.end, e.start)
    )
    ends: list[float] = []
    cumulative: list[float] = []
    replaced: dict[int, ModelCallEvent] = {}
    total = 0.0
    for call in calls:
        new = timing(call)
        if new is None:
            continue
        queue = (call.sent - call.start) if call.sent is not None else 0.0
        duration = retimed_duration(call, new)
        delta = duration - (call.end - call.start)
        start = call.start + _shift_at(call.start, ends, cumulative)
        sent = start + queue
        first = sent + new.ttft_s + new.reasoning_s
        last = first + new.decode_s
        reasoning = new.reasoning_s if call.reasoning_tokens else None
        estimated = {**call.estimated, "ttft_s": note, "decode_s": note}
        if reasoning is not None:
            estimated["reasoning_s"] = note
        replaced[id(call)] = call.model_copy(
            update={
                "start": start,
                "end": start + duration,
                "sent": sent if call.sent is not None else None,
                "first_token": first,
                "last_token": last,
                "reasoning_s": reasoning,
                "estimated": estimated,
            }
        )
        total += delta
        ends.append(call.end)
        cumulative.append(total)

    def warp(t: float) -> float:
        return t + _shift_at(t, ends, cumulative)

    out: list[TraceEvent] = []
    for event in events:
        if id(event) in replaced:
            out.append(replaced[id(event)])
            continue
        update: dict[str, Any] = {"start": warp(event.start), "end": warp(event.end)}
        if isinstance(event, RunEndEvent):
            update["start"] = event.start
            if event.end_to_end_s is not None:  # the setup began before any model call
                update["end_to_end_s"] = event.end_to_end_s + warp(event.end) - event.end
        if isinstance(event, StepEvent):
            new_model = (
                event.model_s + (warp(event.end) - event.end) - (warp(event.start) - event.start)
            )
            update["model_s"] = new_model
        out.append(event.model_copy(update=update))
    _refresh_totals(out)
    return out


def _shift_at(t: float, ends: list[float], cumulative: list[float]) -> float:
    """Total delta of the calls that ended at or before `t`."""
    index = bisect.bisect_right(ends, t)
    return cumulative[index - 1] if index else 0.0


def _refresh_totals(events: list[TraceEvent]) -> None:
    steps = [e for e in events if isinstance(e, StepEvent)]
    for index, event in enumerate(events):
        if isinstance(event, RunEndEvent) and steps:
            events[index] = event.model_copy(update={"model_s": sum(s.model_s for s in steps)})


def compose_virtual_timeline(
    events: Sequence[TraceEvent], phases: Mapping[str, ServedPhases]
) -> list[TraceEvent]:
    """Replace each simulated call's (near-zero) virtual wait by the schedule it stood for.

    Args:
        events: a run recorded against a simulator on a `VirtualClock`.
        phases: the simulator's served phases by request id (`Simulator.phases`).
    """

    def timing(call: ModelCallEvent) -> ModelTiming | None:
        served = simulator_record(phases, call)
        if served is None:
            return None
        return ModelTiming(
            ttft_s=served.ttft_s, reasoning_s=served.reasoning_s, decode_s=served.decode_s
        )

    warped = retime_events(events, timing, "virtual clock: the simulator's intended schedule")
    return apply_eager_setup(events, apply_overlap(events, warped))


def annotate_reasoning(
    events: Sequence[TraceEvent], phases: Mapping[str, ServedPhases]
) -> list[TraceEvent]:
    """A wall-clock run against the simulator: each call's hidden reasoning time from the
    simulator's schedule (the client cannot see hidden tokens), times left as measured.

    Args:
        events: a run recorded against a simulator on a `WallClock`.
        phases: the simulator's served phases by request id (`Simulator.phases`).
    """
    out: list[TraceEvent] = []
    for event in events:
        served = simulator_record(phases, event) if isinstance(event, ModelCallEvent) else None
        if isinstance(event, ModelCallEvent) and event.reasoning_tokens and served:
            event = event.model_copy(update={"reasoning_s": served.reasoning_s})
        out.append(event)
    return out


def simulator_record(
    phases: Mapping[str, ServedPhases], call: ModelCallEvent
) -> ServedPhases | None:
    """The simulator's served phases of `call`: by its request id, or, for a Responses
    turn (over the WebSocket its id is the response's, `resp_<request id>`), by that."""
    request_id = call.request_id or ""
    return phases.get(request_id) or phases.get(request_id.removeprefix("resp_"))


def profile_model_timing(profile: LatencyProfile) -> TimingFn:
    """Model timing of a call under `profile`, from the call's token counts (module doc)."""
    return model_timing(TimingModel.from_profile(profile))


@dataclass(frozen=True)
class SweepPoint:
    """Predicted totals of one trace at one (decode rate, TTFT) point. For a run tree the
    parts are what is on its critical path (`pathsplit.path_split`): decode, reasoning,
    TTFT + prefill, tools and other sum to `task_s`."""

    decode_tps: float
    ttft_s: float
    task_s: float
    decode_s: float
    """Visible decode time (first -> last visible token, summed over calls)."""
    ttft_total_s: float
    """TTFT + prefill over all calls: fixed TTFT, pipeline, network, prefill (to the first
    token of any kind)."""
    tool_s: float
    other_s: float
    kept_calls: int
    reasoning_s: float = 0.0
    """Hidden reasoning decode time over all calls (first token -> first visible token)."""
    floor_s: float | None = None
    """Task time with no decode at all (the Amdahl floor: `task_s / floor_s` is the most
    any decode rate can give from here). A flat trace's is `task_s - rate_scaled_s`; a
    run tree's is its critical path re-timed without decode (the binding branch may
    change). None: not computed."""
    work_s: float | None = None
    """Total work: every run's own time summed over parallel branches (a flat trace's is
    its task time); its own figure, never a denominator of the shares."""

    @property
    def rate_scaled_s(self) -> float:
        """Everything the decode rate scales: visible decode plus hidden reasoning (the
        Amdahl `f` numerator)."""
        return self.decode_s + self.reasoning_s


@dataclass(frozen=True)
class SweepBase:
    """What `sweep_trace` reads off a trace, whatever the grid point (`sweep_base`): kept
    by a caller that re-times the same trace at many profiles (`claims.knobs.Retimer`)."""

    trace: Trace
    shapes: list[tuple[ModelCallEvent, CallTokens]]
    """The calls with token counts (re-timed), with those counts."""
    kept: int
    """Calls without token counts (they keep their recorded time)."""
    kept_time: float
    non_model: float
    queue_tail: float
    tools: float
    structured: bool
    """A run tree (subruns): its critical path is walked at each point."""


def sweep_base(trace: Trace) -> SweepBase:
    """`trace`'s grid-independent sums for `sweep_points`."""
    calls = trace.model_calls()
    end = trace.end
    recorded_total = end.end if end is not None else max((e.end for e in trace.events), default=0)
    recorded_model = sum(c.end - c.start for c in calls)
    shapes = [(c, t) for c in calls if (t := call_tokens(c)) is not None]
    kept = [c for c in calls if c.completion_tokens is None]
    queue_tail = sum(
        ((c.sent - c.start) if c.sent is not None else 0.0)
        + ((c.end - c.last_token) if c.last_token is not None else 0.0)
        for c, _ in shapes
    )
    return SweepBase(
        trace=trace,
        shapes=shapes,
        kept=len(kept),
        kept_time=sum(c.end - c.start for c in kept),
        non_model=recorded_total - recorded_model,
        queue_tail=queue_tail,
        tools=sum(s.tool_s for s in trace.steps()),
        structured=any(e.subrun is not None for e in trace.events),
    )


def sweep_trace(
    trace: Trace, rates: Sequence[float], ttfts: Sequence[float], base: LatencyProfile
) -> list[SweepPoint]:
    """Predicted task time of `trace` at every (rate, ttft) point, totals only (fast path).

    Everything but model time is kept as recorded; `base` supplies prefill and the rest of
    the profile; `ttft_s` replaces its TTFT base. Calls without token counts keep their
    recorded time (`kept_calls`).
    """
    return sweep_points(sweep_base(trace), rates, ttfts, base)


def sweep_points(
    sums: SweepBase, rates: Sequence[float], ttfts: Sequence[float], base: LatencyProfile
) -> list[SweepPoint]:
    """`sweep_trace` of the trace `sums` was read from."""
    model = TimingModel.from_profile(base)
    floors: dict[float, float] = {}  # no decode: the floor depends on the TTFT, not the rate
    points: list[SweepPoint] = []
    for rate in rates:
        for ttft in ttfts:
            at = model.with_(decode_tps=rate, ttft_s=ttft)
            plans = [at.plan(tokens, transport=c.transport) for c, tokens in sums.shapes]
            decode = sum(p.decode_s for p in plans)
            reasoning = sum(p.reasoning_s for p in plans)
            ttft_total = sum(p.ttft_s for p in plans)
            task = (
                sums.non_model + sums.kept_time + sums.queue_tail + ttft_total + reasoning + decode
            )
            if sums.structured:  # a run tree: its critical path, split by what is on it
                timing = model_timing(at)
                points.append(_tree_point(sums.trace, timing, rate, ttft, sums.kept, floors))
                continue
            points.append(
                SweepPoint(
                    decode_tps=rate,
                    ttft_s=ttft,
                    task_s=task,
                    decode_s=decode,
                    ttft_total_s=ttft_total,
                    tool_s=sums.tools,
                    other_s=task - decode - reasoning - ttft_total - sums.tools,
                    kept_calls=sums.kept,
                    reasoning_s=reasoning,
                    floor_s=task - decode - reasoning,
                    work_s=task,
                )
            )
    return points


def _tree_point(
    trace: Trace, timing: TimingFn, rate: float, ttft: float, kept: int, floors: dict[float, float]
) -> SweepPoint:
    """One grid point of a run tree: the critical path split by what is on it
    (`pathsplit.path_split`), total work beside it, and the floor re-timed without decode
    (the binding branch may change as decode vanishes)."""
    from looplab.analysis.pathsplit import path_split, without_decode

    split = path_split(trace.events, timing)
    on = split.path
    if ttft not in floors:
        floors[ttft] = walk_tree(trace.events, without_decode(timing)).ends[None]
    return SweepPoint(
        decode_tps=rate,
        ttft_s=ttft,
        task_s=split.task_s,
        decode_s=on.decode_s,
        ttft_total_s=on.ttft_s,
        tool_s=on.tool_s,
        other_s=on.model_rest_s + on.other_s,
        kept_calls=kept,
        reasoning_s=on.reasoning_s,
        floor_s=floors[ttft],
        work_s=split.work.total_s,
    )
