from tags import unique_tags


def test_many_orders():
    words = [f"tag{i}" for i in range(30, 0, -1)]
    assert unique_tags(words + words) == words
