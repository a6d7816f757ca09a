"""Installed names: everything importable is under `looplab.`; generic names stay free."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix).resolve()


def _ours(path: Path) -> bool:
    """In this repository's sources (its virtual environment, which may live inside, aside)."""
    return path.is_relative_to(REPO) and not path.is_relative_to(VENV)


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
    assert not any(_ours(p) for p in found), (name, found)


@pytest.mark.parametrize("name", ["agents", "tools", "sandboxes", "experiments"])
def test_subpackage_is_ours(name: str) -> None:
    """`looplab.<name>` loads the package inside this repository."""
    module = importlib.import_module(f"looplab.{name}")
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(REPO / "looplab" / name)


def test_an_experiment_runs_beside_openai_agents(tmp_path: Path) -> None:
    """With openai-agents installed (its top-level `agents`), `looplab run` still works."""
    import importlib.metadata

    assert importlib.metadata.version("openai-agents")  # the dev extra installs it
    probe = "import agents, sys; print(agents.__file__)"
    theirs = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert "site-packages" in theirs and not _ours(Path(theirs).resolve())
    config = tmp_path / "tiny.yaml"
    config.write_text(
        f"name: tiny\noutput_dir: {tmp_path / 'out'}\nclock: virtual\n"
        "backends: [{name: fast-750}]\ntasks: [coding/fix-pager]\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "looplab", "--no-log-file", "run", str(config)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert len(list((tmp_path / "out" / "traces").glob("*.jsonl"))) == 1


IGNORED_FOLDER_NAMES = frozenset({"build", "dist", "out", "target", "lib", "bin", "env", "venv"})
"""Folder names that common ignore templates (GitHub's Python .gitignore, editors, linters,
packagers) skip as build output or environments: a package folder so named vanishes from
tools (the trace-event builder was `traces/build/` until issue 48)."""


def test_no_package_folder_has_an_ignored_name() -> None:
    """No folder of modules under looplab/ is named like build output (`build`, `dist`,
    `lib`, ...); a folder left holding only `__pycache__` by an older checkout is not one."""
    named = [
        p.relative_to(REPO).as_posix()
        for p in (REPO / "looplab").rglob("*")
        if p.is_dir() and p.name in IGNORED_FOLDER_NAMES and any(p.glob("*.py"))
    ]
    assert not named, named
