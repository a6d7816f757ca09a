"""Per-run views: the per-task table, each run's timeline, and the featured pair (one task
at two speeds)."""

from __future__ import annotations

from dataclasses import dataclass

from looplab.report.model import Bar, RunRecord
from looplab.report.stats import median

__all__ = ["TaskRow", "TimelineView", "featured", "task_rows", "timeline"]


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
            checked = [r for r in runs if r.success is not None]
            solved = f"{sum(1 for r in checked if r.success)}/{len(checked)}" if checked else "?"
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
    )


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
