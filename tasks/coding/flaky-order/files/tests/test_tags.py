from tags import unique_tags


def test_order_of_first_appearance():
    tags = ["Zeta", "alpha", " mu ", "ALPHA", "beta", "omega", "kappa", "zeta"]
    assert unique_tags(tags) == ["zeta", "alpha", "mu", "beta", "omega", "kappa"]


def test_blank_tags_dropped():
    assert unique_tags(["x", " ", ""]) == ["x"]
