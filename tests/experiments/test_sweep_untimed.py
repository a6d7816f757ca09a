"""`looplab sweep` over runs with nothing to re-time says so instead of printing 0.00x.

It sits in tests/experiments/ without importing looplab.experiments: it runs the `sweep`
command (`experiments/commands.py`) in a process, as its users do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _sweep(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "LOOPLAB_LOG_FILE": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "looplab", "sweep", *args, "--rates", "80,750"],
        capture_output=True, text=True, timeout=120, env=env, check=False, cwd=REPO,
    )  # fmt: skip


def test_sweep_of_untimed_runs_says_no_timed_runs() -> None:
    """SWE-agent demonstrations (no model or tool times): "no timed runs", n/a, no 0.00x;
    the JSON table is empty rather than a row of zeros."""
    result = _sweep("corpus/swe-agent")
    assert result.returncode == 0, result.stderr
    assert "no timed runs" in result.stdout and "n/a" in result.stdout
    assert "0.00x" not in result.stdout
    assert json.loads(_sweep("corpus/swe-agent", "-o", "-").stdout) == []


def test_untimed_runs_are_left_out_of_a_mixed_sweep() -> None:
    """Timed and untimed runs together: medians over the timed ones, the rest counted."""
    result = _sweep("corpus/swe-agent", "corpus/codex")
    assert result.returncode == 0, result.stderr
    assert "1 timed trace(s)" in result.stdout and "11 untimed trace(s) left out" in result.stdout
    assert "0.00x" not in result.stdout
    rows = json.loads(_sweep("corpus/swe-agent", "corpus/codex", "-o", "-").stdout)
    assert [r["traces"] for r in rows] == [1, 1] and all(r["untimed"] == 11 for r in rows)
    assert rows[-1]["speedup"] > 1.0
