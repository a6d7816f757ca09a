"""calc.lists: small helpers (see the docs for each contract)."""

def first_or_none(xs):
    """Return the first element, or None for an empty list."""
    return xs[0] if xs else None


def dedupe(xs):
    """Return xs without repeats, in order of first appearance."""
    return list(dict.fromkeys(xs))


def chunk(xs, size):
    """Return xs cut into consecutive lists of size (the last may be shorter)."""
    return [xs[i : i + size] for i in range(0, len(xs), size)]


def flatten(xss):
    """Return one list of every element of the inner lists."""
    return [x for xs in xss for x in xs]


def rotate(xs, k):
    """Return xs rotated left by k (k may exceed the length)."""
    return xs[k % len(xs) :] + xs[: k % len(xs)] if xs else []


def pairwise_sums(xs):
    """Return sums of neighbouring elements."""
    return [a + b for a, b in zip(xs, xs[1:])]


def count_if(xs, predicate):
    """Return number of elements for which predicate is true."""
    return sum(1 for x in xs if predicate(x))


def last_n(xs, n):
    """Return the last n elements (none for n = 0)."""
    return xs[-n:] if n else []
