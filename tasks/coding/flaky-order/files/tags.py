"""Tag helpers."""


def unique_tags(tags):
    """The distinct tags of `tags`, normalised (order: see the docs)."""
    return list({tag.strip().lower() for tag in tags if tag.strip()})
