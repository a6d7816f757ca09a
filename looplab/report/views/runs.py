"""Per-run views: the per-task table, each run's timeline, and the featured pair (one task
at two speeds)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from looplab.report.data.lanes import SubRunLane
from looplab.report.data.records import TOOL_BAR_KINDS, Bar, RunRecord
from looplab.stats.intervals import median

__all__ = ["FlameNode", "TaskRow", "TimelineView", "featured", "flame", "task_rows", "timeline"]


@dataclass
class FlameNode:
    """One box of a run's where-the-time-goes (icicle) view: its children share its time."""

    name: str
    value: float
    """Seconds."""
    kind: str
    """Colour key: a `COMPONENTS` key (`ttft`, `tools`, ...) or `run`."""
    children: list[FlameNode] = field(default_factory=list)


@dataclass
class TaskRow:
    """One task of the per-task table: per group (runs, median s, solved, steps, links)."""

    task: str
    cells: dict[str, tuple[int, float, str, float, list[tuple[str, str]]]]
    speedup: float | None


@dataclass
class TimelineView:
    """One run's Gantt bars."""

    anchor: str
    run_id: str
    group: str
    task: str
    task_s: float
    steps: int
    success: bool | None
    bars: list[Bar]
    estimated: bool
    flame: FlameNode | None = None
    """Where the run's time goes (None: not computed)."""
    subruns: list[SubRunLane] = field(default_factory=list)
    """Its sub-runs' lane groups (`data/lanes.py`; empty: a flat run)."""


def task_rows(by_group: dict[str, list[RunRecord]], order: list[str]) -> list[TaskRow]:
    """The per-task table: per group runs, median time, solved, steps and run links."""
    rows = []
    tasks = sorted({r.task for runs in by_group.values() for r in runs})
    for task in tasks:
        cells = {}
        medians = {}
        for group in order:
            runs = sorted((r for r in by_group[group] if r.task == task), key=lambda r: r.run_id)
            if not runs:
                continue
            checked = [r for r in runs if r.outcome != "unknown"]  # a non-zero exit failed
            won = sum(1 for r in checked if r.outcome == "solved")
            solved = f"{won}/{len(checked)}" if checked else "?"
            medians[group] = median([r.task_s for r in runs])
            links = [(r.anchor, f"r{i}") for i, r in enumerate(runs)]
            cells[group] = (
                len(runs),
                medians[group],
                solved,
                median([float(r.steps) for r in runs]),
                links,
            )
        speedup = None
        present = [g for g in order if g in medians]
        if len(present) >= 2 and medians[present[-1]] > 0:
            speedup = medians[present[0]] / medians[present[-1]]
        rows.append(TaskRow(task, cells, speedup))
    return rows


def timeline(run: RunRecord) -> TimelineView:
    """One run's Gantt view."""
    return TimelineView(
        anchor=run.anchor,
        run_id=run.run_id,
        group=run.group,
        task=run.task,
        task_s=run.task_s,
        steps=run.steps,
        success=run.success,
        bars=run.bars,
        estimated=any(b.estimated for b in run.bars),
        flame=flame(run),
        subruns=run.subruns,
    )


_BROWSER_PARTS = {"act": "action", "page_wait": "page-load wait", "observe": "observation"}
"""Flame labels of a browser tool's phases (their kinds are the bar kinds)."""
_MODEL_PARTS = {
    "queue": ("client queue", "overhead"),
    "ttft": ("TTFT + prefill", "ttft"),
    "reasoning": ("reasoning", "reasoning"),
    "decode": ("decode", "decode"),
    "model": ("model (unsplit)", "model"),
}


def flame(run: RunRecord) -> FlameNode:
    """The run's time as model phases, tool time per tool name, and overhead.

    Parallel tool calls overlap: when the calls' durations add up to more than the tools
    phase, each name gets its share of the phase in proportion.
    """
    sums: dict[str, float] = defaultdict(float)
    for bar in run.bars:
        if bar.kind in _MODEL_PARTS:
            sums[bar.kind] += bar.end - bar.start
    model = FlameNode("model", run.model_s, "modelcall")
    for kind, (label, color) in _MODEL_PARTS.items():
        if sums[kind] > 0:
            model.children.append(FlameNode(label, sums[kind], color))
    rest = run.model_s - sum(c.value for c in model.children)
    if rest > 1e-3 and model.children:
        model.children.append(FlameNode("retries, stream tail", rest, "overhead"))
    by_name: dict[str, float] = defaultdict(float)
    phases: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for bar in run.bars:
        if bar.kind in TOOL_BAR_KINDS:
            by_name[bar.tool] += bar.end - bar.start
            if bar.kind != "tool":
                phases[bar.tool][bar.kind] += bar.end - bar.start
    scale = min(1.0, run.tool_s / total) if (total := sum(by_name.values())) > 0 else 1.0
    tools = FlameNode("tools", run.tool_s, "tools")
    for name in sorted(by_name, key=lambda n: -by_name[n]):
        node = FlameNode(name, by_name[name] * scale, "tools")
        for kind, seconds in phases[name].items():
            node.children.append(FlameNode(_BROWSER_PARTS[kind], seconds * scale, kind))
        tools.children.append(node)
    parts = [
        n for n in (model, tools, FlameNode("overhead", run.overhead_s, "overhead")) if n.value
    ]
    return FlameNode(run.task, run.task_s, "run", parts)


def featured(by_group: dict[str, list[RunRecord]], order: list[str]) -> list[TimelineView]:
    """One task at two speeds: the pair of groups furthest apart in speed that share a task,
    and of their shared tasks the one with the most steps (compounding is most visible)."""
    if not order:
        return []
    pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1 :]]
    pairs.sort(key=lambda p: order.index(p[0]) - order.index(p[1]))
    for slow_label, fast_label in pairs:
        slow, fast = by_group[slow_label], by_group[fast_label]
        shared = {r.task for r in slow} & {r.task for r in fast}
        if not shared:
            continue
        task = max(shared, key=lambda t: (median([float(r.steps) for r in slow if r.task == t]), t))
        return [
            timeline(min((r for r in runs if r.task == task), key=lambda r: r.run_id))
            for runs in (slow, fast)
        ]
    runs = by_group[order[0]]
    return [timeline(max(runs, key=lambda r: (r.steps, r.run_id)))]
