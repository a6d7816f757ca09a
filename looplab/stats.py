"""Order statistics shared by benchmarks, the simulator's timing records and reports.

One definition of a quantile for the whole project: linear interpolation between order
statistics (numpy's default, `statistics.quantiles(method="inclusive")`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["median", "quantile"]


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
