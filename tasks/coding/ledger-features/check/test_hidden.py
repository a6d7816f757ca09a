from ledger import balance, largest_expense, monthly_totals


def test_empty():
    assert balance([]) == 0 and largest_expense([]) is None and monthly_totals([]) == {}
