from shop.pricing import order_total


def test_no_discount():
    assert order_total([10, 20]) == 36.0


def test_discount_before_tax():
    assert order_total([100], 10) == 108.0


def test_discount_is_capped():
    assert order_total([100], 80) == 60.0
