"""Money formatting."""


def fmt_money(cents):
    """Format an amount in cents as euros, e.g. 1234 -> '12.34 EUR'."""
    return f"{cents // 100}.{cents % 100:02d} EUR"
