"""The campaign's smaller findings: stale index temporaries, the interrupt summary, and
injected faults that must differ between repetitions.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
import yaml

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.traces.store import ResultStore

pytestmark = [pytest.mark.reliability]


def test_stale_index_temporaries_are_removed(tmp_path: Path) -> None:
    """A killed rebuild's `.results.duckdb.<pid>.tmp`/`.wal` go at the next rebuild; a live
    process's stay."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    alive = subprocess.Popen(["sleep", "60"])
    try:
        traces = tmp_path / "traces"
        traces.mkdir()
        database = tmp_path / "results.duckdb"
        stale = [tmp_path / f".results.duckdb.{gone.pid}.tmp{end}" for end in ("", ".wal")]
        live = tmp_path / f".results.duckdb.{alive.pid}.tmp"
        for path in [*stale, live]:
            path.write_bytes(b"left by a kill")
        ResultStore.rebuild_file(database, traces)
        assert [p.exists() for p in stale] == [False, False]
        assert live.exists()
        assert database.exists()
    finally:
        alive.kill()
        alive.wait()


def test_interrupt_summary_counts_complete_traces(tmp_path: Path, campaign: object) -> None:
    """SIGINT while the only cell runs: "0 of 1 complete cell traces kept", not 1."""
    config = {
        "name": "interrupted",
        "backends": [{"name": "slow", "profile": "slow-80"}],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "exp"),
        "budgets": {"max_steps": 20},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    process = subprocess.Popen(
        [sys.executable, "-m", "looplab", "run", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "300"},
    )
    traces = tmp_path / "exp" / "traces"
    deadline = time.perf_counter() + 90
    while not list(traces.glob("*.jsonl")) and time.perf_counter() < deadline:
        assert process.poll() is None
        time.sleep(0.05)
    time.sleep(1.0)  # inside the cell: its trace is open, its run not finished
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=90)
    said = " ".join(err.split())
    assert process.returncode == 130, said
    assert "0 of 1 complete cell traces kept" in said


def _statuses(seed: int) -> list[int]:
    """Statuses of 24 requests to a simulator injecting 50% errors, profile seed `seed`."""
    overrides = ["decode_tps=20000", "ttft_s=0", "faults.error_rate=0.5", f"seed={seed}"]
    ask = {"model": "looplab-lorem", "messages": [{"role": "user", "content": "hi"}]}
    profile = resolve_profile("fast-750", overrides)
    with SimulatorServer(profile) as server, httpx2.Client(timeout=30) as http:
        url = f"{server.base_url}/chat/completions"
        return [http.post(url, json=ask).status_code for _ in range(24)]


def test_fault_sequences_differ_per_repetition() -> None:
    """Repetitions (profile seeds 0, 1) draw different fault sequences; one seed repeats."""
    first, again, second = _statuses(0), _statuses(0), _statuses(1)
    assert set(first) == {200, 500}
    assert first == again
    assert first != second
