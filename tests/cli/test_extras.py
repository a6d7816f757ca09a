"""The base install (no extras) serves, re-times, sweeps and reports; the rest names its extra."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from looplab.bench.synthetic import write_synthetic_experiment
from looplab.extras import EXTRAS

BLOCKER = textwrap.dedent(
    """
    import sys

    class _Blocked:
        NAMES = {names!r}

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.NAMES:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, _Blocked())
    """
)


@pytest.fixture
def base_only(tmp_path: Path) -> dict[str, str]:
    """An environment in which every extra's modules are unimportable (a base install)."""
    blocked = sorted({m for modules in EXTRAS.values() for m in modules})
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER.format(names=blocked))
    return {**os.environ, "PYTHONPATH": str(site), "LOOPLAB_LOG_FILE": os.devnull}


def _looplab(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "looplab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_blocker_blocks(base_only: dict[str, str], tmp_path: Path) -> None:
    """The fixture really hides the extras (so the tests below cannot pass vacuously)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import duckdb"], env=base_only, capture_output=True, check=False
    )
    assert probe.returncode == 1 and b"No module named 'duckdb'" in probe.stderr


def test_base_commands_work_without_extras(base_only: dict[str, str], tmp_path: Path) -> None:
    """sweep, replay --mode virtual, report, export and schema run with no extra installed."""
    experiment = write_synthetic_experiment(tmp_path / "syn", 6)
    for args in (
        ["sweep", str(experiment), "--rates", "80,750"],
        ["replay", str(experiment), "-p", "fast-750", "-o", str(tmp_path / "replayed")],
        ["report", str(experiment), "-o", str(tmp_path / "r.html")],
        ["export", "otel", str(experiment), "-o", str(tmp_path / "otel.json")],
        ["profiles"],
    ):
        result = _looplab(base_only, *args, cwd=tmp_path)
        assert result.returncode == 0, (args, result.stderr)
    assert (tmp_path / "r.html").stat().st_size > 10_000
    assert len(list((tmp_path / "replayed").glob("*.jsonl"))) == 6


def test_run_names_the_missing_extra(base_only: dict[str, str], tmp_path: Path) -> None:
    """`looplab run` without the agents extra exits 2 naming `pip install 'looplab[...]'`."""
    config = tmp_path / "c.yaml"
    config.write_text("name: c\nbackends: [{name: fast-750}]\ntasks: [coding/fix-pager]\n")
    result = _looplab(base_only, "run", str(config), cwd=tmp_path)
    assert result.returncode == 2
    assert "pip install 'looplab[agents]'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "runs").exists()


def test_collect_names_the_missing_extra(base_only: dict[str, str], tmp_path: Path) -> None:
    """`looplab collect` without opentelemetry-proto exits 2 naming looplab[collect], before
    it binds a port or makes the output directory."""
    result = _looplab(base_only, "collect", "-o", "out", "--port", "0", cwd=tmp_path)
    assert result.returncode == 2 and "pip install 'looplab[collect]'" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()


def test_agents_extra_installs_what_bundled_checks_run() -> None:
    """Every module a bundled task's check runs with `python3 -m` comes with looplab[agents]
    (the installed metadata, not only the dev extra): checks run with looplab's own Python."""
    from importlib.metadata import requires

    from looplab.tasks.discovery import read_all_tasks

    needed = {
        words[words.index("-m") + 1]
        for task in read_all_tasks()
        if "-m" in (words := task.spec.check.command.split())
    }
    assert "pytest" in needed  # the bundled coding tasks' checks
    agents = {
        r.split(";")[0].split("<")[0].split(">")[0].strip()
        for r in requires("looplab") or []
        if "extra == 'agents'" in r
    }
    assert needed <= agents, f"task checks need {needed - agents}, not in looplab[agents]"
    assert needed <= set(EXTRAS["agents"])
