"""Money and deadlines per profile: cost per task, time vs cost, the price of waiting,
and success under a task time cap.

Cost per task is `views.cost.cost_figure` (the bottom line's too): each run's trace at
the price entry its profile names; a profile left unpriced is listed with why, never
given a price. Per comparison group (agent, task set, clock; `report/data/pairing.py`)
and profile, a point (median task time, median cost per task) with BCa 95% intervals over
tasks where n allows (`bca_median`, at least `MIN_PAIRED_N` tasks; else the point alone).

The price of waiting (`waiting_rows`) compares a group only with the SAME group at its
slowest profile, never another task set or agent: each faster profile costs `extra`
dollars per task and saves `saved` seconds of waiting (the paired medians of
`views.speedup.paired_speedup`, as the bottom line); `extra / saved hours` is the
dollars paid per hour of waiting saved, which is also the break-even hourly value of the
person waiting: the faster tier pays off when an hour of theirs is worth more. A faster
profile that is also cheaper has no break-even: it dominates (`waiting_verdict`).

Success under a cap (`looplab.analysis.caps`): per profile, the share of these runs that
finish within t, as recorded; and the shipped corpus re-timed at slow-80 and fast-750.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from looplab.analysis.caps import CapCurve, cap_grid, curve_from_times, task_times_at
from looplab.cache import derived, stored_number
from looplab.latency.presets import presets
from looplab.report.claims.corpus import corpus_traces
from looplab.report.data.pairing import ComparisonKey, comparison_groups, pooled_key
from looplab.report.data.records import RunRecord
from looplab.report.views.cost import cost_figure
from looplab.report.views.speedup import paired_speedup
from looplab.stats.intervals import bca_median
from looplab.stats.order import median
from looplab.traces.corpus import corpus_dir
from looplab.traces.end_reason import EndReason

__all__ = [
    "CORPUS_PROFILES",
    "CapsView",
    "CostPoint",
    "MoneyView",
    "WaitingRow",
    "caps_view",
    "money_view",
    "waiting_rows",
    "waiting_verdict",
]

CORPUS_PROFILES = ("slow-80", "fast-750")
"""The profiles the shipped corpus is re-timed at for the under-cap curves."""


@dataclass(frozen=True)
class CostPoint:
    """One comparison group (agent, task set, clock) at one profile: median task time and
    cost per task (`views.cost.cost_figure`)."""

    agent: str
    group: str
    price: str | None
    """The price entry (None: the profile names none; cost unknown)."""
    runs: int
    task_s: float
    task_ci: tuple[float, float] | None
    cost_usd: float | None
    cost_ci: tuple[float, float] | None
    comparison: str = ""
    """The comparison group it belongs to (`ComparisonKey.label`)."""
    unpriced: str | None = None
    """Why `cost_usd` is None, in words."""


@dataclass(frozen=True)
class WaitingRow:
    """A faster profile against the slowest profile of the SAME comparison group (agent,
    task set, clock): what an hour of waiting saved costs, or that it costs nothing."""

    agent: str
    group: str
    reference: str
    extra_usd_per_task: float | None
    """Cost per task here minus at the reference (None: either side unpriced)."""
    saved_s_per_task: float
    """Median task time at the reference minus here, over the paired cells
    (`views.speedup.paired_speedup`, as the bottom line)."""
    usd_per_hour_saved: float | None
    """Extra dollars per hour of waiting saved = the break-even hourly value of the person
    waiting; set only when this profile is both faster and dearer."""
    comparison: str = ""
    """The comparison group both profiles belong to (`ComparisonKey.label`)."""
    verdict: str = ""
    """The row in words (`waiting_verdict`): a break-even, or which option dominates."""


@dataclass
class MoneyView:
    """Cost per task per comparison group and profile, and the price of waiting."""

    points: list[CostPoint]
    waiting: list[WaitingRow]
    unpriced: list[str] = field(default_factory=list)
    """`group: why` for every profile left unpriced."""
    timeouts: int = 0
    """Runs that ended `timeout`: their task time is the cap, so the waiting a faster
    profile saves is a lower bound where they are in the reference."""


@dataclass
class CapsView:
    """Success-under-cap curves: these runs per profile, and the corpus re-timed."""

    curves: list[tuple[str, CapCurve]]
    """(source, curve): source `these runs` or `corpus`."""
    notes: list[str] = field(default_factory=list)


def money_view(by_group: dict[str, list[RunRecord]], order: Sequence[str]) -> MoneyView | None:
    """Per comparison group and profile, cost and time per task, and the price of waiting
    within each comparison group; None when no run has a trace."""
    points: list[CostPoint] = []
    parts: dict[ComparisonKey, list[tuple[str, list[RunRecord]]]] = defaultdict(list)
    for group in order:
        for key, runs in comparison_groups(
            [r for r in by_group[group] if r.trace is not None]
        ).items():
            parts[key].append((group, runs))
            cost = cost_figure(runs)
            times: dict[str, list[float]] = defaultdict(list)
            for record in runs:
                times[record.task].append(record.task_s)
            points.append(
                CostPoint(
                    agent=key.agent,
                    group=group,
                    price=cost.price,
                    runs=len(runs),
                    task_s=median([r.task_s for r in runs]),
                    task_ci=bca_median(times),
                    cost_usd=cost.usd,
                    cost_ci=cost.ci,
                    comparison=key.label,
                    unpriced=cost.unpriced,
                )
            )
    if not points:
        return None
    timeouts = sum(1 for g in order for r in by_group[g] if r.end_reason == EndReason.TIMEOUT)
    unpriced = [f"{p.group}: {p.unpriced}" for p in points if p.unpriced]
    waiting = [row for key in sorted(parts) for row in waiting_rows(key, parts[key])]
    return MoneyView(points=points, waiting=waiting, unpriced=unpriced, timeouts=timeouts)


def waiting_rows(
    key: ComparisonKey, profiles: Sequence[tuple[str, list[RunRecord]]]
) -> list[WaitingRow]:
    """Every faster profile of one comparison group against its slowest (the first of
    `profiles`, slowest first); never across two groups (`pairing.pooled_key` guards).

    Raises:
        ValueError: the runs span two comparison keys.
    """
    pooled_key([r for _, runs in profiles for r in runs])
    if len(profiles) < 2:
        return []
    reference, slow_runs = profiles[0]
    slow_cost = cost_figure(slow_runs).usd
    rows: list[WaitingRow] = []
    for group, runs in profiles[1:]:
        paired = paired_speedup(slow_runs, runs)
        if paired.slow_s is None or paired.fast_s is None:
            continue
        saved = paired.slow_s - paired.fast_s
        fast_cost = cost_figure(runs).usd
        extra = None if slow_cost is None or fast_cost is None else fast_cost - slow_cost
        faster_and_dearer = extra is not None and extra > 0 and saved > 0
        breakeven = extra / (saved / 3600) if faster_and_dearer and extra else None
        rows.append(
            WaitingRow(
                agent=key.agent,
                group=group,
                reference=reference,
                extra_usd_per_task=extra,
                saved_s_per_task=saved,
                usd_per_hour_saved=breakeven,
                comparison=key.label,
                verdict=waiting_verdict(extra, saved, breakeven),
            )
        )
    return rows


def waiting_verdict(extra: float | None, saved: float, breakeven: float | None) -> str:
    """The price of waiting in words; never a negative break-even: a faster option that
    is also cheaper dominates."""
    if extra is None:
        return "unpriced: no break-even (see the unpriced profiles below)"
    if saved > 0 and extra <= 0:
        return "dominates: cheaper (or no dearer) and faster, at any value of waiting"
    if saved <= 0 and extra >= 0:
        return "dominated: no faster and no cheaper than the reference"
    if saved <= 0:
        return f"cheaper by ${-extra:.4g} per task but not faster: no waiting to buy"
    return f"pays off when an hour of waiting is worth more than ${breakeven:,.2f}"


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
    process; from the user's cache when this package and corpus made them before: they
    depend on nothing else, `looplab.cache.derived`)."""
    return derived("corpus-task-times", _compute_corpus_times, _times_of, inputs=(corpus_dir(),))


def _compute_corpus_times() -> dict[str, list[float | None]]:
    traces = [trace for run, trace in corpus_traces() if run.timed]
    known = presets()
    return {name: task_times_at(traces, known[name]) for name in CORPUS_PROFILES}


def _times_of(stored: Any) -> dict[str, list[float | None]]:
    """Stored task times, checked: a list of numbers or nulls per profile of
    `CORPUS_PROFILES` (a cache file is outside input).

    Raises:
        TypeError: another profile, or a value of another type.
    """
    if not isinstance(stored, dict) or list(stored) != list(CORPUS_PROFILES):
        raise TypeError(f"corpus task times: expected the profiles {list(CORPUS_PROFILES)}")
    out: dict[str, list[float | None]] = {}
    for name, times in stored.items():
        if not isinstance(times, list):
            raise TypeError(f"corpus task times: {name} must be a list of numbers or nulls")
        what = f"corpus task times: {name}"
        out[name] = [None if t is None else stored_number(t, what) for t in times]
    return out
