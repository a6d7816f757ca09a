"""Side-by-side compare of 2 to 8 sides (experiments, profiles of one, or single runs):
per task, each side's numbers, and each side against the baseline with its delta.

One computation feeds `looplab diff` (console and `--format json`) and the dashboard's
`/compare` page. A side is a label and its runs; the baseline is one of the sides (the
first unless picked). Per task and side (`METRICS`): the median time, the success rate,
the median cost, steps and tokens over the side's runs of that task.

Paired statistics over repetitions: a task's runs are paired across two sides by
repetition (`compare.keyed`: the experiment cell's repetition, else run-id order). Over the
pairs: the mean time difference (side - baseline), its 95% t interval (with 2+ pairs) and
in how many pairs the side was faster. Over tasks both sides ran: the speedup of the
side's median task time against the baseline's, with the paired bootstrap 95% CI
(`looplab.stats.intervals.bootstrap_speedup`).

Marks: a metric's change is `worse` or `better` when it moves by more than `THRESHOLD`
(relative; success: any change in rate) the wrong or the right way; for time, when the
task has `MIN_PAIRS`+ pairs, only when the paired interval also excludes 0 (noise is not a
regression). A task row is a `regression` when its time or success got worse, an
`improvement` when something got better and nothing worse, `mixed` when both.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from looplab.report.data.records import RunRecord
from looplab.report.views.compare import comparability, keyed
from looplab.report.views.run_metrics import METRICS, Metric, RunMetrics, run_metrics
from looplab.stats.intervals import bootstrap_speedup

__all__ = [
    "MAX_SIDES",
    "MIN_PAIRS",
    "THRESHOLD",
    "Pairwise",
    "Side",
    "SideBySide",
    "SideCell",
    "TaskDelta",
    "side_by_side",
]

MIN_PAIRS = 3
"""A time change is held to its paired interval from this many pairs on (with 2, one
degree of freedom makes the 95% interval 12.7 standard errors wide: it says nothing)."""
MAX_SIDES = 8
"""At most this many sides are compared at once."""
THRESHOLD = 0.05
"""A relative change above this marks a metric better or worse (assumed: 5%, the run-to-run
spread of the virtual clock's tool times on the shipped tasks is below it)."""

_T95_TABLE = (
    "12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 "
    "2.131 2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 "
    "2.045 2.042"
)
_T95 = tuple(float(x) for x in _T95_TABLE.split())
"""Two-sided 95% t quantiles for 1..30 degrees of freedom (any statistics table)."""


@dataclass(frozen=True)
class Side:
    """One compared side: a label and its runs."""

    label: str
    runs: list[RunRecord]


@dataclass
class SideCell:
    """One side's numbers on one task (medians over its runs; success as a rate)."""

    runs: int
    time_s: float | None
    success: float | None
    cost_usd: float | None
    steps: float | None
    tokens: float | None
    run_ids: list[str] = field(default_factory=list)

    def value(self, key: str) -> float | None:
        """The number for a metric key (`METRICS`)."""
        value = getattr(self, key)
        return float(value) if value is not None else None


@dataclass
class TaskDelta:
    """One task: the baseline's and the side's cells, their deltas and marks."""

    task: str
    base: SideCell | None
    side: SideCell | None
    delta: dict[str, float | None]
    """side - baseline per metric (None where either side lacks it)."""
    marks: dict[str, str]
    """`worse`, `better` or "" per metric."""
    status: str
    """`regression`, `improvement`, `mixed`, "" (no change), `only baseline`, `only side`."""
    pairs: int
    mean_diff_s: float | None
    """Mean of (side - baseline) time over paired repetitions."""
    ci_diff_s: tuple[float, float] | None
    """95% t interval of that mean (2+ pairs)."""
    faster_pairs: int


@dataclass
class Pairwise:
    """One side against the baseline, per task and over all tasks."""

    base: str
    side: str
    rows: list[TaskDelta]
    matched_tasks: int
    speedup: float | None
    """Median baseline time / median side time over matched tasks (>1: the side is faster)."""
    speedup_ci: tuple[float, float] | None
    regressions: int
    improvements: int
    issues: list[str]
    """How the two sides differ in what they ran (`compare.comparability`)."""


@dataclass
class SideBySide:
    """Every side's numbers per task and each side against the baseline."""

    sides: list[str]
    baseline: int
    tasks: list[str]
    cells: dict[str, list[SideCell | None]]
    """Per task: each side's cell (None: the side did not run the task)."""
    comparisons: list[Pairwise]
    """Baseline against each other side, in side order."""

    def to_json(self) -> dict[str, object]:
        """Plain data (`looplab diff --format json`, the page's downloads)."""
        data = asdict(self)
        data["metrics"] = [asdict(m) for m in METRICS]
        return data


def side_by_side(sides: Sequence[Side], baseline: int = 0) -> SideBySide:
    """Compare `sides` (2 to `MAX_SIDES`) against `sides[baseline]`.

    Raises:
        ValueError: fewer than 2 or more than `MAX_SIDES` sides, a side without runs, or a
            baseline index out of range (callers turn it into a ConfigError naming the flag).
    """
    if not 2 <= len(sides) <= MAX_SIDES:
        raise ValueError(f"compare 2 to {MAX_SIDES} sides, not {len(sides)}")
    if not 0 <= baseline < len(sides):
        raise ValueError(f"baseline {baseline} is not one of the {len(sides)} sides")
    empty = [s.label for s in sides if not s.runs]
    if empty:
        raise ValueError(f"no ended runs in {', '.join(empty)}")
    metrics = {id(r): run_metrics(r) for s in sides for r in s.runs}
    tasks = sorted({r.task for s in sides for r in s.runs})
    cells: dict[str, list[SideCell | None]] = {
        t: [_cell([r for r in s.runs if r.task == t], metrics) for s in sides] for t in tasks
    }
    base = sides[baseline]
    comparisons = [
        _pairwise(base, side, tasks, cells, baseline, index)
        for index, side in enumerate(sides)
        if index != baseline
    ]
    return SideBySide(
        sides=[s.label for s in sides],
        baseline=baseline,
        tasks=tasks,
        cells=cells,
        comparisons=comparisons,
    )


def _median(values: Sequence[float | int | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return statistics.median(known) if known else None


def _cell(runs: list[RunRecord], metrics: dict[int, RunMetrics]) -> SideCell | None:
    if not runs:
        return None
    own = [metrics[id(r)] for r in runs]
    verdicts = [m.success for m in own if m.success is not None]
    return SideCell(
        runs=len(runs),
        time_s=_median([m.time_s for m in own]),
        success=sum(verdicts) / len(verdicts) if verdicts else None,
        cost_usd=_median([m.cost_usd for m in own]),
        steps=_median([m.steps for m in own]),
        tokens=_median([m.tokens for m in own]),
        run_ids=sorted(r.run_id for r in runs),
    )


def _pairwise(
    base: Side,
    side: Side,
    tasks: list[str],
    cells: dict[str, list[SideCell | None]],
    b: int,
    s: int,
) -> Pairwise:
    rows = [_task_delta(t, cells[t][b], cells[t][s], base, side) for t in tasks]
    shared = [r.task for r in rows if r.base is not None and r.side is not None]
    slow = {t: [r.task_s for r in base.runs if r.task == t] for t in shared}
    fast = {t: [r.task_s for r in side.runs if r.task == t] for t in shared}
    speedup: float | None = None
    interval: tuple[float, float] | None = None
    pooled_base = [x for t in shared for x in slow[t]]
    pooled_side = [x for t in shared for x in fast[t]]
    if pooled_base and pooled_side and statistics.median(pooled_side) > 0:
        speedup = statistics.median(pooled_base) / statistics.median(pooled_side)
        low, high = bootstrap_speedup(slow, fast)
        interval = (low, high) if math.isfinite(low) and math.isfinite(high) else None
    groups = {base.label: base.runs, side.label: side.runs}
    issues = comparability(groups, list(groups)).issues if base.label != side.label else []
    return Pairwise(
        base=base.label,
        side=side.label,
        rows=rows,
        matched_tasks=len(shared),
        speedup=speedup,
        speedup_ci=interval,
        regressions=sum(r.status in ("regression", "mixed") for r in rows),
        improvements=sum(r.status in ("improvement", "mixed") for r in rows),
        issues=issues,
    )


def _task_delta(
    task: str,
    a: SideCell | None,
    b: SideCell | None,
    base: Side,
    side: Side,
) -> TaskDelta:
    diffs = _paired_diffs(task, base, side)
    mean = statistics.fmean(diffs) if diffs else None
    interval = _t_interval(diffs)
    delta: dict[str, float | None] = {}
    marks: dict[str, str] = {}
    for metric in METRICS:
        x = a.value(metric.key) if a else None
        y = b.value(metric.key) if b else None
        delta[metric.key] = y - x if x is not None and y is not None else None
        marks[metric.key] = _mark(metric, x, y, interval, len(diffs))
    if a is None or b is None:
        status = "only baseline" if b is None else "only side"
    else:
        status = _status(marks)
    return TaskDelta(
        task=task,
        base=a,
        side=b,
        delta=delta,
        marks=marks,
        status=status,
        pairs=len(diffs),
        mean_diff_s=mean,
        ci_diff_s=interval,
        faster_pairs=sum(d < 0 for d in diffs),
    )


def _paired_diffs(task: str, base: Side, side: Side) -> list[float]:
    """side - baseline task time per repetition both ran."""
    a = {k: v for k, v in keyed([r for r in base.runs if r.task == task]).items()}
    b = {k: v for k, v in keyed([r for r in side.runs if r.task == task]).items()}
    return [
        statistics.median(r.task_s for r in b[k]) - statistics.median(r.task_s for r in a[k])
        for k in sorted(set(a) & set(b))
    ]


def _t_interval(diffs: list[float]) -> tuple[float, float] | None:
    """95% t interval of the mean of `diffs` (None under 2 values)."""
    n = len(diffs)
    if n < 2:
        return None
    mean = statistics.fmean(diffs)
    half = _T95[min(n - 1, len(_T95)) - 1] * statistics.stdev(diffs) / math.sqrt(n)
    return (mean - half, mean + half)


def _mark(
    metric: Metric,
    x: float | None,
    y: float | None,
    interval: tuple[float, float] | None,
    pairs: int,
) -> str:
    """`worse`, `better` or "" for a change from `x` (baseline) to `y` (side)."""
    if x is None or y is None or x == y:
        return ""
    moved = metric.key == "success" or not x or abs(y - x) > THRESHOLD * abs(x)
    if metric.key == "time_s" and interval is not None and pairs >= MIN_PAIRS:
        moved = moved and (interval[0] > 0 or interval[1] < 0)
    if not moved:
        return ""
    up_is_worse = metric.lower_is_better
    return "worse" if (y > x) == up_is_worse else "better"


def _status(marks: dict[str, str]) -> str:
    worse = marks["time_s"] == "worse" or marks["success"] == "worse"
    better = any(m == "better" for m in marks.values())
    if worse and better:
        return "mixed"
    if worse:
        return "regression"
    return "improvement" if better else ""
