from calc.mapping import count_words, group_by_len, invert, key_of_max, merge, nested_get, pick, total


def test_invert():
    assert invert({"a": 1}) == {1: "a"}


def test_merge():
    assert merge({"x": 1}, {"x": 2}) == {"x": 2}


def test_pick():
    assert pick({"a": 1, "b": 2}, ["a", "z"]) == {"a": 1}


def test_count_words():
    assert count_words("A a b") == {"a": 2, "b": 1}


def test_key_of_max():
    assert key_of_max({"a": 5, "b": 9, "c": 1}) == "b"


def test_group_by_len():
    assert group_by_len(["ab", "c", "de"]) == {1: ["c"], 2: ["ab", "de"]}


def test_total():
    assert total({"a": 2, "b": 3}) == 5


def test_nested_get():
    assert nested_get({"a": {"b": 7}}, "a.b") == 7 and nested_get({}, "x.y") is None
