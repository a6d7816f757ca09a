"""Installed names: everything importable is under `looplab.`; generic names stay free."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["agents", "tools", "sandboxes", "experiments", "tasks"])
def test_generic_name_is_not_ours(name: str, tmp_path: Path) -> None:
    """The installed environment does not resolve `<name>` to this repository."""
    probe = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.find_spec({name!r})\n"
        "print('' if spec is None else '|'.join([str(spec.origin)] + "
        "list(spec.submodule_search_locations or [])))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    found = [Path(p).resolve() for p in out.split("|") if p and p not in ("None", "namespace")]
    assert not any(p.is_relative_to(REPO) for p in found), (name, found)


@pytest.mark.parametrize("name", ["agents", "tools", "sandboxes", "experiments"])
def test_subpackage_is_ours(name: str) -> None:
    """`looplab.<name>` loads the package inside this repository."""
    module = importlib.import_module(f"looplab.{name}")
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(REPO / "looplab" / name)
