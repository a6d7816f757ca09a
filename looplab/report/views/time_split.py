"""Where the time goes and how it adds up: the time split into components, the cumulative
time by step (compounding), task time against a parametric family's size, and the split
per group and per task. Views only: `charts.py` draws them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.report.data.records import RunRecord
from looplab.stats.intervals import CurvePoint, band

__all__ = [
    "BROWSER_PHASES",
    "COMPONENTS",
    "FamilyView",
    "browser_phases",
    "components",
    "compounding",
    "families",
    "mean_components",
    "model_time_by_purpose",
    "planning_by_group",
    "planning_share",
    "task_breakdown",
]

COMPONENTS: dict[str, tuple[str, str]] = {
    "ttft": ("TTFT + prefill", "#8E6BBF"),
    "reasoning": ("reasoning (hidden decode)", "#B8D8A8"),
    "decode": ("decode", "#3B9C6E"),
    "model": ("model call (not split)", "#7FA7C9"),
    "tools": ("tools", "#E8A33D"),
    "act": ("browser action", "#C77C1E"),
    "page_wait": ("page-load wait", "#F2C57C"),
    "observe": ("observation capture", "#A0522D"),
    "overhead": ("harness overhead", "#9A9A9A"),
    "sandbox": ("sandbox start (outside task time)", "#D0CCC4"),
}
"""Where-the-time-goes components: key -> (label, colour); timelines use the same."""


BROWSER_PHASES = ("act", "page_wait", "observe")
"""The browser phases of a step (`StepEvent.phases`), parts of its tool time."""


def browser_phases(record: RunRecord) -> dict[str, float]:
    """A run's browser tool time split into `BROWSER_PHASES` (seconds; empty: not split).

    Summed over steps, each step's split scaled to its `tool_s` where parallel calls make
    their sum exceed the step's tool wall time, so the parts never exceed the tools."""
    out: dict[str, float] = {}
    for step in record.trace.steps() if record.trace is not None else []:
        split = {k: v for k, v in step.phases.items() if k in BROWSER_PHASES}
        total = sum(split.values())
        scale = step.tool_s / total if total > step.tool_s > 0 else 1.0
        for key, seconds in split.items():
            out[key] = out.get(key, 0.0) + seconds * scale
    return out


def model_time_by_purpose(record: RunRecord) -> dict[str, float]:
    """Model-call seconds by `purpose` (`planner`, `actor`, `reflection`; None -> actor)."""
    out: dict[str, float] = {}
    for call in record.trace.model_calls() if record.trace is not None else []:
        key = call.purpose or "actor"
        out[key] = out.get(key, 0.0) + call.end - call.start
    return out


def planning_share(runs: Sequence[RunRecord]) -> dict[str, float]:
    """Share of the runs' task time spent in planning and reflection calls (0..1 each)."""
    task = sum(r.task_s for r in runs)
    spent = {"planner": 0.0, "reflection": 0.0}
    for record in runs:
        for key, seconds in model_time_by_purpose(record).items():
            if key in spent:
                spent[key] += seconds
    return {key: (seconds / task if task > 0 else 0.0) for key, seconds in spent.items()}


def planning_by_group(
    by_group: dict[str, list[RunRecord]], order: list[str]
) -> dict[str, dict[str, float]]:
    """`planning_share` per group, for the groups whose runs made such calls (else {})."""
    out = {g: planning_share(by_group[g]) for g in order}
    return {g: share for g, share in out.items() if any(share.values())}


@dataclass
class FamilyView:
    """Task time against the parameter of a parametric task family."""

    name: str
    series: dict[str, list[CurvePoint]]


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
    browser = browser_phases(record)
    for key, seconds in browser.items():
        parts[key] = seconds
    parts["tools"] = max(0.0, record.tool_s - sum(browser.values()))
    parts["overhead"] = record.overhead_s + model_rest
    parts["sandbox"] = record.sandbox_start_s or 0.0
    return parts


def compounding(runs: list[RunRecord]) -> list[CurvePoint]:
    """Cumulative time after k steps, runs that finished earlier counted at their finish:
    each run's curve never goes down, so neither does the median (nor the band). The
    curve stops where fewer than a quarter of the runs are still going (the rest is one
    task's story, not the group's); each point's `n` counts the runs still going."""
    runs = [r for r in runs if r.step_ends]
    depth = max((len(r.step_ends) for r in runs), default=0)
    floor = 1 if len(runs) < 4 else max(2, len(runs) // 4)
    points = [CurvePoint(0, 0, 0, 0, len(runs))]
    for step in range(depth):
        going = sum(1 for r in runs if len(r.step_ends) > step)
        if going < floor:
            break
        values = [r.step_ends[min(step, len(r.step_ends) - 1)] for r in runs]
        point = band(step + 1, values)
        point.n = going
        points.append(point)
    return points


def families(by_group: dict[str, list[RunRecord]], order: list[str]) -> list[FamilyView]:
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


def mean_components(runs: Sequence[RunRecord]) -> dict[str, float]:
    totals = {key: 0.0 for key in COMPONENTS}
    for run in runs:
        for key, value in components(run).items():
            totals[key] += value
    return {key: value / max(1, len(runs)) for key, value in totals.items()}


def task_breakdown(
    by_group: dict[str, list[RunRecord]], order: list[str]
) -> list[tuple[str, str, dict[str, float]]]:
    rows = []
    tasks = sorted({r.task for runs in by_group.values() for r in runs})
    for task in tasks:
        for group in order:
            runs = [r for r in by_group[group] if r.task == task]
            if runs:
                rows.append((task, group, mean_components(runs)))
    return rows
