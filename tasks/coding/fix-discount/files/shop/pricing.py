"""Order pricing: subtotal, discount, tax."""

TAX_RATE = 0.2


def order_total(prices, discount_percent=0):
    """Total to pay for items at `prices` with a percentage discount (rules: see the docs)."""
    subtotal = sum(prices)
    taxed = subtotal * (1 + TAX_RATE)
    return round(taxed - discount_percent, 2)
