"""Where a live replay stopped matching its recording: tool results that differ in a way
that matters (ok vs error, tests passing vs failing), and steps no longer reached.

`looplab replay --mode live` reports them; the report highlights them in a replay's
transcript and in the step-aligned diff of a run and its replay. A live replay names the
run it replays in its header notes (`LIVE_REPLAY_NOTE` + run id), so any reader can pair
them without the replay command's output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from looplab.traces.io import Trace
from looplab.traces.schema import RunEndEvent, ToolCallEvent, TraceHeader

__all__ = ["LIVE_REPLAY_NOTE", "OutcomeDivergence", "find_divergences", "replay_of"]

LIVE_REPLAY_NOTE = "live replay of "
"""Header note of a live replay, followed by the recorded run's id."""


@dataclass(frozen=True)
class OutcomeDivergence:
    """Where a live replay stopped matching its recording."""

    step: int
    tool: str
    recorded: str
    replayed: str


def replay_of(header: TraceHeader) -> str | None:
    """The run id a live replay replays (from its header notes), else None."""
    for note in reversed(header.notes):
        if note.startswith(LIVE_REPLAY_NOTE):
            return note.removeprefix(LIVE_REPLAY_NOTE).strip() or None
    return None


def find_divergences(recorded: Trace, replayed: Trace) -> list[OutcomeDivergence]:
    """Tool results that differ in a way that matters, and steps that no longer apply."""
    out: list[OutcomeDivergence] = []
    by_step: dict[tuple[int, int], ToolCallEvent] = {}
    for position, call in _positions(replayed.tool_calls()):
        by_step[position] = call
    for position, call in _positions(recorded.tool_calls()):
        step = call.step or 0
        again = by_step.get(position)
        if again is None:
            out.append(OutcomeDivergence(step, call.name, _verdict(call), "step not reached"))
            continue
        if _verdict(call) != _verdict(again):
            out.append(OutcomeDivergence(step, call.name, _verdict(call), _verdict(again)))
    end_recorded, end_replayed = recorded.end, replayed.end
    if (
        isinstance(end_recorded, RunEndEvent)
        and isinstance(end_replayed, RunEndEvent)
        and end_recorded.success != end_replayed.success
    ):
        out.append(
            OutcomeDivergence(
                end_replayed.steps,
                "check",
                f"success={end_recorded.success}",
                f"success={end_replayed.success}",
            )
        )
    return out


def _positions(calls: Sequence[ToolCallEvent]) -> list[tuple[tuple[int, int], ToolCallEvent]]:
    seen: dict[int, int] = {}
    out = []
    for call in calls:
        step = call.step or 0
        index = seen.get(step, 0)
        seen[step] = index + 1
        out.append(((step, index), call))
    return out


def _verdict(call: ToolCallEvent) -> str:
    """What matters about a tool result: ok/error, and pass/fail for test runs."""
    head = (call.output or "").strip().splitlines()[:1]
    first = head[0] if head else ""
    if call.name == "run_tests":
        return "tests pass" if first.startswith("PASSED") else "tests fail"
    return "ok" if call.ok else f"error: {(call.error or first)[:80]}"
