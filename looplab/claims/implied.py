"""What an untestable claim implies, solved on the lab's own re-timing.

When the lab cannot model the cause of a claimed gain (a transport it does not simulate),
it can still say what the claim requires: the slow value v of one knob such that cutting
it to v x (1 - cut), with the entry's other fast values, gives the claimed gain (median
slow over median fast task time, as a prediction is computed). The gain grows with v, so
bisection finds it; None when even `up_to` seconds do not reach the claim.
"""

from __future__ import annotations

from looplab.claims.knobs import Retimer
from looplab.claims.model import Claimed, Implied, TestPlan
from looplab.stats.order import median

__all__ = ["implied_value", "target_speedup"]

ITERATIONS = 30
"""Bisection steps (the interval shrinks 2^30-fold: under a microsecond for 60 s)."""


def target_speedup(claimed: Claimed) -> float:
    """The claim's headline (or its band's middle) as a speedup."""
    value = claimed.point if claimed.point is not None else (claimed.low + claimed.high) / 2
    return 1 / (1 - value) if claimed.measure == "shorter" else value


def implied_value(
    retimer: Retimer, plan: TestPlan, claimed: Claimed, implied: Implied
) -> float | None:
    """The slow value of `implied.knob` the claim needs (module docstring), or None."""
    target = target_speedup(claimed)

    def speedup(value: float) -> float:
        slow = retimer.points({**plan.slow, implied.knob: value})
        cut = {**plan.slow, **plan.fast, implied.knob: value * (1 - implied.cut)}
        fast = retimer.points(cut)
        return median([p.task_s for p in slow]) / median([p.task_s for p in fast])

    low, high = 0.0, implied.up_to
    if speedup(high) < target:
        return None
    if speedup(low) >= target:
        return low
    for _ in range(ITERATIONS):
        middle = (low + high) / 2
        low, high = (middle, high) if speedup(middle) < target else (low, middle)
    return high
