"""calc.numbers: small helpers (see the docs for each contract)."""

import math


def clamp(x, low, high):
    """Return x limited to [low, high]."""
    return max(low, min(x, high))


def mean(xs):
    """Return arithmetic mean."""
    return sum(xs) / len(xs)


def is_even(n):
    """Return True for even integers."""
    return n % 2 == 0


def percent(part, whole):
    """Return part as a percentage of whole, one decimal."""
    return round(100 * part / whole, 1)


def digit_sum(n):
    """Return sum of the decimal digits of |n|."""
    return sum(int(d) for d in str(abs(n)))


def factorial(n):
    """Return n! (0! is 1)."""
    return math.prod(range(1, n + 1))


def gcd(a, b):
    """Return greatest common divisor."""
    return math.gcd(a, b)


def sign(x):
    """Return -1, 0 or 1."""
    return (x > 0) - (x < 0)
