"""Exact Shapley values: a difference taken apart into its factors, order-independently.

For factors F (k of them) and a value function v over subsets of F (here: the task time
with the factors in the subset at their fast values, the rest at their slow ones), factor
i's share is the average over every order of switching the factors on of what switching i
adds:

    phi_i = sum over S not holding i of |S|! (k - |S| - 1)! / k! x (v(S + i) - v(S))

The shares sum to v(F) - v(empty) exactly (efficiency), whatever interactions the
factors have. 2^k evaluations of v (each subset once).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = ["MAX_FACTORS", "shapley"]

MAX_FACTORS = 10
"""The most factors taken apart (2^10 evaluations)."""


def shapley(factors: Sequence[str], value: Callable[[frozenset[str]], float]) -> dict[str, float]:
    """Each factor's Shapley value (module docstring).

    Raises:
        ValueError: more than `MAX_FACTORS` factors, or a factor named twice.
    """
    k = len(factors)
    if k > MAX_FACTORS or len(set(factors)) != k:
        raise ValueError(f"1..{MAX_FACTORS} distinct factors, got {list(factors)}")
    values = {
        mask: value(frozenset(f for i, f in enumerate(factors) if mask >> i & 1))
        for mask in range(1 << k)
    }
    weights = [math.factorial(s) * math.factorial(k - s - 1) / math.factorial(k) for s in range(k)]
    shares: dict[str, float] = {}
    for i, factor in enumerate(factors):
        bit = 1 << i
        shares[factor] = sum(
            weights[mask.bit_count()] * (values[mask | bit] - values[mask])
            for mask in range(1 << k)
            if not mask & bit
        )
    return shares
