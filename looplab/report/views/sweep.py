"""The sensitivity views: predicted speedup over decode rates with the Amdahl ceiling, and
TTFT sensitivity, from the slowest group's runs re-timed by `looplab.analysis.retime`."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.analysis.retime import sweep_trace
from looplab.latency.presets import resolve_profile
from looplab.latency.profile import LatencyProfile
from looplab.latency.spec import profile_ttft, recorded_profile
from looplab.report.data.records import RunRecord
from looplab.report.views.group import GroupView
from looplab.stats.intervals import median

__all__ = ["SWEEP_RATES", "TTFT_GRID", "SweepView", "run_profile", "sweep_view"]

SWEEP_RATES = [20.0, 40.0, 80.0, 160.0, 320.0, 750.0, 1000.0, 2000.0, 5000.0]
TTFT_GRID = [0.0, 0.1, 0.3, 0.5, 1.0, 2.0, 4.0]


@dataclass
class SweepView:
    """Predicted speedup over decode rates, the Amdahl ceiling, and TTFT sensitivity."""

    base_group: str
    base_profile: str
    reference_tps: float
    traces: int
    rates: list[float]
    speedups: list[float]
    decode_share: float
    """Median share of task time the decode rate scales: visible decode plus hidden
    reasoning (the Amdahl f)."""
    ceiling: float
    measured: list[tuple[str, float, float, float | None, float | None]]
    """(group, decode rate, measured speedup, CI low, CI high)."""
    ttft_grid: list[float]
    ttft_series: list[tuple[str, float, list[float], float]]
    """(group, its decode rate, median predicted task s per TTFT, its own TTFT)."""
    notes: list[str]


def run_profile(runs: Sequence[RunRecord]) -> tuple[LatencyProfile, list[str]]:
    """The latency profile the runs carry (the first valid one), else slow-80 with a note."""
    for run in runs:
        if run.profile_spec:
            recorded = recorded_profile(run.profile_spec)
            if recorded is not None:
                return recorded, []
            break
    note = (
        "these runs carry no latency profile: prefill, network and jitter of the slow-80 "
        "preset are assumed, and the recorded speed is taken as 80 tok/s"
    )
    return resolve_profile("slow-80"), [note]


def sweep_view(by_group: dict[str, list[RunRecord]], groups: list[GroupView]) -> SweepView | None:
    """The sensitivity view of the slowest group (None without runs to re-time)."""
    base_group = groups[0]
    runs = [r for r in by_group[base_group.label] if r.trace is not None]
    if not runs:
        return None
    base, notes = run_profile(runs)
    reference_tps = base.decode_tps
    rates = sorted({*SWEEP_RATES, reference_tps, *(g.decode_tps for g in groups if g.decode_tps)})
    ttft_rates = sorted({g.decode_tps or reference_tps for g in groups})
    speedups: dict[float, list[float]] = defaultdict(list)
    shares: list[float] = []
    ttft_times: dict[tuple[float, float], list[float]] = defaultdict(list)
    for run in runs:
        assert run.trace is not None
        points = sweep_trace(run.trace, rates, [base.ttft_s], base)
        at = {p.decode_tps: p for p in points}
        reference = at[reference_tps]
        if reference.task_s <= 0:
            continue
        shares.append(reference.rate_scaled_s / reference.task_s)
        for rate, point in at.items():
            speedups[rate].append(reference.task_s / point.task_s)
        for point in sweep_trace(run.trace, ttft_rates, TTFT_GRID, base):
            ttft_times[(point.decode_tps, point.ttft_s)].append(point.task_s)
    if not shares:
        return None
    share = median(shares)
    ceilings = [1 / (1 - f) if f < 1 else math.inf for f in shares]
    measured = [
        (g.label, g.decode_tps, g.speedup, g.ci[0] if g.ci else None, g.ci[1] if g.ci else None)
        for g in groups
        if g.decode_tps
    ]
    ttft_series = []
    for group in groups:
        rate = group.decode_tps or reference_tps
        own = base.ttft_s
        for run in by_group[group.label]:
            if (ttft := profile_ttft(run.profile_spec)) is not None:
                own = ttft
                break
        series = [median(ttft_times[(rate, t)]) for t in TTFT_GRID]
        ttft_series.append((group.label, rate, series, own))
    if any(r.estimated for r in runs):
        notes.append("the swept runs have estimated times: the prediction inherits them")
    return SweepView(
        base_group=base_group.label,
        base_profile=base.name,
        reference_tps=reference_tps,
        traces=len(shares),
        rates=rates,
        speedups=[median(speedups[r]) for r in rates],
        decode_share=share,
        ceiling=median(ceilings),
        measured=measured,
        ttft_grid=list(TTFT_GRID),
        ttft_series=ttft_series,
        notes=notes,
    )
