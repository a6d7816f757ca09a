"""The report model: every view's numbers, computed from run records (no rendering here).

Groups are the compared backends (profiles), ordered slowest first; the slowest is the
reference every speedup is measured against. `build_model` returns plain dataclasses
that `render.py` draws and `asdict` serializes (the JSON embedded in each report).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.report.model import RunRecord
from looplab.report.stats import CurvePoint, band, bootstrap_speedup, cdf_points, median, quantile
from looplab.report.views_runs import TaskRow, TimelineView, featured, task_rows, timeline
from looplab.report.views_steps import SlowdownRow, StepLatencyView, slowdown_rows, step_latency
from looplab.report.views_sweep import SweepView, sweep_view

__all__ = [
    "COMPONENTS",
    "PALETTE",
    "FamilyView",
    "GroupView",
    "ReportModel",
    "SweepView",
    "TaskRow",
    "TimelineView",
    "build_model",
]

PALETTE = ["#D55E00", "#0072B2", "#CC79A7", "#009E73", "#56B4E9", "#E69F00", "#000000"]
"""Profile colours (Okabe-Ito, colour-blind safe), assigned slowest first."""

FIXED_COLORS = {"slow-80": "#D55E00", "fast-750": "#0072B2"}
"""The mission's pair keeps its colours in every report (vermillion slow, blue fast)."""

COMPONENTS: dict[str, tuple[str, str]] = {
    "ttft": ("TTFT + prefill", "#8E6BBF"),
    "reasoning": ("reasoning (hidden decode)", "#B8D8A8"),
    "decode": ("decode", "#3B9C6E"),
    "model": ("model call (not split)", "#7FA7C9"),
    "tools": ("tools", "#E8A33D"),
    "overhead": ("harness overhead", "#9A9A9A"),
    "sandbox": ("sandbox start (outside task time)", "#D0CCC4"),
}
"""Where-the-time-goes components: key -> (label, colour); timelines use the same."""


@dataclass
class GroupView:
    """Headline numbers of one compared group (a backend profile)."""

    label: str
    color: str
    decode_tps: float | None
    source: str
    runs: int
    solved: int
    checked: int
    median_task_s: float
    p90_task_s: float
    median_steps: float
    model_share: float
    tool_share: float
    overhead_share: float
    speedup: float
    ci: tuple[float, float] | None
    reference: bool
    estimated: list[str]


@dataclass
class FamilyView:
    """Task time against the parameter of a parametric task family."""

    name: str
    series: dict[str, list[CurvePoint]]


@dataclass
class ReportModel:
    """Everything a report shows."""

    title: str
    inputs: list[str]
    runs: int
    groups: list[GroupView]
    sentence: str
    compounding: dict[str, list[CurvePoint]]
    families: list[FamilyView]
    length_points: dict[str, list[tuple[float, float, str]]]
    """Per group: (steps, task s, task) of every run (task time vs task length)."""
    breakdown_groups: dict[str, dict[str, float]]
    breakdown_tasks: list[tuple[str, str, dict[str, float]]]
    sweep: SweepView | None
    step_latency: StepLatencyView | None
    """Model latency per step against step index and context length."""
    slowdown: list[SlowdownRow]
    """Task time split into "more steps" and "slower steps" (context growth)."""
    distributions: dict[str, dict[str, list[tuple[float, float]]]]
    tasks: list[TaskRow]
    featured: list[TimelineView]
    timelines: list[TimelineView]
    notes: list[str] = field(default_factory=list)

    def color(self, group: str) -> str:
        """The colour of a group (the same in every view)."""
        return next((g.color for g in self.groups if g.label == group), "#666666")


def headline(records: Sequence[RunRecord]) -> list[GroupView]:
    """Per group, slowest first: median/p90 task time, solved, steps, split, speedup + CI.

    The summary `looplab run` prints and the report's headline table.
    """
    by_group, order = _grouped(records)
    return _groups(by_group, order) if order else []


def _grouped(records: Sequence[RunRecord]) -> tuple[dict[str, list[RunRecord]], list[str]]:
    """Runs by group; groups ordered by decode rate, lowest (the reference) first.

    The reference is the experimental factor, never the noise: groups are ordered by their
    profile's decode rate when every group has one, else slowest median task time first.
    """
    by_group: dict[str, list[RunRecord]] = defaultdict(list)
    for record in records:
        by_group[record.group].append(record)
    rates = {g: by_group[g][0].decode_tps for g in by_group}
    if all(rate for rate in rates.values()):
        order = sorted(by_group, key=lambda g: (rates[g] or 0.0, g))
    else:
        order = sorted(by_group, key=lambda g: -median([r.task_s for r in by_group[g]]))
    return by_group, order


def build_model(records: Sequence[RunRecord], title: str, inputs: Sequence[str]) -> ReportModel:
    """Compute every view from complete runs (`RunRecord.group` says how they compare)."""
    by_group, order = _grouped(records)
    groups = _groups(by_group, order)
    timelines = [timeline(r) for r in records]
    return ReportModel(
        title=title,
        inputs=list(inputs),
        runs=len(records),
        groups=groups,
        sentence=headline_sentence(groups),
        compounding={g: _compounding(by_group[g]) for g in order},
        families=_families(by_group, order),
        length_points={g: [(float(r.steps), r.task_s, r.task) for r in by_group[g]] for g in order},
        breakdown_groups={g: _mean_components(by_group[g]) for g in order},
        breakdown_tasks=_task_breakdown(by_group, order),
        sweep=sweep_view(by_group, groups),
        step_latency=step_latency(by_group, order),
        slowdown=slowdown_rows(by_group, order),
        distributions={
            "ttft": {g: cdf_points([v for r in by_group[g] for v in r.ttfts]) for g in order},
            "decode": {g: cdf_points([v for r in by_group[g] for v in r.decodes]) for g in order},
            "tool": {g: cdf_points([v for r in by_group[g] for v in r.tool_times]) for g in order},
        },
        tasks=task_rows(by_group, order),
        featured=featured(by_group, order),
        timelines=sorted(timelines, key=lambda t: (t.task, order.index(t.group), t.run_id)),
        notes=_notes(records),
    )


def components(record: RunRecord) -> dict[str, float]:
    """A run's time split into the `COMPONENTS` (seconds; sandbox start apart)."""
    parts = {key: 0.0 for key in COMPONENTS}
    if record.ttft_s is not None and record.decode_s is not None:
        parts["ttft"] = record.ttft_s
        parts["reasoning"] = record.reasoning_s
        parts["decode"] = record.decode_s
        # client queueing, the stream's tail and failed attempts are harness-side time
        model_rest = max(0.0, record.model_s - record.ttft_s - record.reasoning_s - record.decode_s)
    else:
        parts["model"] = record.model_s
        model_rest = 0.0
    parts["tools"] = record.tool_s
    parts["overhead"] = record.overhead_s + model_rest
    parts["sandbox"] = record.sandbox_start_s or 0.0
    return parts


def headline_sentence(groups: Sequence[GroupView]) -> str:
    """`9.4x faster decode -> 1.7x faster tasks (41% less time)`, fastest vs slowest."""
    if len(groups) < 2:
        return ""
    slow, fast = groups[0], groups[-1]
    gain = fast.speedup
    less = 1 - 1 / gain if gain > 0 else math.nan
    ci = f" [95% CI {fast.ci[0]:.2f}-{fast.ci[1]:.2f}x]" if fast.ci and _finite(fast.ci) else ""
    tasks = f"{gain:.1f}x faster tasks{ci} ({less:.0%} less time)"
    if fast.decode_tps and slow.decode_tps:
        ratio = fast.decode_tps / slow.decode_tps
        return (
            f"{ratio:.1f}x faster decode -> {tasks}: {fast.label} "
            f"({fast.decode_tps:g} tok/s) against {slow.label} ({slow.decode_tps:g} tok/s), "
            "median task time."
        )
    return f"{fast.label} against {slow.label}: {tasks}, median task time."


def _finite(pair: tuple[float, float]) -> bool:
    return all(math.isfinite(v) for v in pair)


def _groups(by_group: dict[str, list[RunRecord]], order: list[str]) -> list[GroupView]:
    reference = by_group[order[0]]
    reference_by_task = _times_by_task(reference)
    reference_median = median([r.task_s for r in reference])
    views: list[GroupView] = []
    colors = _colors(by_group, order)
    for index, label in enumerate(order):
        runs = by_group[label]
        times = [r.task_s for r in runs]
        total = sum(times) or 1.0
        checked = [r for r in runs if r.success is not None]
        group_median = median(times)
        ci = None
        if index > 0:
            ci = bootstrap_speedup(reference_by_task, _times_by_task(runs))
        rates = {r.decode_tps for r in runs}
        views.append(
            GroupView(
                label=label,
                color=colors[label],
                decode_tps=rates.pop() if len(rates) == 1 else None,
                source=runs[0].source,
                runs=len(runs),
                solved=sum(1 for r in checked if r.success),
                checked=len(checked),
                median_task_s=group_median,
                p90_task_s=quantile(times, 0.9),
                median_steps=median([float(r.steps) for r in runs]),
                model_share=sum(r.model_s for r in runs) / total,
                tool_share=sum(r.tool_s for r in runs) / total,
                overhead_share=sum(r.overhead_s for r in runs) / total,
                speedup=reference_median / group_median if group_median > 0 else math.nan,
                ci=ci,
                reference=index == 0,
                estimated=sorted({e for r in runs for e in r.estimated}),
            )
        )
    return views


def _colors(by_group: dict[str, list[RunRecord]], order: list[str]) -> dict[str, str]:
    colors: dict[str, str] = {}
    for label in order:
        fixed = FIXED_COLORS.get(by_group[label][0].profile)
        if fixed is not None and fixed not in colors.values():
            colors[label] = fixed
    free = [c for c in PALETTE if c not in colors.values()]
    for index, label in enumerate(g for g in order if g not in colors):
        colors[label] = free[index % len(free)] if free else PALETTE[index % len(PALETTE)]
    return colors


def _times_by_task(runs: Sequence[RunRecord]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        out[run.task].append(run.task_s)
    return dict(out)


def _compounding(runs: list[RunRecord]) -> list[CurvePoint]:
    depth = max((len(r.step_ends) for r in runs), default=0)
    # a median over fewer than a quarter of the runs says more about one task than the group
    floor = 1 if len(runs) < 4 else max(2, len(runs) // 4)
    points = [CurvePoint(0, 0, 0, 0, len(runs))]
    for step in range(depth):
        values = [r.step_ends[step] for r in runs if len(r.step_ends) > step]
        if len(values) < floor:
            break
        points.append(band(step + 1, values))
    return points


def _families(by_group: dict[str, list[RunRecord]], order: list[str]) -> list[FamilyView]:
    sizes: dict[str, set[int]] = defaultdict(set)
    for runs in by_group.values():
        for run in runs:
            if run.family is not None and run.size is not None:
                sizes[run.family].add(run.size)
    views = []
    for family in sorted(f for f, s in sizes.items() if len(s) >= 2):
        series: dict[str, list[CurvePoint]] = {}
        for group in order:
            by_size: dict[int, list[float]] = defaultdict(list)
            for run in by_group[group]:
                if run.family == family and run.size is not None:
                    by_size[run.size].append(run.task_s)
            if by_size:
                series[group] = [band(float(s), by_size[s]) for s in sorted(by_size)]
        views.append(FamilyView(family, series))
    return views


def _mean_components(runs: Sequence[RunRecord]) -> dict[str, float]:
    totals = {key: 0.0 for key in COMPONENTS}
    for run in runs:
        for key, value in components(run).items():
            totals[key] += value
    return {key: value / max(1, len(runs)) for key, value in totals.items()}


def _task_breakdown(
    by_group: dict[str, list[RunRecord]], order: list[str]
) -> list[tuple[str, str, dict[str, float]]]:
    rows = []
    tasks = sorted({r.task for runs in by_group.values() for r in runs})
    for task in tasks:
        for group in order:
            runs = [r for r in by_group[group] if r.task == task]
            if runs:
                rows.append((task, group, _mean_components(runs)))
    return rows


def _notes(records: Sequence[RunRecord]) -> list[str]:
    notes: list[str] = []
    seen: set[str] = set()
    for record in records:
        if record.source == "looplab" or record.source in seen:
            continue
        seen.add(record.source)
        absent = ", ".join(record.absent) or "nothing"
        notes.append(f"{record.source} ({record.group}): absent in the source: {absent}.")
        notes.extend(f"{record.source}: {note}" for note in record.notes)
    return notes
