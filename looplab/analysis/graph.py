"""Run graphs: a run's tree of sub-runs and its task time as a critical path.

A `looplab-2` trace (`looplab.traces.schema`) may hold sub-runs: sub-agents spawned by a
step of their parent and joined by a later one. Re-timed at another profile, the task's
time is the critical path through that tree, not the sum of its steps.

The re-timing is the plain time warp of `looplab.analysis.retime` (one model-call timing
function, `TimingFn`), applied per (sub-)run: each run has its own shift, a step function
of recorded time that grows by each of its own model calls' change in duration at the
call's end. Two rules tie the runs together:

- spawn: a sub-run starts with its parent's shift at the sub-run's recorded start;
- join: the parent's `join_step` starts at the later of its own re-timed ready time (the
  end of its last own work before the join: not its step summaries, not the tool calls
  that only waited for a joined sub-run, `SubRunEvent.spawn_call_id`) and its joined
  sub-runs' re-timed ends, plus the recorded gap after the later of them; the parent's
  shift from there on follows (it falls when the sub-runs got faster). Unjoined
  sub-runs do not hold the parent up.

The task time is the top-level run's warped end. With no sub-runs this is exactly the
recorded end plus every call's change, i.e. today's summed re-timing (`sweep_trace`,
`retime_events`). Every walk here is iterative and linear in the events (an explicit
stack, one pass to index the events by run): a chain of thousands of nested sub-runs or
a fan of ten thousand costs what a flat trace of as many events does
(docs/reliability.md, "Sub-run structure"). Where the critical-path time goes (model,
tools, other) and the total work summed over branches: `looplab.analysis.pathsplit`.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.analysis.calltiming import ModelTiming, TimingFn, retimed_duration
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    StepEvent,
    SubRunEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = [
    "CriticalPath",
    "Join",
    "RunNode",
    "TreeWalk",
    "critical_path",
    "run_tree",
    "shift_at",
    "walk_tree",
]


@dataclass
class RunNode:
    """One (sub-)run of a run tree: `id` None is the top-level run."""

    id: str | None
    start: float
    end: float
    declared: SubRunEvent | None = None
    children: list[RunNode] = field(default_factory=list)
    steps: int = 0
    model_calls: int = 0
    tool_calls: int = 0

    @property
    def agent(self) -> str | None:
        """The sub-agent's name, when declared."""
        return self.declared.agent if self.declared else None

    def walk(self, depth: int = 0) -> list[tuple[int, RunNode]]:
        """This node and its descendants, depth-first (children by start), with their
        depth; iterative, so a chain of any depth walks."""
        out: list[tuple[int, RunNode]] = []
        stack = [(depth, self)]
        while stack:
            level, node = stack.pop()
            out.append((level, node))
            kids = sorted(node.children, key=lambda c: c.start)
            stack.extend((level + 1, child) for child in reversed(kids))
        return out


class _Index:
    """A run's events grouped by (sub-)run in one pass (`own`: all but `subrun` events)."""

    def __init__(self, events: Sequence[TraceEvent]) -> None:
        self.own: dict[str | None, list[TraceEvent]] = {None: []}
        self.declared: dict[str, SubRunEvent] = {}
        for e in events:
            if isinstance(e, SubRunEvent):
                if e.subrun is not None:
                    self.declared.setdefault(e.subrun, e)
                    self.own.setdefault(e.subrun, [])
                continue
            self.own.setdefault(e.subrun, []).append(e)
        self.waits: set[tuple[str | None, str | None]] = {
            (e.parent, e.spawn_call_id)
            for e in self.declared.values()
            if e.spawn_call_id and e.join_step is not None
        }

    def work_ends(self, run_id: str | None) -> list[float]:
        """Ends of a run's own work, sorted: not step summaries, not waits on sub-runs."""
        return sorted(
            e.end
            for e in self.own.get(run_id, [])
            if not isinstance(e, StepEvent)
            and not (isinstance(e, ToolCallEvent) and (run_id, e.call_id) in self.waits)
        )

    def step_starts(self, run_id: str | None) -> dict[int, float]:
        """Recorded start of each step of one run: its step event's, else its first
        event's."""
        first: dict[int, float] = {}
        stepped: dict[int, float] = {}
        for e in self.own.get(run_id, []):
            if e.step is None:
                continue
            if isinstance(e, StepEvent):
                stepped[e.step] = e.start
            first[e.step] = min(first.get(e.step, e.start), e.start)
        return {**first, **stepped}


def _tree(index: _Index) -> RunNode:
    nodes: dict[str | None, RunNode] = {}
    ids = sorted(k for k in index.own if k is not None)
    for run_id in [None, *ids]:
        own = index.own.get(run_id, [])
        decl = index.declared.get(run_id) if run_id is not None else None
        starts = [e.start for e in own] + ([decl.start] if decl else [])
        ends = [e.end for e in own] + ([decl.end] if decl else [])
        nodes[run_id] = RunNode(
            id=run_id,
            start=min(starts, default=0.0),
            end=max(ends, default=0.0),
            declared=decl,
            steps=sum(isinstance(e, StepEvent) for e in own),
            model_calls=sum(isinstance(e, ModelCallEvent) for e in own),
            tool_calls=sum(isinstance(e, ToolCallEvent) for e in own),
        )
    for run_id in ids:
        decl = index.declared.get(run_id)
        parent = decl.parent if decl is not None and decl.parent in nodes else None
        nodes[parent].children.append(nodes[run_id])
    return nodes[None]


def run_tree(events: Sequence[TraceEvent]) -> RunNode:
    """The tree of a run's sub-runs (a flat trace: one node, no children).

    A sub-run named by events but never declared hangs under the top-level run; a
    declared parent that does not exist is read as the top-level run (traces read from
    disk are refused before that: `looplab.traces.structure`)."""
    return _tree(_Index(events))


@dataclass(frozen=True)
class Join:
    """One join of a run, re-timed: its step waited from `ready_s` (the run's own work
    done) to `last_s` (its latest joined sub-run's end) when `binding` names that sub-run;
    `ready_s == last_s` and `binding` None when the run's own work was the later."""

    ready_s: float
    last_s: float
    binding: str | None


@dataclass
class TreeWalk:
    """A run tree walked at one model timing (`walk_tree`): per run, its shift steps,
    re-timed start and end, and its joins; plus the totals."""

    tree: RunNode
    shifts: dict[str | None, list[tuple[float, float]]]
    """Per run: (recorded time, shift from then on) steps, in time order."""
    starts: dict[str | None, float]
    """Per run: its re-timed start (the top-level run: 0, the run origin)."""
    ends: dict[str | None, float]
    """Per run: its re-timed end (the top-level run: the task time)."""
    joins: dict[str | None, list[Join]]
    binding: tuple[str, ...]
    model_s: float
    tool_s: float
    waits: set[tuple[str | None, str | None]]
    """(run, call id) of the tool calls that only waited for a joined sub-run."""
    timings: dict[int, ModelTiming | None]
    """Each model call's new timing, by `id(call)` (None: kept as recorded)."""


@dataclass(frozen=True)
class CriticalPath:
    """A run tree's task time at one model timing."""

    task_s: float
    """The critical path: the top-level run's re-timed end."""
    summed_s: float
    """Total work: every run's own re-timed time summed, as if the tree ran as one
    sequence (model, tools and the gaps between them; a run's waits for its sub-runs
    left out). A flat trace's equals its task time; it never falls below `task_s`."""
    model_s: float
    """Model seconds summed over every call, re-timed."""
    tool_s: float
    """Tool seconds summed over every tool call (parallel calls each count; calls that
    only waited for a joined sub-run do not)."""
    binding: tuple[str, ...]
    """The sub-runs that bind the top-level run's last join, outermost first (the latest
    joined sub-run, then the one that bound its last join, ...); empty: the top-level
    run's own work binds it (or it has no joins)."""
    subruns: int
    """Number of sub-runs in the tree."""

    @property
    def work_s(self) -> float:
        """Model plus tool seconds summed (parallel calls each count)."""
        return self.model_s + self.tool_s


def _deltas(
    events: Sequence[TraceEvent], timing: TimingFn, timings: dict[int, ModelTiming | None]
) -> tuple[dict[str | None, list[tuple[float, float]]], float]:
    """Per run, (call end, change in duration) of its model calls; the re-timed model
    seconds summed. `timings` is filled with each call's new timing by `id(call)`."""
    deltas: dict[str | None, list[tuple[float, float]]] = {}
    model_s = 0.0
    for call in (e for e in events if isinstance(e, ModelCallEvent)):
        new = timings[id(call)] = timing(call)
        recorded = call.end - call.start
        duration = recorded if new is None else retimed_duration(call, new)
        model_s += duration
        deltas.setdefault(call.subrun, []).append((call.end, duration - recorded))
    return deltas, model_s


@dataclass
class _Frame:
    """One run being walked (an explicit stack replaces recursion)."""

    node: RunNode
    points: list[tuple[float, int, float | RunNode]]
    joins: dict[float, list[RunNode]]
    own: list[float]
    shift: float
    steps: list[tuple[float, float]]
    at: int = 0
    path: tuple[str, ...] = ()
    ended: dict[str | None, float] = field(default_factory=dict)


def _open(
    node: RunNode,
    shift0: float,
    index: _Index,
    deltas: dict[str | None, list[tuple[float, float]]],
) -> _Frame:
    """A run's frame: its time-ordered points (call changes, spawns, joins)."""
    starts = index.step_starts(node.id)
    joins: dict[float, list[RunNode]] = {}
    points: list[tuple[float, int, float | RunNode]] = [
        (t, 0, d) for t, d in deltas.get(node.id, [])
    ]
    for child in node.children:
        points.append((child.start, 2, child))
        join = child.declared.join_step if child.declared else None
        if join is not None and join in starts:
            joins.setdefault(starts[join], []).append(child)
    points += [(t, 1, node) for t in joins]
    points.sort(key=lambda p: (p[0], p[1]))
    steps = [(float("-inf"), shift0)]
    return _Frame(node, points, joins, index.work_ends(node.id), shift0, steps)


def walk_tree(events: Sequence[TraceEvent], timing: TimingFn) -> TreeWalk:
    """Walk a run's tree of sub-runs with model calls re-timed by `timing` (module doc).

    Args:
        events: one run's events (any order; times on the run axis).
        timing: the re-timing of one model call (`calltiming.model_timing`), None to
            keep its recorded timing.
    """
    index = _Index(events)
    tree = _tree(index)
    timings: dict[int, ModelTiming | None] = {}
    deltas, model_s = _deltas(events, timing, timings)
    tool_s = sum(
        e.end - e.start
        for e in events
        if isinstance(e, ToolCallEvent) and (e.subrun, e.call_id) not in index.waits
    )
    walk = TreeWalk(tree, {}, {}, {}, {}, (), model_s, tool_s, index.waits, timings)
    binding: dict[str | None, tuple[str, ...]] = {}
    stack = [_open(tree, 0.0, index, deltas)]
    walk.starts[None] = 0.0
    while stack:
        frame = stack[-1]
        node = frame.node
        if frame.at == len(frame.points):
            stack.pop()
            walk.shifts[node.id] = frame.steps
            walk.ends[node.id] = node.end + frame.shift
            binding[node.id] = frame.path
            if stack:
                stack[-1].ended[node.id] = node.end + frame.shift
            continue
        t, order, item = frame.points[frame.at]
        frame.at += 1
        if isinstance(item, float):
            frame.shift += item
        elif order == 2 and isinstance(item, RunNode):
            walk.starts[item.id] = item.start + frame.shift
            stack.append(_open(item, frame.shift, index, deltas))
            frame.steps.append((t, frame.shift))
            continue
        else:
            frame.shift = _join(frame, t, binding, walk)
        frame.steps.append((t, frame.shift))
    ends = [e for e in events if isinstance(e, RunEndEvent)]
    recorded_end = ends[-1].end if ends else max((e.end for e in events), default=0.0)
    walk.ends[None] = recorded_end + walk.ends[None] - tree.end
    walk.binding = binding[None]
    return walk


def _join(
    frame: _Frame, t: float, binding: dict[str | None, tuple[str, ...]], walk: TreeWalk
) -> float:
    """The run's shift after its join at recorded time `t` (module doc: join)."""
    node = frame.node
    at = bisect.bisect_right(frame.own, t)
    ready = frame.own[at - 1] if at else node.start
    joined = frame.joins[t]
    last = max([ready, *(c.end for c in joined)])
    new_ready = ready + frame.shift
    latest = max(joined, key=lambda c: frame.ended.get(c.id, c.end))
    new_last = max(new_ready, *(frame.ended.get(c.id, c.end) for c in joined))
    bound = new_last > new_ready
    frame.path = (latest.id or "", *binding.get(latest.id, ())) if bound else ()
    walk.joins.setdefault(node.id, []).append(
        Join(new_ready, new_last, latest.id if bound else None)
    )
    return new_last + (t - last) - t


def shift_at(steps: list[tuple[float, float]], t: float) -> float:
    """A run's shift at recorded time `t` (the last step at or before it; `steps` in
    time order, as `TreeWalk.shifts` holds them)."""
    at = bisect.bisect_right(steps, (t, float("inf")))
    return steps[at - 1][1] if at else steps[0][1]


def critical_path(
    events: Sequence[TraceEvent],
    timing: TimingFn,
    shifts: dict[str | None, list[tuple[float, float]]] | None = None,
) -> CriticalPath:
    """The task time of a run's tree of sub-runs with model calls re-timed by `timing`.

    Args:
        events: one run's events (any order; times on the run axis).
        timing: the re-timing of one model call (`calltiming.model_timing`), None to
            keep its recorded timing.
        shifts: filled, when given, with each run's shift as (recorded time, shift from
            then on) steps (`placement.retime_tree` places the events by them).
    """
    walk = walk_tree(events, timing)
    if shifts is not None:
        shifts.update(walk.shifts)
    return CriticalPath(
        task_s=walk.ends[None],
        summed_s=summed_time(walk),
        model_s=walk.model_s,
        tool_s=walk.tool_s,
        binding=walk.binding,
        subruns=len(walk.shifts) - 1,
    )


def summed_time(walk: TreeWalk) -> float:
    """Every run's own re-timed time summed (`CriticalPath.summed_s`): its span less the
    time it waited at its joins for sub-runs that bound them."""
    total = 0.0
    for run_id, end in walk.ends.items():
        waited = sum(j.last_s - j.ready_s for j in walk.joins.get(run_id, []))
        total += end - walk.starts.get(run_id, 0.0) - waited
    return total
