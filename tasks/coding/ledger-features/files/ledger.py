"""A tiny ledger of entries: dicts with kind (credit/debit), amount, date, memo."""


def balance(entries):
    """See the ledger docs."""
    raise NotImplementedError("balance")


def apply_fee(entries, fee):
    """See the ledger docs."""
    raise NotImplementedError("apply_fee")


def largest_expense(entries):
    """See the ledger docs."""
    raise NotImplementedError("largest_expense")


def monthly_totals(entries):
    """See the ledger docs."""
    raise NotImplementedError("monthly_totals")
