"""Sweep: predicted task time of recorded traces over a grid of decode rates and TTFTs.

For each trace and grid point the totals come from `looplab.analysis.retime.sweep_trace`
(model calls recomputed from token counts, everything else as recorded). The summary per
point is the median over traces of the predicted task time and of the speedup against a
reference rate (the grid's lowest unless given) at the same TTFT, with the Amdahl
decomposition: the share of predicted time in visible decode, in hidden reasoning decode
(its own phase), in TTFT + prefill, in tools, and the rest.
`amdahl_ceiling` is the median over traces of the speedup over the reference rate an
infinitely fast decode would give (`ceiling`): `1 / (1 - f)` for a flat trace, `f` its
share of decode plus reasoning (all the rate scales); for a run tree, its critical path
over the same path re-timed with no decode (the binding branch may change). For a run
tree the shares are of what is on its critical path (`analysis.pathsplit`), so they lie
in [0, 1] and sum to 1; `work_s` (summed over branches) is its own figure.

A trace with nothing to re-time (no recorded task time, or no model call with token
counts: SWE-agent's demonstrations) is left out of every summary and counted in
`SweepSummary.untimed`, never shown as a 0.00x or 1.00x speedup.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from looplab.analysis.retime import SweepPoint, sweep_trace
from looplab.latency.profile import LatencyProfile
from looplab.traces.io import Trace

__all__ = ["SweepRow", "SweepSummary", "ceiling", "is_timed", "run_sweep", "untimed_reason"]


def is_timed(trace: Trace) -> bool:
    """True when `trace` has a recorded task time and a model call with token counts."""
    return untimed_reason(trace) is None


def untimed_reason(trace: Trace) -> str | None:
    """Why `trace` cannot be re-timed (None when it can): no `run_end`, a task time that is
    not positive (e.g. negative timestamps), or no model call with token counts."""
    end = trace.end
    if end is None:
        return "the run has not ended (no run_end)"
    if not end.end > 0:
        return f"its recorded task time is {end.end:g} s (not positive: timestamps out of order)"
    if not any(c.completion_tokens is not None for c in trace.model_calls()):
        return "no model call with token counts"
    return None


@dataclass(frozen=True)
class SweepRow:
    """One trace at one grid point."""

    run_id: str
    recorded_s: float
    point: SweepPoint
    speedup: float


@dataclass(frozen=True)
class SweepSummary:
    """Medians over traces at one grid point."""

    decode_tps: float
    ttft_s: float
    traces: int
    task_s: float
    speedup: float
    decode_share: float
    """Visible decode."""
    ttft_share: float
    """TTFT + prefill (to the first token of any kind)."""
    tool_share: float
    other_share: float
    amdahl_ceiling: float
    reasoning_share: float = 0.0
    """Hidden reasoning decode (its own phase; it scales with the rate like decode)."""
    untimed: int = 0
    """Traces left out: nothing to re-time (module docstring)."""
    work_s: float = 0.0
    """Median total work: every run's own time summed over parallel branches (a flat
    trace's is its task time); its own figure beside `task_s`, not a share of it."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def run_sweep(
    traces: Sequence[Trace],
    rates: Sequence[float],
    ttfts: Sequence[float],
    base: LatencyProfile,
    reference: float | None = None,
) -> tuple[list[SweepRow], list[SweepSummary]]:
    """Every trace at every point, and the per-point medians (see the module docstring).

    Args:
        reference: the decode rate speedups are measured against (default: the lowest);
            it is added to the grid when missing.
    """
    rates = sorted(set(rates) | ({reference} if reference else set()))
    base_rate = reference or rates[0]
    rows: list[SweepRow] = []
    timed = [t for t in traces if is_timed(t)]
    for trace in timed:
        end = trace.end
        recorded = end.end if end is not None else 0.0
        points = sweep_trace(trace, rates, ttfts, base)
        baseline = {p.ttft_s: p.task_s for p in points if p.decode_tps == base_rate}
        for point in points:
            rows.append(
                SweepRow(
                    run_id=trace.header.run_id,
                    recorded_s=recorded,
                    point=point,
                    speedup=baseline[point.ttft_s] / point.task_s if point.task_s else 0.0,
                )
            )
    summaries: list[SweepSummary] = []
    for ttft in ttfts:
        reference_rows = [
            r for r in rows if r.point.ttft_s == ttft and r.point.decode_tps == base_rate
        ]
        ceilings = [ceiling(r.point) for r in reference_rows if r.point.task_s]
        for rate in rates:
            here = [r for r in rows if r.point.ttft_s == ttft and r.point.decode_tps == rate]
            if not here:
                continue
            summaries.append(
                SweepSummary(
                    decode_tps=rate,
                    ttft_s=ttft,
                    traces=len(here),
                    task_s=_median([r.point.task_s for r in here]),
                    speedup=_median([r.speedup for r in here]),
                    decode_share=_share(here, "decode_s"),
                    ttft_share=_share(here, "ttft_total_s"),
                    tool_share=_share(here, "tool_s"),
                    other_share=_share(here, "other_s"),
                    amdahl_ceiling=_median(ceilings),
                    reasoning_share=_share(here, "reasoning_s"),
                    untimed=len(traces) - len(timed),
                    work_s=_median([r.point.work_s or r.point.task_s for r in here]),
                )
            )
    return rows, summaries


def ceiling(point: SweepPoint) -> float:
    """The Amdahl ceiling at `point`: its task time over its floor with no decode at all
    (`SweepPoint.floor_s`; for a flat trace exactly `1 / (1 - f)`, `f` its decode plus
    reasoning share; for a run tree from its critical path, whose binding branch may
    change as decode vanishes). Infinite when nothing but decode is left."""
    floor = point.floor_s
    if floor is None:
        floor = point.task_s - point.rate_scaled_s
    return point.task_s / floor if floor > 1e-12 else float("inf")


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def _share(rows: list[SweepRow], name: str) -> float:
    return _median([getattr(r.point, name) / r.point.task_s for r in rows if r.point.task_s])
