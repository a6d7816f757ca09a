import pytest

from stats.summary import median


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        median([])


def test_two_values():
    assert median([1, 2]) == 1.5
