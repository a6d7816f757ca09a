"""Where a run tree's time goes: the critical path split by what is on it, and total work.

One function, `path_split(events, timing)`, answers "where does the task time go" for a
run with sub-runs (`looplab-2`), and every view renders its answer (`looplab sweep`, the
report's bottom line, time-split table and "Where the time goes" bars, run pages, import
summaries); none recomputes it.

- `PathSplit.path`: the critical path (`graph.walk_tree`: the top-level run, with each
  window where a joined sub-run bound a join replaced by that sub-run's own path, down
  the tree) split by what each run on it was doing at each instant, re-timed: visible
  decode, hidden reasoning, TTFT + prefill, the rest of a model call (client queue,
  stream tail, a call without phases), tools, other (gaps, harness time). The parts sum
  to the task time, so shares lie in [0, 1] and sum to 1.
- `PathSplit.work`: the same parts summed over every run's own time (its waits for
  sub-runs left out): total work across parallel branches, its own figure. It is never
  below the critical path (the path is made of pieces of the runs' own time).

Within one run, overlapping calls count once, by precedence: a model call's phases
before tools (a tool streamed during its call overlaps it), tools before other; the
tool calls that only waited for a joined sub-run (`spawn_call_id`) are waits, not work.
A flat trace's path is the whole run (`graph`: its critical path is its summed
re-timing); `retime.sweep_trace` keeps its totals-only arithmetic for those.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.analysis.calltiming import ModelTiming, TimingFn, retimed_duration
from looplab.analysis.graph import TreeWalk, shift_at, walk_tree
from looplab.traces.schema import ModelCallEvent, ToolCallEvent, TraceEvent

__all__ = ["PARTS", "PathSplit", "TimeSplit", "keep_recorded", "path_split", "without_decode"]

PARTS = ("decode", "reasoning", "ttft", "model_rest", "tools")
"""A run's own time by precedence (what wins where two overlap); the rest is `other`."""


@dataclass(frozen=True)
class TimeSplit:
    """Seconds by part (module docstring); `total_s` is their sum."""

    decode_s: float = 0.0
    reasoning_s: float = 0.0
    ttft_s: float = 0.0
    model_rest_s: float = 0.0
    """Client queue, stream tail, calls without phases."""
    tool_s: float = 0.0
    other_s: float = 0.0

    @property
    def model_s(self) -> float:
        """Model-call time: every phase of a call."""
        return self.decode_s + self.reasoning_s + self.ttft_s + self.model_rest_s

    @property
    def total_s(self) -> float:
        """All of it."""
        return self.model_s + self.tool_s + self.other_s


@dataclass(frozen=True)
class PathSplit:
    """A run tree's time at one model timing: the critical path split and total work."""

    task_s: float
    """The critical path (the task time)."""
    path: TimeSplit
    """What is on the critical path; `path.total_s == task_s`."""
    work: TimeSplit
    """Every run's own time summed (`graph.CriticalPath.summed_s`)."""


def keep_recorded(call: ModelCallEvent) -> ModelTiming | None:
    """The timing that keeps every call as recorded (the split of the run as it ran)."""
    return None


def without_decode(timing: TimingFn) -> TimingFn:
    """`timing` with no visible or hidden decode: what an infinitely fast decode leaves
    (the Amdahl floor; calls the timing keeps keep their recorded time)."""

    def floor(call: ModelCallEvent) -> ModelTiming | None:
        new = timing(call)
        return None if new is None else ModelTiming(ttft_s=new.ttft_s, decode_s=0.0)

    return floor


Piece = tuple[float, float, int]
"""(start, end, part index into PARTS) on the re-timed axis; pieces do not overlap."""


def path_split(events: Sequence[TraceEvent], timing: TimingFn) -> PathSplit:
    """The critical path of `events` re-timed by `timing`, split by part, and total work
    (module docstring). Linear in the events, up to sorting each run's own."""
    walk = walk_tree(events, timing)
    pieces = _pieces(events, walk)
    path = [0.0] * (len(PARTS) + 1)
    for run_id, lo, hi in _path_segments(walk):
        _add(path, pieces.get(run_id, []), lo, hi)
    work = [0.0] * (len(PARTS) + 1)
    for run_id, end in walk.ends.items():
        cursor = walk.starts.get(run_id, 0.0)
        for join in sorted(walk.joins.get(run_id, []), key=lambda j: j.ready_s):
            if join.binding is not None:
                _add(work, pieces.get(run_id, []), cursor, join.ready_s)
                cursor = max(cursor, join.last_s)
        _add(work, pieces.get(run_id, []), cursor, end)
    return PathSplit(walk.ends[None], TimeSplit(*path), TimeSplit(*work))


def _pieces(events: Sequence[TraceEvent], walk: TreeWalk) -> dict[str | None, list[Piece]]:
    """Per run, its own re-timed time as non-overlapping pieces of one part each (placed
    as `placement.place_tree` places the events, without copying them)."""
    marks: dict[str | None, list[tuple[float, int, int]]] = {}
    for event in events:
        steps = walk.shifts.get(event.subrun)
        if steps is None:
            continue
        spans: list[Piece] = []
        if isinstance(event, ModelCallEvent):
            shift = shift_at(steps, event.start)
            spans = _call_pieces(event, walk.timings.get(id(event)), shift)
        elif isinstance(event, ToolCallEvent) and (event.subrun, event.call_id) not in walk.waits:
            start, end = event.start + shift_at(steps, event.start), event.end
            spans = [(start, end + shift_at(steps, end), PARTS.index("tools"))]
        for start, end, part in spans:
            if end > start:
                mine = marks.setdefault(event.subrun, [])
                mine += [(start, 1, part), (end, -1, part)]
    return {run_id: _sweep(points) for run_id, points in marks.items()}


def _call_pieces(call: ModelCallEvent, new: ModelTiming | None, shift: float) -> list[Piece]:
    """A model call's re-timed phases (queue, TTFT + prefill, reasoning, decode, tail),
    placed from its re-timed start (`shift` after its recorded one)."""
    rest = PARTS.index("model_rest")
    start = call.start + shift
    if call.sent is None or call.first_token is None or call.last_token is None:
        end = start + (call.end - call.start if new is None else retimed_duration(call, new))
        return [(start, end, rest)]
    if new is None:  # kept as recorded, moved
        first_any = call.first_token - (call.reasoning_s or 0.0) + shift
        first, last, end = call.first_token + shift, call.last_token + shift, call.end + shift
        sent = call.sent + shift
    else:
        sent = start + (call.sent - call.start)
        first_any = sent + new.ttft_s
        first = first_any + new.reasoning_s
        last = first + new.decode_s
        end = start + retimed_duration(call, new)
    return [
        (start, sent, rest),
        (sent, first_any, PARTS.index("ttft")),
        (first_any, first, PARTS.index("reasoning")),
        (first, last, PARTS.index("decode")),
        (last, end, rest),
    ]


def _sweep(points: list[tuple[float, int, int]]) -> list[Piece]:
    """Overlapping spans -> pieces, each of the highest-precedence part covering it."""
    points.sort()
    counts = [0] * len(PARTS)
    out: list[Piece] = []
    previous: float | None = None
    for t, change, part in points:
        if previous is not None and t > previous:
            top = next((i for i, n in enumerate(counts) if n > 0), None)
            if top is not None:
                out.append((previous, t, top))
        counts[part] += change
        previous = t
    return out


def _add(totals: list[float], pieces: list[Piece], lo: float, hi: float) -> None:
    """Add the parts of [lo, hi] to `totals` (its uncovered time to the last slot, other)."""
    if hi <= lo:
        return
    covered = 0.0
    at = max(0, bisect.bisect_right(pieces, (lo, float("inf"), 0)) - 1)
    while at < len(pieces) and pieces[at][0] < hi:
        start, end, part = pieces[at]
        overlap = min(end, hi) - max(start, lo)
        if overlap > 0:
            totals[part] += overlap
            covered += overlap
        at += 1
    totals[-1] += max(0.0, hi - lo - covered)


def _path_segments(walk: TreeWalk) -> list[tuple[str | None, float, float]]:
    """The critical path as (run, re-timed from, to) pieces of runs' own time: from the
    top-level run's end backwards, each join a sub-run bound jumps into that sub-run."""
    out: list[tuple[str | None, float, float]] = []
    stack: list[tuple[str | None, float, float]] = [(None, 0.0, walk.ends[None])]
    while stack:
        run_id, lo, hi = stack.pop()
        cursor = hi
        for join in sorted(walk.joins.get(run_id, []), key=lambda j: j.last_s, reverse=True):
            child = join.binding
            if child is None or join.last_s > cursor:
                continue
            begin = max(lo, walk.starts[child])
            out.append((run_id, join.last_s, cursor))
            stack.append((child, begin, join.last_s))
            cursor = begin
        out.append((run_id, lo, cursor))
    return out
