"""The generic top-level package names resolve to this repository's own packages."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["looplab", "agents", "tools", "sandboxes", "experiments"])
def test_package_is_ours(name: str) -> None:
    """`import <name>` loads the package inside this repository, not a same-named dist."""
    module = importlib.import_module(name)
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(REPO / name)


def test_core_imports_no_outer_package() -> None:
    """`looplab` (cli.py, the wiring place, aside) imports none of the outer packages."""
    outer = ("agents", "tools", "sandboxes", "experiments")
    offenders = []
    for path in (REPO / "looplab").rglob("*.py"):
        if path.name == "cli.py":
            continue
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith(
                tuple(f"{kw} {pkg}" for kw in ("import", "from") for pkg in outer)
            ):
                offenders.append(f"{path.relative_to(REPO)}: {stripped}")
    assert offenders == []
