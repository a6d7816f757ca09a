"""Order statistics shared by benchmarks, the simulator's timing records and reports.

One definition of a quantile for the whole project: linear interpolation between order
statistics (numpy's default, `statistics.quantiles(method="inclusive")`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = ["against_band", "ks_critical", "ks_one_sample", "ks_two_sample", "median", "quantile"]


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    """The median; NaN for no values."""
    return quantile(values, 0.5)


def ks_one_sample(
    values: Sequence[float],
    cdf: Callable[[float], float],
    cdf_left: Callable[[float], float] | None = None,
) -> float:
    """Kolmogorov-Smirnov distance between `values` and a distribution (its CDF).

    `cdf(x)` is P(X <= x) and `cdf_left(x)` is P(X < x) (defaults to `cdf`, right for a
    continuous distribution); ties in `values` are handled. NaN for no values.
    """
    if not values:
        return math.nan
    left = cdf_left or cdf
    ordered = sorted(values)
    n = len(ordered)
    distance = 0.0
    below = 0
    index = 0
    while index < n:
        x = ordered[index]
        upto = index
        while upto < n and ordered[upto] == x:
            upto += 1
        distance = max(distance, abs(cdf(x) - upto / n), abs(left(x) - below / n))
        below = upto
        index = upto
    return distance


def ks_two_sample(a: Sequence[float], b: Sequence[float]) -> float:
    """Kolmogorov-Smirnov distance between two samples' empirical CDFs; NaN if one is empty."""
    if not a or not b:
        return math.nan
    xs, ys = sorted(a), sorted(b)
    i = j = 0
    distance = 0.0
    while i < len(xs) and j < len(ys):
        x = min(xs[i], ys[j])
        while i < len(xs) and xs[i] == x:
            i += 1
        while j < len(ys) and ys[j] == x:
            j += 1
        distance = max(distance, abs(i / len(xs) - j / len(ys)))
    return distance


def ks_critical(n: int, m: int | None = None, alpha_c: float = 1.358) -> float:
    """The KS distance above which a fit is rejected at the 5% level (asymptotic):
    `1.358 / sqrt(n)` for one sample, `1.358 * sqrt((n + m) / (n m))` for two."""
    if n <= 0 or (m is not None and m <= 0):
        return math.inf
    if m is None:
        return alpha_c / math.sqrt(n)
    return alpha_c * math.sqrt((n + m) / (n * m))


def against_band(lo: float, hi: float, point: float, band_lo: float, band_hi: float) -> str:
    """Where a confidence interval [lo, hi] around `point` stands against a claimed band
    [band_lo, band_hi] (a point claim when they are equal), on an axis where larger means
    more: `below` / `above` (the whole CI outside the band), `inside` (the CI inside the
    band, or a point claim inside the CI), `consistent` (the CI straddles a band edge
    with the point inside the band), else `undecided`. Callers put it in their words."""
    if hi < band_lo:
        return "below"
    if lo > band_hi:
        return "above"
    if band_lo <= lo and hi <= band_hi:
        return "inside"
    if band_lo == band_hi and lo <= band_lo <= hi:
        return "inside"
    return "consistent" if band_lo <= point <= band_hi else "undecided"
