"""The speedup taken apart: a slow-vs-fast difference split into its factors.

The factors are the knobs (`looplab.claims.knobs.KNOBS`) whose slow and fast values
differ. The value of a subset S is the mean task time over the evidence's units with the
knobs in S at their fast values and the rest at their slow ones; exact Shapley values
(`looplab.claims.shapley`) split `v(all fast) - v(all slow)` into parts that sum to it.
The same 2^k values, logged, give each factor's multiplicative share of the speedup
(`speedup_x`: their product is the whole speedup).

Against a claimed speedup, the residual is what the lab's factors do not explain: the
seconds the fast side would still have to lose, and the share of steps a task would have
to drop if that were all done by fewer steps (time assumed proportional to steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from looplab.claims.knobs import KNOBS, Retimer, neutral_setting
from looplab.claims.shapley import shapley

__all__ = ["Decomposition", "Part", "decompose", "decomposition_json"]


@dataclass(frozen=True)
class Part:
    """One factor's share."""

    knob: str
    label: str
    slow_value: float
    fast_value: float
    seconds: float
    """Its Shapley share of the task-time difference (negative: it saves time)."""
    speedup_x: float
    """Its multiplicative share of the speedup (Shapley over log time)."""


@dataclass(frozen=True)
class Decomposition:
    """A slow-vs-fast task-time difference in parts that sum to it."""

    slow_s: float
    """Mean task time over the units, slow side."""
    fast_s: float
    """Mean task time over the units, fast side."""
    parts: list[Part]
    units: int

    @property
    def speedup(self) -> float:
        """Mean slow time over mean fast time."""
        return self.slow_s / self.fast_s if self.fast_s > 0 else math.nan

    def residual(self, claimed: float) -> tuple[float, float]:
        """(seconds the fast side would still have to lose for a `claimed` speedup, share
        of steps to drop for that if time were proportional to steps)."""
        target = self.slow_s / claimed
        return self.fast_s - target, 1 - target / self.fast_s if self.fast_s > 0 else math.nan


def decompose(retimer: Retimer, slow: dict[str, float], fast: dict[str, float]) -> Decomposition:
    """The Shapley decomposition of `retimer`'s units from `slow` to `fast` (module doc).

    Args:
        retimer: the units and base profile.
        slow: the slow side's knob values (unset: neutral).
        fast: the fast side's values that differ (unset: the slow side's).
    """
    neutral = neutral_setting(retimer.base)
    slow_all = {**neutral, **slow}
    fast_all = {**slow_all, **fast}
    factors = [k for k in KNOBS if fast_all[k] != slow_all[k]]
    cache: dict[frozenset[str], float] = {}

    def mean_time(switched: frozenset[str]) -> float:
        if switched not in cache:
            setting = {**slow_all, **{k: fast_all[k] for k in switched}}
            points = retimer.points(setting)
            cache[switched] = sum(p.task_s for p in points) / len(points)
        return cache[switched]

    seconds = shapley(factors, mean_time)
    logs = shapley(factors, lambda s: math.log(mean_time(s)))
    parts = [
        Part(
            knob=k,
            label=KNOBS[k].label,
            slow_value=slow_all[k],
            fast_value=fast_all[k],
            seconds=seconds[k],
            speedup_x=math.exp(-logs[k]),
        )
        for k in factors
    ]
    return Decomposition(
        slow_s=mean_time(frozenset()),
        fast_s=mean_time(frozenset(factors)),
        parts=parts,
        units=len(retimer.shapes),
    )


def _finite(value: float) -> float | None:
    """None for an infinite knob value (no prefill cost), which JSON cannot carry."""
    return value if math.isfinite(value) else None


def decomposition_json(d: Decomposition, claimed: float | None) -> dict[str, Any]:
    """The decomposition for scripts; with `claimed`, the residual against it."""
    out: dict[str, Any] = {
        "units": d.units,
        "slow_s": d.slow_s,
        "fast_s": d.fast_s,
        "difference_s": d.fast_s - d.slow_s,
        "speedup": d.speedup,
        "parts": [
            {
                "knob": p.knob,
                "factor": p.label,
                "slow_value": _finite(p.slow_value),
                "fast_value": _finite(p.fast_value),
                "seconds": p.seconds,
                "share": p.seconds / (d.fast_s - d.slow_s) if d.fast_s != d.slow_s else None,
                "speedup_x": p.speedup_x,
            }
            for p in d.parts
        ],
    }
    if claimed:
        seconds, steps = d.residual(claimed)
        out["claimed_speedup"] = claimed
        out["unexplained_s"] = seconds
        out["unexplained_x"] = claimed / d.speedup
        out["steps_to_drop_share"] = steps
    return out
