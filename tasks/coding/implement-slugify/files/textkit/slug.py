"""URL slugs for titles."""


def slugify(text, max_length=50):
    """Return the slug of `text` (rules: see the docs)."""
    raise NotImplementedError
