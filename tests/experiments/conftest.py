"""Fixtures: small experiment configs that run in seconds on the simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

FAST_OVERRIDES = {"decode_tps": 5000, "ttft_s": 0.0, "prefill_tps": None}


@pytest.fixture
def small_config(tmp_path: Path) -> dict[str, Any]:
    """A two-backend, one-task experiment writing into tmp_path."""
    return {
        "name": "unit",
        "backends": [
            {
                "name": "slowish",
                "profile": "slow-80",
                "overrides": {"decode_tps": 2000, "ttft_s": 0.0},
            },
            {"name": "fastish", "profile": "fast-750", "overrides": FAST_OVERRIDES},
        ],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "exp"),
        "budgets": {"max_steps": 20},
    }
