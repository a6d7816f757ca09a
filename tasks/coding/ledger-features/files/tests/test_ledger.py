from ledger import balance, apply_fee, largest_expense, monthly_totals


def test_balance():
    assert balance([{'kind': 'credit', 'amount': 50}, {'kind': 'debit', 'amount': 20}]) == 30


def test_apply_fee():
    assert apply_fee([], 3) == [{'kind': 'debit', 'amount': 3, 'memo': 'fee'}] and apply_fee([], 0) == []


def test_largest_expense():
    assert largest_expense([{'kind': 'debit', 'amount': 5}, {'kind': 'debit', 'amount': 9}]) == {'kind': 'debit', 'amount': 9}


def test_monthly_totals():
    assert monthly_totals([{'kind': 'credit', 'amount': 4, 'date': '2026-02-03'}, {'kind': 'debit', 'amount': 1, 'date': '2026-01-09'}]) == {'2026-01': -1, '2026-02': 4}
