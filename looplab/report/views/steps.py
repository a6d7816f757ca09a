"""Per-step views: model latency against step index and context length, and how much of a
task's time comes from steps getting slower as the context grows.

"Slower steps" is computed with the one call-timing function (`looplab.latency.timing`)
at the run's own profile: each call is planned as recorded and as if it had the first
call's context (the context growth `g = P_i - P_1` removed, from the cached part first,
so the step's own new tokens stay), with the same reasoning and output. The difference,
summed over the calls, is the time due to context growth; the rest of the task time is
what its steps would take at the first step's speed ("more steps"). Under a flat profile
with a prefix cache the difference is 0 by construction; without a cache the growing
prefill counts as slowdown. Runs without a profile are planned at slow-80 (and say so).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from looplab.analysis.retime import call_tokens
from looplab.latency.timing import CallTokens, TimingModel
from looplab.report.data.records import RunRecord
from looplab.report.views.sweep import run_profile
from looplab.stats.intervals import CurvePoint, band, quantile
from looplab.traces.schema import ModelCallEvent

__all__ = ["SlowdownRow", "StepLatencyView", "slowdown_rows", "step_latency"]

CONTEXT_BINS = 8
"""Context-length bins of the latency-vs-context curve (quantiles of all steps' contexts)."""


@dataclass
class StepLatencyView:
    """Model-call latency (request scheduled -> stream end) of each step, per group."""

    by_step: dict[str, list[CurvePoint]]
    """Per group: median and p25-p75 per step index (1-based)."""
    by_context: dict[str, list[CurvePoint]]
    """Per group: median and p25-p75 per context bin (x: the bin's median prompt tokens)."""
    per_token_ms: dict[str, tuple[float, float] | None]
    """Per group: median visible decode time per token (ms) in the first and in the last
    third of the steps (None without decode times)."""


@dataclass
class SlowdownRow:
    """One group (and family size): task time split into "more steps" and "slower steps"."""

    group: str
    label: str
    """`all tasks`, or the family instance (`coding/nbugs-N`, N=8)."""
    runs: int
    steps: float
    """Median steps."""
    task_s: float
    """Mean task time."""
    slowdown_s: float
    """Mean time due to steps slowing as the context grows (module docstring)."""
    notes: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        """slowdown / task time."""
        return self.slowdown_s / self.task_s if self.task_s > 0 else 0.0


def _calls(run: RunRecord) -> list[ModelCallEvent]:
    return run.trace.model_calls() if run.trace is not None else []


def step_latency(by_group: dict[str, list[RunRecord]], order: list[str]) -> StepLatencyView | None:
    """The per-step latency view (None when no run has model calls)."""
    points: dict[str, list[tuple[int, int | None, float]]] = {}
    for group in order:
        points[group] = [
            (index + 1, call.prompt_tokens, call.end - call.start)
            for run in by_group[group]
            for index, call in enumerate(_calls(run))
        ]
    if not any(points.values()):
        return None
    contexts = sorted(c for ps in points.values() for _, c, _ in ps if c is not None) or [0]
    edges = (
        [quantile(contexts, i / CONTEXT_BINS) for i in range(1, CONTEXT_BINS)] if contexts else []
    )
    by_step: dict[str, list[CurvePoint]] = {}
    by_context: dict[str, list[CurvePoint]] = {}
    for group, group_points in points.items():
        steps: dict[int, list[float]] = defaultdict(list)
        bins: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for step, context, latency in group_points:
            steps[step].append(latency)
            if context is not None:
                bins[sum(1 for e in edges if context > e)].append((context, latency))
        # a step index reached by fewer than a quarter of the runs says little about the group
        floor = max(1, len(by_group[group]) // 4)
        by_step[group] = [band(s, steps[s]) for s in sorted(steps) if len(steps[s]) >= floor]
        by_context[group] = [
            band(quantile([float(c) for c, _ in bins[b]], 0.5), [v for _, v in bins[b]])
            for b in sorted(bins)
        ]
    return StepLatencyView(by_step, by_context, {g: _per_token_thirds(by_group[g]) for g in order})


def _per_token_thirds(runs: list[RunRecord]) -> tuple[float, float] | None:
    early: list[float] = []
    late: list[float] = []
    for run in runs:
        values = [
            call.decode_s / (call.output_tokens - 1) * 1000
            for call in _calls(run)
            if call.decode_s is not None and call.output_tokens and call.output_tokens > 1
        ]
        third = len(values) // 3
        if third:
            early.extend(values[:third])
            late.extend(values[-third:])
    if not early:
        return None
    return quantile(early, 0.5), quantile(late, 0.5)


def slowdown_rows(by_group: dict[str, list[RunRecord]], order: list[str]) -> list[SlowdownRow]:
    """Per group (and per family size when the runs form a family), slowest group first."""
    rows: list[SlowdownRow] = []
    for group in order:
        runs = [r for r in by_group[group] if r.trace is not None]
        if not runs:
            continue
        profile, notes = run_profile(runs)
        model = TimingModel.from_profile(profile)
        parts: dict[str, list[tuple[RunRecord, float]]] = defaultdict(list)
        for run in runs:
            label = f"{run.family}, N={run.size}" if run.family and run.size else "all tasks"
            parts[label].append((run, _slowdown_s(model, run)))
        for label in sorted(parts, key=_label_key):
            members = parts[label]
            rows.append(
                SlowdownRow(
                    group=group,
                    label=label,
                    runs=len(members),
                    steps=quantile([float(r.steps) for r, _ in members], 0.5),
                    task_s=sum(r.task_s for r, _ in members) / len(members),
                    slowdown_s=sum(s for _, s in members) / len(members),
                    notes=notes,
                )
            )
    return rows


def _label_key(label: str) -> tuple[float, str]:
    size = label.rpartition("N=")[2]
    return (int(size) if size.isdigit() else math.inf), label


def _slowdown_s(model: TimingModel, run: RunRecord) -> float:
    """Planned time of the run's calls minus their time at the first call's context."""
    shapes = [t for t in (call_tokens(c) for c in _calls(run)) if t is not None]
    if not shapes:
        return 0.0
    first = shapes[0].prompt
    total = 0.0
    for tokens in shapes:
        growth = max(0, tokens.prompt - first)
        if growth == 0:
            continue
        flat = CallTokens(
            prompt=tokens.prompt - growth,
            cached=max(0, tokens.cached - growth),
            reasoning=tokens.reasoning,
            output=tokens.output,
        )
        total += model.plan(tokens).total_s - model.plan(flat).total_s
    return max(0.0, total)
