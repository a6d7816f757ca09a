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
`retime_events`); `summed_s` is that sum over every run's calls, as if the tree were one
sequence, and `work_s` is the model and tool seconds summed (parallel calls each count).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.analysis.calltiming import TimingFn, retimed_duration
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    StepEvent,
    SubRunEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = ["CriticalPath", "RunNode", "critical_path", "run_tree"]


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
        """This node and its descendants, depth-first, with their depth."""
        out = [(depth, self)]
        for child in sorted(self.children, key=lambda c: c.start):
            out.extend(child.walk(depth + 1))
        return out


def run_tree(events: Sequence[TraceEvent]) -> RunNode:
    """The tree of a run's sub-runs (a flat trace: one node, no children).

    A sub-run named by events but never declared hangs under the top-level run; a
    declared parent that does not exist is read as the top-level run."""
    ids = {e.subrun for e in events if e.subrun is not None}
    declared = {e.subrun: e for e in events if isinstance(e, SubRunEvent) and e.subrun}
    nodes: dict[str | None, RunNode] = {}
    for run_id in [None, *sorted(ids)]:
        own = [e for e in events if e.subrun == run_id and not isinstance(e, SubRunEvent)]
        decl = declared.get(run_id) if run_id is not None else None
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
    for run_id in sorted(ids):
        decl = declared.get(run_id)
        parent = decl.parent if decl is not None and decl.parent in nodes else None
        nodes[parent].children.append(nodes[run_id])
    return nodes[None]


@dataclass(frozen=True)
class CriticalPath:
    """A run tree's task time at one model timing."""

    task_s: float
    """The critical path: the top-level run's re-timed end."""
    summed_s: float
    """The summed re-timing: recorded end plus every call's change, as if sequential."""
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
        """Total work: model plus tool seconds summed."""
        return self.model_s + self.tool_s


def _join_times(events: Sequence[TraceEvent], run_id: str | None) -> dict[int, float]:
    """Recorded start of each step of one run: its step event's, else its first event's."""
    first: dict[int, float] = {}
    stepped: dict[int, float] = {}
    for e in events:
        if e.subrun != run_id or e.step is None or isinstance(e, SubRunEvent):
            continue
        if isinstance(e, StepEvent):
            stepped[e.step] = e.start
        first[e.step] = min(first.get(e.step, e.start), e.start)
    return {**first, **stepped}


def _waits(events: Sequence[TraceEvent]) -> set[tuple[str | None, str | None]]:
    """(run, call id) of the tool calls that only waited for a joined sub-run."""
    return {
        (e.parent, e.spawn_call_id)
        for e in events
        if isinstance(e, SubRunEvent) and e.spawn_call_id and e.join_step is not None
    }


def _deltas(
    events: Sequence[TraceEvent], timing: TimingFn
) -> tuple[dict[str | None, list[tuple[float, float]]], float, float]:
    """Per run, (call end, change in duration) of its model calls; the re-timed model
    seconds summed; the summed change."""
    deltas: dict[str | None, list[tuple[float, float]]] = {}
    model_s = total = 0.0
    for call in (e for e in events if isinstance(e, ModelCallEvent)):
        new = timing(call)
        recorded = call.end - call.start
        duration = recorded if new is None else retimed_duration(call, new)
        model_s += duration
        total += duration - recorded
        deltas.setdefault(call.subrun, []).append((call.end, duration - recorded))
    return deltas, model_s, total


def _work_ends(
    events: Sequence[TraceEvent], run_id: str | None, waits: set[tuple[str | None, str | None]]
) -> list[float]:
    """Ends of a run's own work: not step summaries, not waits on joined sub-runs."""
    return sorted(
        e.end
        for e in events
        if e.subrun == run_id
        and not isinstance(e, StepEvent | SubRunEvent)
        and not (isinstance(e, ToolCallEvent) and (run_id, e.call_id) in waits)
    )


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
            then on) steps (`retime.retime_tree` places the events by them).
    """
    tree = run_tree(events)
    waits = _waits(events)
    deltas, model_s, total_delta = _deltas(events, timing)
    tool_s = sum(
        e.end - e.start
        for e in events
        if isinstance(e, ToolCallEvent) and (e.subrun, e.call_id) not in waits
    )
    binding: dict[str | None, tuple[str, ...]] = {}
    shifts = shifts if shifts is not None else {}

    def run(node: RunNode, shift0: float) -> float:
        """Walk one run in time order from shift `shift0`; return its shift at its end."""
        own = _work_ends(events, node.id, waits)
        starts = _join_times(events, node.id)
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
        shift = shift0
        steps = shifts.setdefault(node.id, [(float("-inf"), shift0)])
        path: tuple[str, ...] = ()
        ended: dict[str | None, float] = {}
        for t, order, item in sorted(points, key=lambda p: (p[0], p[1])):
            if isinstance(item, float):
                shift += item
            elif order == 2 and isinstance(item, RunNode):
                ended[item.id] = item.end + run(item, shift)
            else:
                ready = max((x for x in own if x <= t), default=node.start)
                joined = joins[t]
                last = max([ready, *(c.end for c in joined)])
                new_ready = ready + shift
                latest = max(joined, key=lambda c: ended.get(c.id, c.end))
                new_last = max(new_ready, *(ended.get(c.id, c.end) for c in joined))
                if new_last > new_ready:
                    path = (latest.id or "", *binding.get(latest.id, ()))
                else:
                    path = ()
                shift = new_last + (t - last) - t
            steps.append((t, shift))
        binding[node.id] = path
        return shift

    end_shift = run(tree, 0.0)
    ends = [e for e in events if isinstance(e, RunEndEvent)]
    recorded_end = ends[-1].end if ends else max((e.end for e in events), default=0.0)
    return CriticalPath(
        task_s=recorded_end + end_shift,
        summed_s=recorded_end + total_delta,
        model_s=model_s,
        tool_s=tool_s,
        binding=binding[None],
        subruns=len(tree.walk()) - 1,
    )
