import time

import pytest

from stats.summary import median, spread


@pytest.mark.parametrize("size", [10_000, 20_000, 40_000, 80_000])
def test_median_of_large_odd_samples(size):
    time.sleep(0.4)  # stands in for loading a large fixture
    values = list(range(size + 1))
    assert median(values) == size // 2


def test_median_of_even_sample():
    assert median([4, 1, 3, 2]) == 2.5


def test_spread():
    time.sleep(0.3)
    assert spread([3, 9, 1]) == 8
