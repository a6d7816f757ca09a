"""Contained by default: `looplab run` on a host without bubblewrap (hidden from PATH).

Real `looplab run` processes: scripted cells run with a warning line naming what is not
contained; a real model's cells are refused (exit 2, the fix named, nothing written)
unless `sandbox.isolation: none` opts in, which still prints the warning.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = [pytest.mark.reliability]


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with every program of /usr/bin and /bin but bubblewrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in (Path("/usr/bin"), Path("/bin")):
        for program in folder.iterdir():
            link = bin_dir / program.name
            if program.name != "bwrap" and not link.exists():
                link.symlink_to(program)
    return f"{Path(sys.executable).parent}:{bin_dir}"


def _run(
    tmp_path: Path, config: dict[str, Any], *args: str, path: str
) -> subprocess.CompletedProcess[str]:
    """`looplab run` of `config` with PATH set to `path`."""
    file = tmp_path / "exp.yaml"
    file.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PATH": path, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "300"}
    done = subprocess.run(
        [sys.executable, "-m", "looplab", "run", str(file), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    done.stderr = " ".join(done.stderr.split())  # as one line (the console wraps)
    return done


def _scripted(tmp_path: Path) -> dict[str, Any]:
    return {
        "name": "scripted",
        "clock": "virtual",
        "backends": [{"name": "fast", "profile": "fast-750"}],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "exp"),
        "budgets": {"max_steps": 1},
    }


def _real(tmp_path: Path, base_url: str = "http://127.0.0.1:9/v1") -> dict[str, Any]:
    return {
        "name": "real",
        "backends": [{"name": "api", "kind": "real", "base_url": base_url, "model": "m"}],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "exp"),
        "agent": {"retry": {"max_attempts": 1}},
        "budgets": {"max_steps": 2},
    }


def test_scripted_cells_run_without_bubblewrap_with_a_warning(tmp_path: Path) -> None:
    """Without bwrap a scripted cell runs and the run prints what is not contained."""
    done = _run(tmp_path, _scripted(tmp_path), path=_path_without_bwrap(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "WARNING: local sandbox NOT CONTAINED (no bwrap on PATH)" in done.stderr
    assert "with its network" in done.stderr
    assert len(list((tmp_path / "exp" / "traces").glob("*.jsonl"))) == 1


def test_a_real_model_is_refused_without_bubblewrap(tmp_path: Path, campaign: Any) -> None:
    """Without bwrap a real model's cells are refused: exit 2, the fix, nothing written."""
    done = _run(tmp_path, _real(tmp_path), path=_path_without_bwrap(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "backend 'api' (a real model)" in done.stderr
    assert "apt-get install -y bubblewrap" in done.stderr
    assert "sandbox.isolation=none" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "exp").exists()
    campaign.add("uncontained refused")


def test_isolation_none_opts_in_and_still_warns(tmp_path: Path, broken_api: str) -> None:
    """`sandbox.isolation=none` lets a real model's cells run uncontained, with the warning."""
    done = _run(
        tmp_path,
        _real(tmp_path, broken_api),
        "-s",
        "sandbox.isolation=none",
        path=_path_without_bwrap(tmp_path),
    )
    assert "no bubblewrap on PATH" not in done.stderr
    assert "WARNING: local sandbox NOT CONTAINED (sandbox.isolation is none)" in done.stderr
    assert done.returncode == 1, done.stderr  # it ran: the API fails every call
    assert "nothing was measured" in done.stderr
    assert len(list((tmp_path / "exp" / "traces").glob("*.jsonl"))) == 1


@pytest.mark.bwrap
def test_no_warning_when_contained(tmp_path: Path) -> None:
    """With bubblewrap on PATH the same scripted run prints no containment warning."""
    done = _run(tmp_path, _scripted(tmp_path), path=os.environ["PATH"])
    assert done.returncode == 0, done.stderr
    assert "NOT CONTAINED" not in done.stderr


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"backends": [{"name": "rec", "profile": "fast-750", "policy": "replay"}]}, "policy"),
        (
            {"wrapped": [{"name": "mine", "command": ["true"]}], "agents": ["mine"]},
            "wrapped agent 'mine'",
        ),
    ],
    ids=["replay-policy", "wrapped-agent"],
)
def test_other_non_scripted_cells_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changes: dict[str, Any], named: str
) -> None:
    """Without bwrap on PATH a replayed recording or a wrapped agent is refused too."""
    from looplab.config import validate_model
    from looplab.errors import PrerequisiteError
    from looplab.experiments.config import ExperimentConfig
    from looplab.experiments.runner import ExperimentRunner

    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    config = validate_model(ExperimentConfig, {**_scripted(tmp_path), **changes})
    with pytest.raises(PrerequisiteError, match="no bubblewrap on PATH") as refused:
        ExperimentRunner(config).validate()
    assert named in str(refused.value)
    allowed = config.model_copy(
        update={"sandbox": config.sandbox.model_copy(update={"isolation": "none"})}
    )
    runner = ExperimentRunner(allowed)
    runner.validate()
    assert any("NOT CONTAINED" in line for line in runner.warnings)
