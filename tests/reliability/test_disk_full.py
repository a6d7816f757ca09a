"""A disk that fills up mid-run: one clear line, a non-zero exit, and a resumable run.

The experiment's output directory is a 3 MiB tmpfs filled to its last few KiB, so the
cells' traces (and the index) cannot be written. The start-of-run disk check (1 GiB free)
is lowered to 0 in the child process: it stands for a disk that still had room when the
run started and filled during it. Then the filler is removed and the same command resumes
the run to its end. Under Ray both runs use one local head the test starts (with the cell
slots `address: local` would give), not a Ray each (about 7 CPU-s per start).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from looplab.experiments.executors.config import SLOT_RESOURCE
from looplab.traces.io import read_trace

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

TASKS = ["coding/fix-pager", "coding/nbugs-1"]
FREE_KIB = 40
"""What the filler leaves free: less than one cell's trace (about 25 KiB)."""

DRIVER = """
import sys
import looplab.experiments.guards.preflight as preflight
preflight.MIN_FREE_BYTES = 0  # the disk had room at the start; it fills during the run
from looplab.cli.main import main
main(["run", sys.argv[1]])
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs mounted for the test (root only), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path, free_kib: int) -> Path:
    """Fill `disk` until `free_kib` KiB are left; returns the filler file."""
    stats = os.statvfs(disk)
    size = stats.f_bavail * stats.f_frsize - free_kib * 1024
    filler = disk / "filler"
    with filler.open("wb") as handle:
        handle.write(b"\0" * size)
    return filler


def _run(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", DRIVER, str(config)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull},
        check=False,
    )


@pytest.fixture
def ray_head() -> Iterator[str]:
    """A local Ray head with 2 cell slots (what `address: local, local_slots: 2` starts),
    shared by a run and its resume; its address. Shut down after the test."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 2,
            "resources": {SLOT_RESOURCE: 2},
            "_system_config": {"worker_niceness": 0},  # as `address: local` does
        },
    )
    try:
        yield str(cluster.address)
    finally:
        cluster.shutdown()


def _executor(kind: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The config fields that pick the executor (every executor meets a full disk the same
    way)."""
    if kind == "inprocess":
        return {}
    return {"executor": {"kind": "ray", "address": request.getfixturevalue("ray_head")}}


@pytest.mark.parametrize(
    "executor",
    [
        "inprocess",
        # two runs on one local Ray head (about 60 s here)
        pytest.param("ray", marks=[pytest.mark.ray, pytest.mark.timeout(900)]),
    ],
)
def test_disk_full_mid_run_is_one_line_and_resumable(
    small_disk: Path, tmp_path: Path, executor: str, request: pytest.FixtureRequest
) -> None:
    """A full disk ends the run with one line naming the path, exit 1 (under Ray too: no
    retry of the cells as lost attempts); after freeing the disk the same command completes
    it."""
    output = small_disk / "exp"
    config = tmp_path / "experiment.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": f"disk-full-{executor}",
                "clock": "virtual",
                "backends": [{"name": "fast", "profile": "fast-750"}],
                "tasks": TASKS,
                "output_dir": str(output),
                "sandbox": {"kind": "local"},
                "budgets": {"max_steps": 20},
                **_executor(executor, request),
            }
        )
    )
    filler = _fill(small_disk, FREE_KIB)

    full = _run(config)
    said = full.stdout + full.stderr
    assert full.returncode == 1, said[-3000:]
    assert "Traceback" not in said and "IOException" not in said, said[-3000:]
    if executor == "ray":
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
