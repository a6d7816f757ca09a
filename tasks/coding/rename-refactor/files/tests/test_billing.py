import billing.money
from billing.invoice import invoice_line
from billing.money import format_money
from billing.receipt import receipt_total
from billing.report import report


def test_format_money():
    assert format_money(1234) == "12.34 EUR"


def test_old_name_is_gone():
    assert not hasattr(billing.money, "fmt_money")


def test_users():
    assert invoice_line("tea", 250) == "tea: 2.50 EUR"
    assert receipt_total([("a", 100), ("b", 5)]) == "TOTAL 1.05 EUR"
    assert report("May", 99) == "May: 0.99 EUR"
