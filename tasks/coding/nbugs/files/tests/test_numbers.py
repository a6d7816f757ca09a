from calc.numbers import clamp, digit_sum, factorial, gcd, is_even, mean, percent, sign


def test_clamp():
    assert clamp(15, 0, 10) == 10 and clamp(-1, 0, 10) == 0


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_is_even():
    assert is_even(4) and not is_even(7)


def test_percent():
    assert percent(1, 3) == 33.3


def test_digit_sum():
    assert digit_sum(-123) == 6 and digit_sum(45) == 9


def test_factorial():
    assert factorial(5) == 120 and factorial(0) == 1


def test_gcd():
    assert gcd(12, 18) == 6


def test_sign():
    assert sign(0) == 0 and sign(-3) == -1
