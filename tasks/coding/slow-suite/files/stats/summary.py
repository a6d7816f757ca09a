"""Summary statistics."""


def median(values):
    """The median of `values` (definition: see the docs)."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def spread(values):
    """Largest minus smallest value."""
    return max(values) - min(values)
