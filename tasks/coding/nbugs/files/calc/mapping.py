"""calc.mapping: small helpers (see the docs for each contract)."""

import collections
import functools


def invert(d):
    """Return values become keys and keys values."""
    return {v: k for k, v in d.items()}


def merge(a, b):
    """Return a updated with b (b wins on conflicts)."""
    return {**a, **b}


def pick(d, keys):
    """Return only the given keys that d has."""
    return {k: d[k] for k in keys if k in d}


def count_words(s):
    """Return word frequencies, case-insensitive."""
    return dict(collections.Counter(s.lower().split()))


def key_of_max(d):
    """Return the key with the largest value."""
    return max(d, key=d.get)


def group_by_len(words):
    """Return words grouped by length, lengths ascending."""
    return {n: [w for w in words if len(w) == n] for n in sorted({len(w) for w in words})}


def total(d):
    """Return sum of the values."""
    return sum(d.values())


def nested_get(d, path):
    """Return the value at a dotted path, None when missing."""
    return functools.reduce(lambda node, key: node.get(key, {}) if isinstance(node, dict) else {}, path.split("."), d) or None
