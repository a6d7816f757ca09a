"""A run's sub-runs as timeline lane groups (looplab-2 traces with sub-agents).

Each sub-run gets its own lanes (its model calls, its tool calls, parallel tool calls on
further lanes), named after it (`explore-1 (Explore) · model`) and indented under its
parent by depth; lanes are ordered by the run tree (`looplab.analysis.graph.run_tree`,
depth first, children by start). A sub-run's spawn is its start; its join is the start of
the parent's `join_step` (the step that consumed its result), else its end. The critical
path at the recorded timing is `analysis.graph.critical_path` with every call kept: the
sub-runs it names bind the run's end (`critical`).
"""

from __future__ import annotations

from dataclasses import dataclass

from looplab.analysis.graph import critical_path, run_tree
from looplab.traces.schema import SubRunEvent, TraceEvent

__all__ = ["INDENT", "SubRunLane", "lane_name", "subrun_lanes"]

INDENT = "\u00a0\u00a0"
"""One level of indentation in a lane's label (non-breaking: SVG text keeps it)."""


@dataclass(frozen=True)
class SubRunLane:
    """One sub-run's lane group."""

    id: str
    label: str
    """`<agent> <id>`, indented by depth, with a tree mark: `  └ lint lint-1` (ids over 12
    characters cut to 8 and `…`)."""
    name: str
    """`<agent> <id>` without indentation and mark."""
    agent: str | None
    """The sub-agent's name or type, when declared."""
    order: int
    """Position in the run tree (1 = the first sub-run; 0 is the top-level run)."""
    depth: int
    parent: str | None
    parent_order: int
    start: float
    end: float
    spawn_step: int | None
    join_step: int | None
    join_at: float | None
    """When the parent's joining step started (None: never joined)."""
    critical: bool
    """On the critical path at the recorded timing (it binds the run's end)."""


def lane_name(prefix: str, lane: str) -> str:
    """`lane` (`model`, `tools`, `tools 2`) of the top-level run, or of a sub-run whose
    lane label is `prefix`."""
    return f"{prefix} · {lane}" if prefix else lane


def subrun_lanes(events: list[TraceEvent]) -> list[SubRunLane]:
    """The sub-runs of a run in tree order (empty for a flat run)."""
    if not any(e.subrun is not None for e in events):
        return []
    tree = run_tree(events)
    walked = tree.walk()
    order = {node.id: i for i, (_, node) in enumerate(walked)}
    binding = set(critical_path(events, lambda call: None).binding)
    starts = _step_starts(events)
    out: list[SubRunLane] = []
    for depth, node in walked:
        if node.id is None:
            continue
        declared: SubRunEvent | None = node.declared
        parent = declared.parent if declared is not None and declared.parent in order else None
        join = declared.join_step if declared is not None else None
        short = node.id if len(node.id) <= 12 else node.id[:8] + "…"
        name = f"{node.agent} {short}" if node.agent else short
        out.append(
            SubRunLane(
                id=node.id,
                label=INDENT * (depth - 1) + "└ " + name,
                name=name,
                agent=node.agent,
                order=order[node.id],
                depth=depth,
                parent=parent,
                parent_order=order[parent],
                start=node.start,
                end=node.end,
                spawn_step=declared.parent_step if declared is not None else None,
                join_step=join,
                join_at=starts.get((parent, join)) if join is not None else None,
                critical=node.id in binding,
            )
        )
    return out


def _step_starts(events: list[TraceEvent]) -> dict[tuple[str | None, int | None], float]:
    """When each step of each run started (its earliest event), by (run, step)."""
    starts: dict[tuple[str | None, int | None], float] = {}
    for e in events:
        if not isinstance(e, SubRunEvent):
            key = (e.subrun, e.step)
            starts[key] = min(starts.get(key, e.start), e.start)
    return starts
