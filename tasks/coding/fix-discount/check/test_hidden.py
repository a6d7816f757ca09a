from shop.pricing import order_total


def test_small_discount():
    assert order_total([19.99, 5.01], 20) == 24.0


def test_cap_exactly_fifty():
    assert order_total([10], 50) == order_total([10], 95) == 6.0
