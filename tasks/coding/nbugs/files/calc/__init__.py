"""calc: a grab-bag of small helpers."""
