"""Pagination helpers for list views."""


def paginate(items, page, per_page=10):
    """Return the items shown on `page` (numbering: see the docs)."""
    start = page * per_page
    return items[start : start + per_page]


def page_count(items, per_page=10):
    """Number of pages needed to show every item (at least 1)."""
    return max(1, (len(items) + per_page - 1) // per_page)
