"""Small statistics for reports: quantiles, bootstrap confidence intervals, CDF points,
median-and-band curve points.

Pure Python (the project has no numpy); fast enough for thousands of runs because the
bootstrap works on per-task medians, not on every resample's full sort of all runs.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

from looplab.stats.order import median, quantile

__all__ = [
    "MIN_PAIRED_N",
    "CurvePoint",
    "band",
    "bca_interval",
    "bca_median",
    "bca_speedup",
    "bootstrap_speedup",
    "cdf_points",
    "median",
    "quantile",
    "speedup_ci",
]


def bootstrap_speedup(
    slow: Mapping[str, Sequence[float]],
    fast: Mapping[str, Sequence[float]],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Confidence interval of `median(slow) / median(fast)` by bootstrap.

    Args:
        slow: task times of the reference group, by task.
        fast: task times of the compared group, by task.
        resamples: bootstrap resamples.
        confidence: two-sided coverage of the percentile interval.
        seed: RNG seed (reports are reproducible).

    Returns:
        (low, high). When both groups ran the same tasks, tasks are resampled as clusters
        (a paired bootstrap: a task drawn twice brings its runs of both groups twice), so
        the interval reflects the spread over tasks and not the gap between unlike tasks;
        otherwise runs are resampled independently within each group.
    """
    rng = random.Random(seed)
    shared = sorted(set(slow) & set(fast))
    ratios: list[float] = []
    if len(shared) >= 2:
        for _ in range(resamples):
            picks = [shared[rng.randrange(len(shared))] for _ in shared]
            a = [t for task in picks for t in _resample(rng, slow[task])]
            b = [t for task in picks for t in _resample(rng, fast[task])]
            ratios.append(median(a) / median(b) if median(b) > 0 else math.inf)
    else:
        all_slow = [t for times in slow.values() for t in times]
        all_fast = [t for times in fast.values() for t in times]
        if not all_slow or not all_fast:
            return (math.nan, math.nan)
        for _ in range(resamples):
            a = _resample(rng, all_slow)
            b = _resample(rng, all_fast)
            ratios.append(median(a) / median(b) if median(b) > 0 else math.inf)
    tail = (1 - confidence) / 2
    return (quantile(ratios, tail), quantile(ratios, 1 - tail))


def speedup_ci(
    slow: Mapping[str, Sequence[float]], fast: Mapping[str, Sequence[float]]
) -> tuple[float, float] | None:
    """The one rule for a speedup's 95% interval, in every view (bottom line, per-profile
    table, knob table, claim panel): `bca_speedup` over the units both sides ran, None
    under `MIN_PAIRED_N` of them (no distribution-free 95% interval exists there) or when
    the bootstrap is degenerate."""
    return bca_speedup(slow, fast)


MIN_PAIRED_N = 6
"""The fewest paired units (tasks, workload draws, corpus runs) a claim row needs for a CI
and a verdict: below 6, no distribution-free 95% interval for a median exists (the widest
one, minimum to maximum of n values, covers it with probability 1 - 2 * 0.5**n, under 95%
for n <= 5), so a bootstrap interval there only looks like one."""


def bca_speedup(
    slow: Mapping[str, Sequence[float]],
    fast: Mapping[str, Sequence[float]],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """BCa (bias-corrected and accelerated) bootstrap interval of
    `median(slow) / median(fast)` over the units both ran, resampled as clusters.

    Efron's BCa corrects the percentile interval for the median's bias (z0, from the share
    of resamples below the estimate, ties counted half) and for skew (the acceleration a,
    from the leave-one-unit-out jackknife), which the plain percentile interval misses at
    small n (its upper end then sits on the estimate).

    Returns:
        (low, high), or None: fewer than `MIN_PAIRED_N` shared units, a ratio that is not
        finite, or a bootstrap distribution wholly on one side of the estimate.
    """
    units = sorted(set(slow) & set(fast))

    def ratio(picks: Sequence[str]) -> float:
        bottom = median([t for unit in picks for t in fast[unit]])
        return (
            median([t for unit in picks for t in slow[unit]]) / bottom if bottom > 0 else math.inf
        )

    return bca_interval(units, ratio, resamples=resamples, confidence=confidence, seed=seed)


def bca_median(
    values: Mapping[str, Sequence[float]],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """BCa bootstrap interval of the median of all `values`, units (their keys) resampled
    as clusters; None under `MIN_PAIRED_N` units (as `bca_speedup`)."""

    def pooled(picks: Sequence[str]) -> float:
        return median([v for unit in picks for v in values[unit]])

    units = sorted(u for u in values if values[u])
    return bca_interval(units, pooled, resamples=resamples, confidence=confidence, seed=seed)


def bca_interval(
    units: Sequence[str],
    statistic: Callable[[Sequence[str]], float],
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """The BCa interval of `statistic` (of a list of units, repeats allowed) over `units`
    resampled as clusters (`bca_speedup` says how); None under `MIN_PAIRED_N` units, for
    a statistic that is not finite, or a bootstrap wholly on one side of the estimate."""
    units = list(units)
    if len(units) < MIN_PAIRED_N:
        return None
    estimate = statistic(units)
    boots = [statistic([units[i] for i in picks]) for picks in _picks(len(units), resamples, seed)]
    if not all(math.isfinite(b) for b in (*boots, estimate)):
        return None
    below = (sum(b < estimate for b in boots) + 0.5 * sum(b == estimate for b in boots)) / len(
        boots
    )
    if not 0 < below < 1:
        return None
    normal = NormalDist()
    z0 = normal.inv_cdf(below)
    jack = [statistic(units[:i] + units[i + 1 :]) for i in range(len(units))]
    mean = sum(jack) / len(jack)
    spread = sum((mean - j) ** 2 for j in jack)
    accel = sum((mean - j) ** 3 for j in jack) / (6 * spread**1.5) if spread > 0 else 0.0
    ends = []
    for tail in ((1 - confidence) / 2, (1 + confidence) / 2):
        z = z0 + normal.inv_cdf(tail)
        ends.append(quantile(boots, normal.cdf(z0 + z / (1 - accel * z))))
    return ends[0], ends[1]


CACHED_PICKS_N = 256
"""Resample positions over at most this many units are kept (`_picks`): 2,000 resamples
of 256 small ints, a few MB; larger draws are made one resample at a time."""


def _picks(n: int, resamples: int, seed: int) -> Iterable[Sequence[int]]:
    """The positions each cluster resample of `n` units draws (`random.Random(seed)`, in
    order). They depend on nothing else, so intervals over as many units share one draw
    (a claim check's break-even search re-judges the same units about 16 times)."""
    if n <= CACHED_PICKS_N:
        return _kept_picks(n, resamples, seed)
    return _draw_picks(n, resamples, seed)


def _draw_picks(n: int, resamples: int, seed: int) -> Iterator[tuple[int, ...]]:
    rng = random.Random(seed)
    for _ in range(resamples):
        yield tuple(rng.randrange(n) for _ in range(n))


@lru_cache(maxsize=8)
def _kept_picks(n: int, resamples: int, seed: int) -> tuple[tuple[int, ...], ...]:
    return tuple(_draw_picks(n, resamples, seed))


def _resample(rng: random.Random, values: Sequence[float]) -> list[float]:
    return rng.choices(values, k=len(values))


def cdf_points(values: Sequence[float], max_points: int = 200) -> list[tuple[float, float]]:
    """Empirical CDF as (value, fraction <= value), thinned to at most `max_points`."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return []
    if n <= max_points:
        return [(v, (i + 1) / n) for i, v in enumerate(ordered)]
    indices = sorted({round(k * (n - 1) / (max_points - 1)) for k in range(max_points)})
    return [(ordered[i], (i + 1) / n) for i in indices]


@dataclass
class CurvePoint:
    """A median with its band (p25-p75) over `n` runs at one x."""

    x: float
    median: float
    low: float
    high: float
    n: int


def band(x: float, values: list[float]) -> CurvePoint:
    """The median and p25-p75 band of `values` at `x`."""
    return CurvePoint(
        x, median(values), quantile(values, 0.25), quantile(values, 0.75), len(values)
    )
