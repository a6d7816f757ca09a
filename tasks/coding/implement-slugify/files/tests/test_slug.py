from textkit.slug import slugify


def test_lowercase_and_dashes():
    assert slugify("Hello World") == "hello-world"


def test_accents_are_folded():
    assert slugify("Crème Brûlée") == "creme-brulee"


def test_punctuation_runs_become_one_dash():
    assert slugify("  What?! Really...  ") == "what-really"


def test_long_titles_cut_at_a_word():
    assert slugify("one two three four", max_length=12) == "one-two"
