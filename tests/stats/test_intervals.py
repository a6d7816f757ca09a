"""looplab.stats: order statistics and the speedup intervals every view uses."""

from __future__ import annotations

import math
import random

from looplab.stats.intervals import MIN_PAIRED_N, bootstrap_speedup, speedup_ci
from looplab.stats.order import ks_two_sample, median, quantile


def test_median_and_quantiles_interpolate_between_order_statistics() -> None:
    """Median of an even count is the mean of the middle two; quantiles interpolate."""
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert quantile([0.0, 10.0], 0.25) == 2.5
    assert quantile([5.0], 0.9) == 5.0


def test_paired_speedup_interval_brackets_a_known_ratio() -> None:
    """Tasks 3x faster with 5% noise: the 95% interval holds 3 and is narrow."""
    rng = random.Random(1)
    slow = {f"t{i}": [30.0 * (1 + 0.05 * rng.random()) for _ in range(3)] for i in range(8)}
    fast = {task: [t / 3.0 for t in times] for task, times in slow.items()}
    low, high = bootstrap_speedup(slow, fast, seed=0)
    assert low <= 3.0 <= high
    assert high - low < 0.3


def test_no_interval_below_the_minimum_pairing() -> None:
    """Fewer paired tasks than MIN_PAIRED_N (and too few runs) give no interval at all."""
    slow = {f"t{i}": [10.0 + i] for i in range(MIN_PAIRED_N - 1)}
    fast = {task: [5.0] for task in slow}
    assert speedup_ci(slow, fast) is None


def test_ks_two_sample_separates_shifted_samples() -> None:
    """The KS distance of a sample with itself is 0; of disjoint samples it is 1."""
    a = [float(i) for i in range(50)]
    assert ks_two_sample(a, a) == 0.0
    assert math.isclose(ks_two_sample(a, [x + 100 for x in a]), 1.0)
