"""Intervals for a proportion (a success rate): the Wilson score interval.

Wilson's interval (Wilson 1927; Brown, Cai & DasGupta 2001 recommend it for small n) stays
inside [0, 1] and is not degenerate at 0 or n successes, where the normal ("Wald")
interval collapses to a point: 4 of 4 solved gives 51%-100% at 95%, not 100%-100%.
"""

from __future__ import annotations

import math

__all__ = ["Z95", "wilson"]

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `successes` out of `n` trials (95% by default); None
    for no trials.

    Raises:
        ValueError: `successes` outside 0..n.
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} outside 0..{n}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)
