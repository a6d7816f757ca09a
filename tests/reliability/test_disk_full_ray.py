"""A disk that fills up mid-run under `executor: ray`: the same one clear line, exit 1 and
resumable run as in-process (`test_disk_full.py`, whose 3 MiB tmpfs and filler it uses).

Under Ray the driver appends the streamed trace lines, so a full disk surfaces in the
driver's trace mirror, not in a worker: it must stop the run, not be taken for a lost
worker and retried `max_attempts` times.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from looplab.traces.io import read_trace
from tests.reliability.test_disk_full import DRIVER, FREE_KIB, TASKS, _fill, small_disk

pytestmark = [pytest.mark.reliability, pytest.mark.ray, pytest.mark.slow]

__all__ = ["small_disk"]  # the fixture, used by name below


def _run(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", DRIVER, str(config)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull},
        check=False,
    )


@pytest.mark.timeout(900)  # two runs, each starting a local Ray (about 60 s each here)
def test_disk_full_under_ray_is_one_line_and_resumable(small_disk: Path, tmp_path: Path) -> None:
    """Under Ray a full disk ends the run with one line naming the path, exit 1, no retry
    of the cells as lost attempts; after freeing the disk the same command completes it."""
    output = small_disk / "exp"
    config = tmp_path / "experiment.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "disk-full-ray",
                "clock": "virtual",
                "backends": [{"name": "fast", "profile": "fast-750"}],
                "tasks": TASKS,
                "output_dir": str(output),
                "sandbox": {"kind": "local"},
                "budgets": {"max_steps": 20},
                "executor": {"kind": "ray", "address": "local", "local_slots": 2},
            }
        )
    )
    filler = _fill(small_disk, FREE_KIB)

    full = _run(config)
    said = full.stdout + full.stderr
    assert full.returncode == 1, said[-3000:]
    assert "Traceback" not in said and "IOException" not in said, said[-3000:]
    assert "attempt" not in said, said[-3000:]  # not taken for a lost worker
    assert len(said.splitlines()) <= 20, f"{len(said.splitlines())} lines:\n{said[-3000:]}"
    assert said.count("error:") == 1, said[-3000:]
    error = said[said.index("error:") :]
    flat = "".join(error.split())  # the console wraps a long path at 120 columns
    assert "nospaceleftondevice" in flat and str(output) in flat, error

    filler.unlink()
    resumed = _run(config)
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-3000:]
    traces = sorted((output / "traces").glob("*.jsonl"))
    assert len(traces) == len(TASKS)
    assert all(read_trace(path).complete for path in traces)
