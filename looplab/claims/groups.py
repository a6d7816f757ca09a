"""A claim per harness: one row per group of units and a pooled value weighting groups equally.

The corpus is lopsided (42 of its 60 timed runs are one harness and model), so a value
pooled over runs is mostly that harness's. When a claim's evidence has units of two or
more groups (`Evidence.groups`: the corpus runs by harness), each group gets its own row
(its prediction and, with at least `MIN_PAIRED_N` units, its 95% BCa interval) and the
pooled row weights the groups equally, whatever their run counts:

- `speedup` / `shorter`: the geometric mean of the groups' speedups (median slow time /
  median fast time within the group), `shorter` = 1 - 1/that;
- `seconds`: the mean of the groups' median fast times.

The pooled interval is a percentile bootstrap stratified by group (each group's units
resampled within the group, `RESAMPLES` times, seeded), so a small group widens it as
it should. Its verdict is the claim's rule and words (`looplab.claims.verdicts.verdict`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from looplab.claims.model import Claimed
from looplab.stats.intervals import MIN_PAIRED_N, bca_median, bca_speedup
from looplab.stats.order import median

__all__ = ["RESAMPLES", "GroupRow", "Pooled", "group_rows", "pooled_equal"]

RESAMPLES = 2000
"""Bootstrap resamples of the pooled interval."""


@dataclass(frozen=True)
class GroupRow:
    """One group's prediction in the claim's measure."""

    group: str
    n: int
    prediction: float
    ci: tuple[float, float] | None
    """95% BCa interval (None: fewer than `MIN_PAIRED_N` units)."""


@dataclass(frozen=True)
class Pooled:
    """The groups pooled with equal weights."""

    prediction: float
    ci: tuple[float, float] | None
    groups: int
    how: str
    """In words: what was pooled and how."""


Pairs = Mapping[str, tuple[float, float]]
"""Unit id -> (slow time, fast time)."""


def _value(measure: str, pairs: Sequence[tuple[float, float]]) -> float:
    """One group's value in `measure` (a speedup for `shorter`, converted by the caller)."""
    fast = median([f for _, f in pairs])
    if measure == "seconds":
        return fast
    return median([s for s, _ in pairs]) / fast if fast > 0 else math.inf


def _in_measure(measure: str, speedup_or_s: float) -> float:
    return 1 - 1 / speedup_or_s if measure == "shorter" else speedup_or_s


def group_rows(claimed: Claimed, groups: Mapping[str, Pairs]) -> list[GroupRow]:
    """Each group's row (module docstring), in the groups' order."""
    rows = []
    for name, pairs in groups.items():
        value = _value(claimed.measure, list(pairs.values()))
        slow = {u: [p[0]] for u, p in pairs.items()}
        fast = {u: [p[1]] for u, p in pairs.items()}
        ci = bca_median(fast) if claimed.measure == "seconds" else bca_speedup(slow, fast)
        if ci is not None and claimed.measure == "shorter":
            ci = (1 - 1 / ci[0], 1 - 1 / ci[1])
        rows.append(GroupRow(name, len(pairs), _in_measure(claimed.measure, value), ci))
    return rows


def _pool(measure: str) -> Callable[[list[float]], float]:
    if measure == "seconds":
        return lambda values: sum(values) / len(values)
    return lambda values: math.exp(sum(math.log(v) for v in values) / len(values))


def pooled_equal(measure: str, groups: Mapping[str, Pairs], seed: int = 0) -> Pooled | None:
    """The equal-weight pooled value in `measure` (`speedup`, `shorter`, `seconds`) and its
    stratified bootstrap interval (module docstring); None with fewer than two groups or
    a group without a finite value."""
    if len(groups) < 2:
        return None
    members = {name: list(pairs.values()) for name, pairs in groups.items()}
    values = [_value(measure, pairs) for pairs in members.values()]
    if not all(math.isfinite(v) and v > 0 for v in values):
        return None
    pool = _pool(measure)
    point = pool(values)
    rng = random.Random(seed)
    draws = []
    for _ in range(RESAMPLES):
        drawn = [_value(measure, rng.choices(pairs, k=len(pairs))) for pairs in members.values()]
        if all(math.isfinite(v) and v > 0 for v in drawn):
            draws.append(pool(drawn))
    ci = None
    if len(draws) >= RESAMPLES // 2:
        draws.sort()
        low, high = draws[int(0.025 * len(draws))], draws[int(0.975 * len(draws)) - 1]
        ci = (_in_measure(measure, low), _in_measure(measure, high))
    if sum(len(p) for p in members.values()) < MIN_PAIRED_N:
        ci = None
    kind = (
        "mean of the groups' median seconds"
        if measure == "seconds"
        else ("geometric mean of the groups' speedups")
    )
    how = (
        f"{len(groups)} groups weighted equally, not by run count ({kind}; 95% percentile "
        f"bootstrap stratified by group, {RESAMPLES} resamples)"
    )
    return Pooled(_in_measure(measure, point), ci, len(groups), how)
