"""Deadlines: which runs finish under a task time cap, at a profile.

A run *finishes* when it did not fail (`looplab.analysis.outcomes`: a `run_end` that is
not a stop, no non-zero exit, no verdict saying failed); a run of unknown outcome (no
verdict: the corpus's sessions) finishes but is not solved, and the views drawing these
curves say how many were unknown. Its task time is `run_end.end` (seconds from the run
origin). A run finishes under cap `t` when it finishes and its task time is at most `t`.
At a profile, the task time is the trace re-timed there (`looplab.analysis.retime`:
each model call recomputed from its tokens, tools and overhead as recorded), so live,
imported and corpus runs share this.

`cap_events` is the runner's side: a run whose (wall or composed virtual) task time went
past its cap is cut at the cap and ends `timeout`, unfinished.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from looplab.analysis.outcomes import STOP_REASONS, outcome
from looplab.analysis.retime import profile_model_timing, retime_events
from looplab.latency.profile import LatencyProfile
from looplab.traces.end_reason import EndReason
from looplab.traces.io import Trace
from looplab.traces.schema import RunEndEvent, StepEvent, ToolCallEvent, TraceEvent

__all__ = [
    "STOP_REASONS",
    "CapCurve",
    "cap_events",
    "cap_grid",
    "curve_from_times",
    "finished",
    "share_finishing_under_cap",
    "share_under_cap",
    "task_times_at",
    "under_cap_curve",
    "under_cap_curves",
]


def finished(end: RunEndEvent | None) -> bool:
    """Whether a run with this `run_end` finished: it did not fail
    (`looplab.analysis.outcomes`: a stop, a non-zero exit, a failed verdict). A run of
    unknown outcome finishes here but is never solved: views over runs with verdicts use
    `looplab.report.views.success`, which counts solved runs only."""
    return outcome(end) != "failed"


def task_times_at(traces: Iterable[Trace], profile: LatencyProfile | None) -> list[float | None]:
    """Each trace's task time re-timed at `profile` (as recorded when None); None for a
    run that did not finish."""
    timing = profile_model_timing(profile) if profile is not None else None
    out: list[float | None] = []
    for trace in traces:
        if not finished(trace.end):
            out.append(None)
            continue
        events = trace.events
        if timing is not None:
            events = retime_events(events, timing, f"re-timed at {profile.name}")  # type: ignore[union-attr]
        end = next((e for e in reversed(events) if isinstance(e, RunEndEvent)), None)
        out.append(end.end if end is not None else None)
    return out


def share_under_cap(times: Sequence[float | None], cap_s: float) -> float | None:
    """Share of runs (None = unfinished) finishing within `cap_s`; None for no runs."""
    if not times:
        return None
    return sum(1 for t in times if t is not None and t <= cap_s) / len(times)


def share_finishing_under_cap(
    traces: Sequence[Trace], profile: LatencyProfile | None, cap_s: float
) -> float | None:
    """Share of `traces` that finish within `cap_s` seconds of task time when re-timed at
    `profile` (as recorded when None); None for no traces. The bottom line's "under a
    T-minute cap finishes P%": `share_finishing_under_cap(traces, profile, 60 * T)`."""
    return share_under_cap(task_times_at(traces, profile), cap_s)


@dataclass(frozen=True)
class CapCurve:
    """Success under cap at one profile: `shares[i]` finish within `caps_s[i]`."""

    profile: str
    caps_s: list[float]
    shares: list[float]
    runs: int


def curve_from_times(
    label: str, times: Sequence[float | None], caps_s: Sequence[float]
) -> CapCurve:
    """The curve of task times already computed (None = unfinished)."""
    shares = [share_under_cap(times, cap) or 0.0 for cap in caps_s]
    return CapCurve(profile=label, caps_s=list(caps_s), shares=shares, runs=len(times))


def under_cap_curve(
    traces: Sequence[Trace], profile: LatencyProfile | None, caps_s: Sequence[float]
) -> CapCurve:
    """The share of `traces` finishing within each cap, re-timed at `profile`."""
    times = task_times_at(traces, profile)
    shares = [share_under_cap(times, cap) or 0.0 for cap in caps_s]
    name = profile.name if profile is not None else "as recorded"
    return CapCurve(profile=name, caps_s=list(caps_s), shares=shares, runs=len(times))


def under_cap_curves(
    traces: Sequence[Trace], profiles: Mapping[str, LatencyProfile], caps_s: Sequence[float]
) -> list[CapCurve]:
    """`under_cap_curve` for each profile (by label)."""
    return [
        CapCurve(label, c.caps_s, c.shares, c.runs)
        for label, profile in profiles.items()
        if (c := under_cap_curve(traces, profile, caps_s))
    ]


def cap_grid(times: Sequence[float | None], points: int = 24) -> list[float]:
    """Caps from 0 to just past the slowest finished run, `points` evenly spaced."""
    top = max((t for t in times if t is not None), default=0.0)
    if top <= 0:
        return [0.0]
    step = top * 1.05 / (points - 1)
    return [round(i * step, 3) for i in range(points)]


def cap_events(
    events: Sequence[TraceEvent], cap_s: float, *, stopped: bool = False
) -> list[TraceEvent]:
    """A run's events cut at task time `cap_s`, ending `timeout`, when it went past it.

    Events that ended after the cap are dropped, but a tool call the runner cut at the cap
    (`cut`: its process tree killed there) is kept, ending at the cap; the `run_end` ends at
    the cap (or where the run stopped, if earlier), unfinished (`success` False, reason
    `timeout`). With `stopped`, the runner stopped the run for this cap (a wall-clock run
    stops at a step boundary), so it ends `timeout` even a hair under the cap. Otherwise a
    run within its cap comes back unchanged, and so does one without a `run_end`.

    `cap_s` is the experiment's task time cap, `budgets.task_timeout_s`: a cap on task time
    (wall or composed virtual) applied to the finished run's events. It is not the agent's
    deadline (`AgentConfig.wall_time_budget_s`, wall time the loop itself watches and ends
    `wall_time_budget`), though on the wall clock the cap also sets that deadline.
    """
    end = next((e for e in reversed(events) if isinstance(e, RunEndEvent)), None)
    if end is None or (end.end <= cap_s and not stopped):
        return list(events)
    stop = min(end.end, cap_s)
    kept: list[TraceEvent] = [
        _clamped(e, stop) if _cut_at(e, stop) else e
        for e in events
        if not isinstance(e, RunEndEvent) and (e.end <= stop or _cut_at(e, stop))
    ]
    steps = [e for e in kept if isinstance(e, StepEvent)]
    cut = end.end - stop
    kept.append(
        RunEndEvent.model_validate(  # validated: a wrong value fails here, not downstream
            {
                **end.model_dump(),
                "end": stop,
                "end_reason": EndReason.TIMEOUT,
                "success": False,
                "steps": len(steps),
                "model_s": sum(s.model_s for s in steps) if steps else end.model_s,
                "tool_s": sum(s.tool_s for s in steps) if steps else end.tool_s,
                "end_to_end_s": None if end.end_to_end_s is None else end.end_to_end_s - cut,
                "error": f"task time cap of {cap_s:g} s reached (task_timeout_s)",
            }
        )
    )
    return kept


def _cut_at(event: TraceEvent, stop: float) -> bool:
    """Whether `event` is a tool call cut by the cap, begun before the stop."""
    return isinstance(event, ToolCallEvent) and event.cut and event.start <= stop < event.end


def _clamped(event: TraceEvent, stop: float) -> TraceEvent:
    """A cut tool call ending at the stop (the kill lands a few ms after the cap)."""
    return event.model_copy(update={"end": stop})
