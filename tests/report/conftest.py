"""Fixtures: one small real experiment (virtual clock, seconds) and an imported trace."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.traces.importers import import_runs, write_runs

REPO = Path(__file__).resolve().parents[2]
MINI_SWE = REPO / "tests/fixtures/external-traces/mini-swe-agent"


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root with `quick/` (a real two-profile experiment) and `imported/` (mini-swe-agent)."""
    root = tmp_path_factory.mktemp("runs")
    config = {
        "name": "quick",
        "backends": [
            {"name": "slow-80", "profile": "slow-80"},
            {"name": "fast-750", "profile": "fast-750"},
        ],
        "tasks": ["coding/fix-pager", "coding/nbugs-2", "coding/nbugs-3"],
        "clock": "virtual",
        "concurrency": 3,
        "output_dir": str(root / "quick"),
        "budgets": {"max_steps": 20},
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    result = asyncio.run(runner.run())
    assert all(o.status == "done" for o in result.outcomes)
    fixture = MINI_SWE / "sqlfluff__sqlfluff-2419.traj.json"
    _, imported = import_runs("auto", fixture)
    write_runs(imported, root / "imported")
    return root
