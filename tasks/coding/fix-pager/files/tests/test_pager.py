import pytest

from pager import page_count, paginate

ITEMS = list(range(25))


def test_first_page_holds_the_first_items():
    assert paginate(ITEMS, 1) == list(range(10))


def test_last_page_is_partial():
    assert paginate(ITEMS, 3) == [20, 21, 22, 23, 24]


def test_page_zero_is_an_error():
    with pytest.raises(ValueError):
        paginate(ITEMS, 0)


def test_page_count():
    assert page_count(ITEMS) == 3
    assert page_count([]) == 1
