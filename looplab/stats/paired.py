"""A paired test of a shift: the sign-flip permutation test on per-pair differences.

Under "no shift" each pair's difference is as likely to have either sign, so the p-value
is the share of sign assignments whose |mean difference| is at least the observed one.
Exact (every assignment) up to `EXACT_MAX_PAIRS` pairs, else `resamples` seeded random
assignments (the observed one counted, so p is never 0). Distribution-free, no normality
assumed, and it needs no scipy (the project has none): the paired t-test's and Wilcoxon's
role for the small n of agent runs.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

__all__ = ["EXACT_MAX_PAIRS", "sign_flip_p"]

EXACT_MAX_PAIRS = 14
"""Pairs up to which every one of the 2^n sign assignments is enumerated (16,384)."""


def sign_flip_p(differences: Sequence[float], *, resamples: int = 20_000, seed: int = 0) -> float:
    """Two-sided p-value of "the mean difference is 0" by sign flips.

    Args:
        differences: one difference per pair (B - A of a task).
        resamples: random assignments when n > `EXACT_MAX_PAIRS`.
        seed: the random assignments' seed (same input, same p).

    Returns:
        The p-value in (0, 1]; 1.0 for no pairs or all-zero differences.
    """
    values = [float(d) for d in differences]
    n = len(values)
    if n == 0 or all(abs(v) < 1e-12 for v in values):
        return 1.0
    observed = abs(sum(values)) - 1e-9 * max(1.0, sum(abs(v) for v in values))
    if n <= EXACT_MAX_PAIRS:
        hits = total = 0
        for signs in itertools.product((1.0, -1.0), repeat=n):
            total += 1
            if abs(sum(s * v for s, v in zip(signs, values, strict=True))) >= observed:
                hits += 1
        return hits / total
    rng = random.Random(seed)
    hits = 1  # the observed assignment itself
    for _ in range(resamples):
        flipped = sum(v if rng.random() < 0.5 else -v for v in values)
        if abs(flipped) >= observed:
            hits += 1
    return hits / (resamples + 1)
