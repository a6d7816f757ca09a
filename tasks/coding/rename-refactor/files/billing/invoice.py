"""Invoices."""

from billing.money import fmt_money


def invoice_line(item, cents):
    """One invoice line."""
    return f"{item}: {fmt_money(cents)}"
