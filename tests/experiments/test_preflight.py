"""Missing prerequisites are found before the first cell (with the fix per piece),
`looplab doctor` shows the same checks as a table, bundled configs run by name, and
`looplab run` ends with report.html written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from looplab.errors import ConfigError, PrerequisiteError
from looplab.experiments.guards.preflight import (
    MIN_FREE_BYTES,
    Needs,
    Probes,
    preflight,
    run_checks,
)
from looplab.experiments.locate import resolve_config

NO_ENGINE = {**os.environ, "DOCKER_HOST": "tcp://127.0.0.1:1", "LOOPLAB_LOG_FILE": os.devnull}
"""An environment whose Docker engine address answers nothing (a missing engine)."""


def _looplab(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "looplab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env or {**os.environ, "LOOPLAB_LOG_FILE": os.devnull},
        check=False,
    )


def test_every_missing_needed_piece_is_named_with_its_fix(tmp_path: Path) -> None:
    """No Chromium for a web task and too little disk: one error naming both with their
    fixes; a missing bubblewrap is reported but never blocks here."""
    probes = Probes(chromium=lambda: None, bwrap=lambda: None, free_bytes=lambda _: 1 << 20)
    with pytest.raises(PrerequisiteError) as raised:
        preflight(Needs(browser=True, output=tmp_path), probes)
    message = str(raised.value)
    assert "chromium: not found" in message and "apt-get install -y chromium" in message
    assert "disk: 0.0 GiB free" in message and "free disk space" in message
    assert "bubblewrap" not in message
    checks = run_checks(Needs(output=tmp_path), Probes(bwrap=lambda: None))
    bwrap = next(c for c in checks if c.name == "bubblewrap")
    assert not bwrap.ok and not bwrap.blocking and "apt-get install -y bubblewrap" in bwrap.fix
    assert MIN_FREE_BYTES == 1 << 30


def test_run_refuses_a_missing_docker_engine_before_any_cell(tmp_path: Path) -> None:
    """A docker-sandbox run whose engine does not answer exits 2 naming docker and its fix,
    having written nothing."""
    config = tmp_path / "c.yaml"
    out = tmp_path / "out"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "c",
                "backends": [{"name": "fast-750"}],
                "tasks": ["coding/fix-pager"],
                "sandbox": {"kind": "docker"},
                "output_dir": str(out),
            }
        )
    )
    result = _looplab("run", str(config), cwd=tmp_path, env=NO_ENGINE)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "missing before the first cell: docker" in result.stderr
    assert "start dockerd" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def test_doctor_prints_the_checks_as_a_table(tmp_path: Path) -> None:
    """`looplab doctor` lists every check with its status, what needs it, and the fix of a
    missing one (here the Docker engine)."""
    result = _looplab("doctor", cwd=tmp_path, env=NO_ENGINE)
    assert result.returncode == 0, result.stderr[-2000:]
    for name in ("chromium", "docker", "bubblewrap", "disk", "ports"):
        assert name in result.stdout
    docker = next(line for line in result.stdout.splitlines() if "docker " in line)
    assert "missing" in docker and "start dockerd" in result.stdout


def test_bundled_configs_run_by_name() -> None:
    """`quickstart` and `claim.yaml` name the bundled configs; a typo gets "did you mean"."""
    assert resolve_config(Path("quickstart")).name == "quickstart.yaml"
    assert resolve_config(Path("claim.yaml")).is_file()
    with pytest.raises(ConfigError, match="did you mean 'quickstart'") as raised:
        resolve_config(Path("quickstrat"))
    assert "claim" in str(raised.value)


def test_run_ends_with_the_report_written(tmp_path: Path) -> None:
    """A finished `looplab run` writes report.html into its output directory and says so."""
    config = tmp_path / "c.yaml"
    out = tmp_path / "out"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "c",
                "backends": [{"name": "fast-750"}],
                "tasks": ["coding/fix-pager"],
                "clock": "virtual",
                "output_dir": str(out),
            }
        )
    )
    result = _looplab("run", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (out / "report.html").stat().st_size > 10_000
    assert f"report: {out / 'report.html'}" in result.stdout
