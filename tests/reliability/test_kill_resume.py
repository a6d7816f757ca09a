"""`looplab run` killed (SIGKILL, SIGINT, SIGTERM) at several points, then resumed.

One experiment is started again and again, each time stopped by a signal at a chosen
point (at start, inside a cell, right after a cell), and finally resumed to the end.
Then every cell has exactly one complete trace and one index row (0 lost, 0
duplicated), and nothing any killed process started is left: no process, marked temp
dir, cgroup or container of its (each next run prunes what a SIGKILL could not clean up;
SIGINT and SIGTERM clean up before they exit, which is checked at once).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from looplab.config import validate_model
from looplab.errors import TraceError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.sandboxes.leftovers import find_owned
from looplab.traces.io import read_trace
from looplab.traces.store import ResultStore

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

TASKS = ["coding/fix-pager", "coding/nbugs-1"]


def _config(tmp_path: Path, sandbox: str) -> dict[str, Any]:
    """Two cells of a few seconds each (virtual clock: the tools' time)."""
    return {
        "name": "killed",
        "clock": "virtual",
        "backends": [{"name": "fast", "profile": "fast-750"}],
        "tasks": TASKS,
        "output_dir": str(tmp_path / "exp"),
        "sandbox": {"kind": sandbox},
        "budgets": {"max_steps": 20},
    }


def _complete(path: Path) -> bool:
    try:
        return read_trace(path).complete
    except TraceError:
        return False


def _reached(point: str, traces: Path, since: float) -> bool:
    """Whether the run started at wall time `since` has reached `point`."""
    if point == "at start":
        return traces.parent.joinpath("config.json").exists() and traces.exists()
    mtimes = {p: _mtime(p) for p in traces.glob("*.jsonl")}
    fresh = [p for p, mtime in mtimes.items() if mtime > since]
    now = time.time()  # noqa: TID251  # compared with file mtimes, which are wall-clock times
    if point == "mid-run":  # a cell's trace opened a moment ago (events come at its end)
        return any(not _complete(p) and now - mtimes[p] > 0.5 for p in fresh)
    return any(_complete(p) for p in fresh)  # "after a cell"


def _mtime(path: Path) -> float:
    """A trace's mtime; 0 when it went between the listing and the look (a run replaces a
    trace file by renaming its finished copy over it)."""
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _stop_at(config_path: Path, traces: Path, point: str, signum: int) -> int:
    """Start `looplab run`, send `signum` once `point` is reached; returns the process id."""
    since = time.time()  # noqa: TID251  # compared with file mtimes
    process = subprocess.Popen(
        [sys.executable, "-m", "looplab", "run", str(config_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull},
    )
    try:
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline and process.poll() is None:
            if _reached(point, traces, since):
                break
            time.sleep(0.02)
        assert process.poll() is None, f"looplab run ended before {point!r}"
        process.send_signal(signum)
    finally:
        _, stderr = process.communicate(timeout=60)
    if signum != signal.SIGKILL:
        assert process.returncode in (130, 143), stderr.decode()[-2000:]
        assert b"Traceback" not in stderr, stderr.decode()[-2000:]
    return process.pid


def _left_by(pid: int, docker: bool) -> list[str]:
    own = find_owned(pid)
    left = own.processes + own.dirs + own.cgroups
    if docker:
        from looplab.sandboxes.engine import connect_engine
        from looplab.sandboxes.prune import looplab_containers

        client = connect_engine(timeout_s=10)
        try:
            found = looplab_containers(client)
            left += [
                str(c.id)[:12]
                for c in found
                if c.labels.get("looplab.owner", "").split(":")[1:2] == [str(pid)]
            ]
        finally:
            client.close()
    return [str(item) for item in left]


CHAINS = {
    "local": [
        ("SIGKILL", "at start"),
        ("SIGKILL", "mid-run"),
        ("SIGINT", "mid-run"),
        ("SIGKILL", "after a cell"),
        ("SIGTERM", "mid-run"),
    ],
    "docker": [("SIGKILL", "mid-run"), ("SIGINT", "mid-run")],
}


@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_killed_again_and_again_then_resumed(tmp_path: Path, campaign: Any, sandbox: str) -> None:
    """After kills at every point and a resume: one complete trace and one index row per
    cell, and nothing of any killed process left on the host."""
    config = _config(tmp_path, sandbox)
    config_path = tmp_path / "exp.yaml"
    config_path.write_text(yaml.safe_dump(config))
    traces = Path(config["output_dir"]) / "traces"
    killed: list[int] = []
    for signame, point in CHAINS[sandbox]:
        pid = _stop_at(config_path, traces, point, getattr(signal, signame))
        campaign.add("kills")
        killed.append(pid)
        if signame != "SIGKILL":  # a graceful stop cleans up by itself, before any prune
            early = _left_by(pid, sandbox == "docker")
            campaign.add("leftovers", len(early))
            assert early == [], f"{signame} at {point} left {early}"
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=False)
    result = asyncio.run(runner.run())
    assert all(o.status != "failed" for o in result.outcomes), result.outcomes
    complete = [p.name for p in traces.glob("*.jsonl") if _complete(p)]
    with ResultStore(result.database) as store:
        rows, distinct = store.query("SELECT count(*), count(DISTINCT task) FROM runs")[0]
    lost = len(TASKS) - len(complete)
    duplicated = rows - distinct
    left = [item for pid in killed for item in _left_by(pid, sandbox == "docker")]
    campaign.add("lost", max(0, lost))
    campaign.add("duplicated", duplicated)
    campaign.add("leftovers", len(left))
    assert lost == 0, complete
    assert (rows, distinct) == (len(TASKS), len(TASKS))
    assert left == [], f"left behind by the killed runs: {left}"
    assert len(list((traces / "incomplete").glob("*.jsonl"))) >= 2, "cut-off traces kept aside"
