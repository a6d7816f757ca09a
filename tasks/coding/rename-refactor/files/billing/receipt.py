"""Receipts."""

from billing.money import fmt_money


def receipt_total(lines):
    """The total line of a receipt for (item, cents) lines."""
    return "TOTAL " + fmt_money(sum(cents for _, cents in lines))
