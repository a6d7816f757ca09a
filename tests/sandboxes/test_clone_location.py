"""Where the clone lives changes nothing a local sandbox shows (issue 35).

The project's Python environment is bound at its host path; the directories above it are
traverse-only inside the sandbox, so a clone in a home directory (root's included) shows
its own path and nothing of its neighbours.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes import _confine
from looplab.sandboxes.factory import open_sandbox


@pytest.mark.bwrap
async def test_a_clone_in_a_home_shows_no_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An environment under a home with other entries: reachable, its parents not listable."""
    home = tmp_path / "home"
    env = home / "clone" / ".venv"
    env.mkdir(parents=True)
    (env / "marker").write_text("env\n")
    (home / "neighbour-secret").mkdir()
    (home / "clone" / "sibling-file").write_text("x")
    for folder in (tmp_path, home, home / "clone", env):
        folder.chmod(0o755)
    (env / "marker").chmod(0o644)
    real = _confine.project_python_dirs()  # the running environment first
    monkeypatch.setattr(_confine, "project_python_dirs", lambda: [*real, env])
    box = await open_sandbox(SandboxConfig(kind="local", isolation="auto"))
    try:
        assert box.isolated
        shown = await box.exec(f"ls {home} {home / 'clone'} 2>/dev/null; cat {env / 'marker'}")
        assert shown.stdout == "env\n"
        python = await box.exec(["python3", "-c", "import sys; print(sys.prefix)"])
        assert python.stdout.strip() == str(real[0])
    finally:
        await box.close()


async def test_a_tasks_pytest_loads_none_of_the_projects_plugins() -> None:
    """The project's Python in a local sandbox runs a task's pytest bare: the plugins of
    looplab's own environment (hypothesis, xdist, ...) are not loaded, as in the Docker
    image, where they would cost each of a task's `pytest` runs over a second."""
    host = {e.name for e in entry_points(group="pytest11")}
    assert "hypothesispytest" in host  # the environment the sandbox runs has them
    async with await open_sandbox(SandboxConfig(kind="local", isolation="auto")) as box:
        await box.write_file("test_bare.py", "def test_one():\n    assert True\n")
        done = await box.exec("python3 -m pytest -p no:cacheprovider --trace-config test_bare.py")
    assert done.exit_code == 0, done.stdout[-2000:]
    assert "1 passed" in done.stdout
    assert "hypothesis" not in done.stdout and "xdist" not in done.stdout, done.stdout[-2000:]
