import pathlib


def test_no_module_mentions_the_old_name():
    for path in pathlib.Path("billing").glob("*.py"):
        assert "fmt_money" not in path.read_text(), path
