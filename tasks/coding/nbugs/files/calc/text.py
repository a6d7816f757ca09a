"""calc.text: small helpers (see the docs for each contract)."""

def shout(s):
    """Return upper-cases s and appends one exclamation mark."""
    return s.upper() + "!"


def initials(name):
    """Return first letter of each word, upper-cased."""
    return "".join(w[0].upper() for w in name.split())


def reverse_words(s):
    """Return the words of s in reverse order."""
    return " ".join(reversed(s.split()))


def count_vowels(s):
    """Return number of vowels a, e, i, o, u (any case)."""
    return sum(ch in "aeiou" for ch in s.lower())


def is_palindrome(s):
    """Return True when s reads the same backwards, ignoring spaces and case."""
    return s.replace(" ", "").lower() == s.replace(" ", "").lower()[::-1]


def strip_digits(s):
    """Return s without its digits."""
    return "".join(ch for ch in s if not ch.isdigit())


def repeat_each(s, k):
    """Return every character of s repeated k times in place."""
    return "".join(ch * k for ch in s)


def word_count(s):
    """Return number of whitespace-separated words."""
    return len(s.split())
