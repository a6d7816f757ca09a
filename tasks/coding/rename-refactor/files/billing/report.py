"""Monthly reports."""

from billing import money


def report(month, cents):
    """One report line."""
    return f"{month}: {money.fmt_money(cents)}"
