"""Money and deadlines per profile: cost per task, time vs cost, the price of waiting,
and success under a task time cap.

Cost per task is `looplab.analysis.cost` over each run's trace at the price entry its
profile names (`profile.price`): runs whose profile names none are listed as unpriced,
never given a price. Per agent and profile, a point (median task time, median cost per
task) with BCa 95% intervals over tasks where n allows (`bca_median`, at least
`MIN_PAIRED_N` tasks; else the point alone). Against the agent's slowest profile, each
faster one costs `extra` dollars per task and saves `saved` seconds of waiting; `extra /
saved hours` is the dollars paid per hour of waiting saved, which is also the break-even
hourly value of the person waiting: the faster tier pays off when an hour of theirs is
worth more.

Success under a cap (`looplab.analysis.caps`): per profile, the share of these runs that
finish within t, as recorded; and the shipped corpus re-timed at slow-80 and fast-750.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.analysis.caps import CapCurve, cap_grid, curve_from_times, task_times_at
from looplab.analysis.cost import price_of, trace_cost
from looplab.claims.panel.corpus import corpus_traces
from looplab.errors import LooplabError
from looplab.latency.presets import presets
from looplab.report.data.records import RunRecord
from looplab.stats.intervals import bca_median
from looplab.stats.order import median

__all__ = [
    "CORPUS_PROFILES",
    "CapsView",
    "CostPoint",
    "MoneyView",
    "WaitingRow",
    "caps_view",
    "money_view",
]

CORPUS_PROFILES = ("slow-80", "fast-750")
"""The profiles the shipped corpus is re-timed at for the under-cap curves."""


@dataclass(frozen=True)
class CostPoint:
    """One agent at one profile: median task time and cost per task."""

    agent: str
    group: str
    price: str | None
    """The price entry (None: the profile names none; cost unknown)."""
    runs: int
    task_s: float
    task_ci: tuple[float, float] | None
    cost_usd: float | None
    cost_ci: tuple[float, float] | None


@dataclass(frozen=True)
class WaitingRow:
    """A faster profile against the agent's slowest: what an hour of waiting saved costs."""

    agent: str
    group: str
    reference: str
    extra_usd_per_task: float
    saved_s_per_task: float
    usd_per_hour_saved: float | None
    """Extra dollars per hour of waiting saved = the break-even hourly value of the person
    waiting; None when no time is saved."""


@dataclass
class MoneyView:
    """Cost per task per agent and profile, and the price of waiting."""

    points: list[CostPoint]
    waiting: list[WaitingRow]
    unpriced: list[str] = field(default_factory=list)
    """Groups whose profile names no price entry."""
    timeouts: int = 0
    """Runs that ended `timeout`: their task time is the cap, so the waiting a faster
    profile saves is a lower bound where they are in the reference."""


@dataclass
class CapsView:
    """Success-under-cap curves: these runs per profile, and the corpus re-timed."""

    curves: list[tuple[str, CapCurve]]
    """(source, curve): source `these runs` or `corpus`."""
    notes: list[str] = field(default_factory=list)


def _key(record: RunRecord) -> str:
    return record.task


def money_view(by_group: dict[str, list[RunRecord]], order: Sequence[str]) -> MoneyView | None:
    """Per agent and profile, cost and time per task; None when no run has a trace."""
    points: list[CostPoint] = []
    unpriced: list[str] = []
    for group in order:
        by_agent: dict[str, list[RunRecord]] = defaultdict(list)
        for record in by_group[group]:
            if record.trace is not None:
                by_agent[record.agent].append(record)
        for agent, runs in sorted(by_agent.items()):
            try:
                price = price_of(runs[0].profile_spec)
            except LooplabError:
                price = None
            if price is None and group not in unpriced:
                unpriced.append(group)
            times: dict[str, list[float]] = defaultdict(list)
            costs: dict[str, list[float]] = defaultdict(list)
            for record in runs:
                times[_key(record)].append(record.task_s)
                if price is not None and record.trace is not None:
                    cost = trace_cost(record.trace, price)
                    if cost.priced_calls:
                        costs[_key(record)].append(cost.total_usd)
            flat = [c for v in costs.values() for c in v]
            points.append(
                CostPoint(
                    agent=agent,
                    group=group,
                    price=price.name if price else None,
                    runs=len(runs),
                    task_s=median([r.task_s for r in runs]),
                    task_ci=bca_median(times),
                    cost_usd=median(flat) if flat else None,
                    cost_ci=bca_median(costs) if flat else None,
                )
            )
    if not points:
        return None
    timeouts = sum(1 for g in order for r in by_group[g] if r.end_reason == "timeout")
    return MoneyView(
        points=points, waiting=_waiting(points, order), unpriced=unpriced, timeouts=timeouts
    )


def _waiting(points: list[CostPoint], order: Sequence[str]) -> list[WaitingRow]:
    rows: list[WaitingRow] = []
    by_agent: dict[str, list[CostPoint]] = defaultdict(list)
    for point in points:
        by_agent[point.agent].append(point)
    for agent, mine in by_agent.items():
        mine.sort(key=lambda p: order.index(p.group))
        reference = mine[0]
        if reference.cost_usd is None:
            continue
        for point in mine[1:]:
            if point.cost_usd is None:
                continue
            extra = point.cost_usd - reference.cost_usd
            saved = reference.task_s - point.task_s
            rows.append(
                WaitingRow(
                    agent=agent,
                    group=point.group,
                    reference=reference.group,
                    extra_usd_per_task=extra,
                    saved_s_per_task=saved,
                    usd_per_hour_saved=extra / (saved / 3600) if saved > 0 else None,
                )
            )
    return rows


def caps_view(
    by_group: dict[str, list[RunRecord]], order: Sequence[str], *, corpus: bool = True
) -> CapsView | None:
    """Under-cap curves of these runs per profile (as recorded) and, with `corpus`, of the
    shipped corpus's timed runs re-timed at `CORPUS_PROFILES`, on one grid of caps."""
    mine = {g: [r.trace for r in by_group[g] if r.trace is not None] for g in order}
    mine = {g: t for g, t in mine.items() if t}
    retimed = _corpus_times() if corpus else {}
    first = next(iter(retimed.values()), [])
    notes = (
        [
            f"corpus: {len(first)} timed runs of the shipped corpus, re-timed at "
            + " and ".join(CORPUS_PROFILES)
        ]
        if first
        else []
    )
    if not mine and not any(retimed.values()):
        return None
    unknown = sum(1 for g in order for r in by_group[g] if r.outcome == "unknown")
    if unknown:  # the curves count them as finishing: say so (`analysis/caps.py`)
        notes.append(f"these runs: {unknown} of unknown outcome (no verdict) count as finishing")
    recorded = {g: task_times_at(traces, None) for g, traces in mine.items()}
    grid = cap_grid([t for ts in recorded.values() for t in ts])
    curves = [("these runs", curve_from_times(g, ts, grid)) for g, ts in recorded.items()]
    if first:
        wide = cap_grid([t for ts in retimed.values() for t in ts])
        curves += [("corpus", curve_from_times(n, ts, wide)) for n, ts in retimed.items()]
    return CapsView(curves=curves, notes=notes)


@functools.cache
def _corpus_times() -> dict[str, list[float | None]]:
    """The shipped corpus's timed runs' task times at each of `CORPUS_PROFILES` (once per
    process)."""
    traces = [trace for run, trace in corpus_traces() if run.timed]
    known = presets()
    return {name: task_times_at(traces, known[name]) for name in CORPUS_PROFILES}
