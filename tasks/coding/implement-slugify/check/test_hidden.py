from textkit.slug import slugify


def test_digits_kept():
    assert slugify("Top 10 Tips") == "top-10-tips"


def test_empty():
    assert slugify("!!!") == ""
