from calc.lists import chunk, count_if, dedupe, first_or_none, flatten, last_n, pairwise_sums, rotate


def test_first_or_none():
    assert first_or_none([3, 4]) == 3 and first_or_none([]) is None


def test_dedupe():
    assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_chunk():
    assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_flatten():
    assert flatten([[1, 2], [], [3]]) == [1, 2, 3]


def test_rotate():
    assert rotate([1, 2, 3], 4) == [2, 3, 1]


def test_pairwise_sums():
    assert pairwise_sums([1, 2, 4]) == [3, 6]


def test_count_if():
    assert count_if([1, 2, 3, 4], lambda x: x > 2) == 2


def test_last_n():
    assert last_n([1, 2, 3], 0) == [] and last_n([1, 2, 3], 2) == [2, 3]
