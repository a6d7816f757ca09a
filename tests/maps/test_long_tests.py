"""tests/long-tests.txt (the tests started first) names only tests that exist."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONG_TESTS, _long_tests

REPO = Path(__file__).resolve().parents[2]


def test_every_long_test_exists() -> None:
    """Each entry is `file::test` of a file in tests/ that defines that test function."""
    missing = []
    for node in sorted(_long_tests()):
        file, _, name = node.partition("::")
        path = REPO / file
        if not path.is_file() or f"def {name}(" not in path.read_text(encoding="utf-8"):
            missing.append(node)
    assert missing == [], f"{LONG_TESTS.name} names tests that are gone: {missing}"
