import pytest

from pager import paginate


def test_custom_page_size():
    assert paginate(list("abcdefg"), 2, per_page=3) == ["d", "e", "f"]


def test_page_past_the_end_is_empty():
    assert paginate(list(range(5)), 4, per_page=2) == []


def test_negative_page_is_an_error():
    with pytest.raises(ValueError):
        paginate([1, 2], -1)
