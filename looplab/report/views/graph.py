"""A run's tree of sub-runs and its critical path at the lab's two profiles (looplab-2).

For a trace with sub-runs (`looplab.traces.schema.SubRunEvent`): the tree (each run's
agent, steps, calls, span, spawning and joining step) and, at `slow-80` and `fast-750`,
the critical path (`looplab.analysis.graph.critical_path`, the task time) split by what
is on it, against the total work (every run's own time summed over parallel branches;
`looplab.analysis.pathsplit`, one figure), with the sub-runs that bind. None for a flat
trace (its critical path is its steps' sum).
"""

from __future__ import annotations

from dataclasses import dataclass

from looplab.analysis.calltiming import model_timing
from looplab.analysis.graph import critical_path, run_tree
from looplab.analysis.pathsplit import path_split
from looplab.latency.presets import resolve_profile
from looplab.latency.timing import TimingModel
from looplab.traces.io import Trace

__all__ = ["PROFILES", "GraphNode", "GraphPoint", "RunGraphView", "run_graph"]

PROFILES = ("slow-80", "fast-750")
"""The profiles a run tree is re-timed at in the report (the lab's pair)."""


@dataclass(frozen=True)
class GraphNode:
    """One (sub-)run of the tree, at its depth."""

    depth: int
    label: str
    steps: int
    model_calls: int
    tool_calls: int
    start_s: float
    end_s: float
    spawned_by: int | None
    joined_by: int | None


@dataclass(frozen=True)
class GraphPoint:
    """The tree re-timed at one profile."""

    profile: str
    critical_s: float
    work_s: float
    model_s: float
    tool_s: float
    summed_s: float
    """Total work: every run's own time summed over branches (`pathsplit`)."""
    binding: str
    path_model_s: float = 0.0
    """On the critical path: model-call time (all phases)."""
    path_tool_s: float = 0.0
    path_other_s: float = 0.0
    work_other_s: float = 0.0
    """Total work that is neither model nor tools (gaps, harness time)."""
    """The binding sub-runs (`a > b`), or `main` when the top-level run's own work binds."""


@dataclass(frozen=True)
class RunGraphView:
    """A structured run's tree and its critical path per profile."""

    nodes: list[GraphNode]
    points: list[GraphPoint]


def run_graph(trace: Trace | None) -> RunGraphView | None:
    """The run tree view of `trace`; None without a trace or without sub-runs."""
    if trace is None or not any(e.subrun is not None for e in trace.events):
        return None
    tree = run_tree(trace.events)
    nodes = [
        GraphNode(
            depth=depth,
            label="main" if node.id is None else f"{node.id} ({node.agent or 'sub-agent'})",
            steps=node.steps,
            model_calls=node.model_calls,
            tool_calls=node.tool_calls,
            start_s=node.start,
            end_s=node.end,
            spawned_by=node.declared.parent_step if node.declared else None,
            joined_by=node.declared.join_step if node.declared else None,
        )
        for depth, node in tree.walk()
    ]
    points = []
    for name in PROFILES:
        timing = model_timing(TimingModel.from_profile(resolve_profile(name, [])))
        path = critical_path(trace.events, timing)
        split = path_split(trace.events, timing)
        points.append(
            GraphPoint(
                profile=name,
                critical_s=path.task_s,
                work_s=split.work.total_s,
                model_s=split.work.model_s,
                tool_s=split.work.tool_s,
                summed_s=split.work.total_s,
                binding=" > ".join(path.binding) or "main",
                path_model_s=split.path.model_s,
                path_tool_s=split.path.tool_s,
                path_other_s=split.path.other_s,
                work_other_s=split.work.other_s,
            )
        )
    return RunGraphView(nodes=nodes, points=points)
