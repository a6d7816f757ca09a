from calc.text import count_vowels, initials, is_palindrome, repeat_each, reverse_words, shout, strip_digits, word_count


def test_shout():
    assert shout("hi") == "HI!"


def test_initials():
    assert initials("ada king lovelace") == "AKL"


def test_reverse_words():
    assert reverse_words("c a b") == "b a c"


def test_count_vowels():
    assert count_vowels("Queue") == 4


def test_is_palindrome():
    assert is_palindrome("Never odd or even")


def test_strip_digits():
    assert strip_digits("a1b22c") == "abc"


def test_repeat_each():
    assert repeat_each("ab", 2) == "aabb"


def test_word_count():
    assert word_count("  two   words ") == 2
