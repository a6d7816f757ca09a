"""Fixtures: one small real experiment (virtual clock, seconds), an imported trace, and a
pair of hand-written runs with known step timings (`known_pair`): A (`slow`) and B
(`fast`) call the same tools except one extra step in B.

| step | A: tools (TTFT, decode, tool s)   | B: tools (TTFT, decode, tool s)   |
|------|-----------------------------------|-----------------------------------|
| 1    | read_file (1.0, 2.0, 0.5)         | read_file (1.0, 0.5, 0.5)         |
| -    |                                   | edit_file (0.5, 0.25, 0.25)       |
| 2    | run_tests (0.5, 1.0, 1.0)         | run_tests (0.5, 0.25, 1.0)        |
| 3    | finish (0.5, 0.5, 0.0)            | finish (0.5, 0.25, 0.0)           |

Every step has 0.1 s of overhead after its tools (the StepEvent says so).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.traces.importers import import_runs, write_runs
from looplab.traces.io import write_trace
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)

if TYPE_CHECKING:
    from tests.conftest import BuildOnce

REPO = Path(__file__).resolve().parents[2]
MINI_SWE = REPO / "tests/fixtures/external-traces/mini-swe-agent"


@pytest.fixture(scope="session")
def runs_root(build_once: BuildOnce) -> Path:
    """A root with `quick/` (a real two-profile experiment) and `imported/` (mini-swe-agent),
    built once per test run (read-only: tests that change it copy it first)."""
    return build_once("runs", _build_runs_root)


def _build_runs_root(root: Path) -> None:
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


KNOWN_OUTPUT = "KNOWN-OUTPUT-42: 3 passed"
"""The output of A's run_tests call."""

A_STEPS = [("read_file", 1.0, 2.0, 0.5), ("run_tests", 0.5, 1.0, 1.0), ("finish", 0.5, 0.5, 0.0)]
B_STEPS = [
    ("read_file", 1.0, 0.5, 0.5),
    ("edit_file", 0.5, 0.25, 0.25),
    ("run_tests", 0.5, 0.25, 1.0),
    ("finish", 0.5, 0.25, 0.0),
]
OVERHEAD = 0.1


def _events(run_id: str, steps: list[tuple[str, float, float, float]]) -> list[TraceEvent]:
    events: list[TraceEvent] = [
        RunStartEvent(run_id=run_id, start=0.0, end=0.0, task="coding/known")
    ]
    t = 0.0
    for index, (tool, ttft, decode, tool_s) in enumerate(steps):
        start = t
        events.append(
            ModelCallEvent(
                run_id=run_id,
                step=index,
                start=start,
                end=start + ttft + decode,
                sent=start,
                first_token=start + ttft,
                last_token=start + ttft + decode,
                prompt_tokens=1000 + 100 * index,
                completion_tokens=50,
                message={"role": "assistant", "content": f"step {index + 1}: calling {tool}"},
            )
        )
        t = start + ttft + decode
        output = KNOWN_OUTPUT if tool == "run_tests" else f"{tool} done"
        events.append(
            ToolCallEvent(
                run_id=run_id,
                step=index,
                start=t,
                end=t + tool_s,
                name=tool,
                arguments=f'{{"path": "src/{tool}.py"}}',
                ok=True,
                exit_code=0,
                output=output,
                output_chars=len(output),
            )
        )
        t += tool_s + OVERHEAD
        events.append(
            StepEvent(
                run_id=run_id,
                step=index,
                start=start,
                end=t,
                model_s=ttft + decode,
                tool_s=tool_s,
                overhead_s=OVERHEAD,
            )
        )
    events.append(
        RunEndEvent(
            run_id=run_id, start=0.0, end=t, end_reason="finish", success=True, steps=len(steps)
        )
    )
    return events


@pytest.fixture
def known_pair(tmp_path: Path) -> Path:
    """An experiment directory with runs `known-a` (backend slow) and `known-b` (fast):
    the table in this module's docstring."""
    directory = tmp_path / "known"
    for name, backend, steps in (("known-a", "slow", A_STEPS), ("known-b", "fast", B_STEPS)):
        header = TraceHeader(
            run_id=name,
            created=datetime(2026, 1, 1, tzinfo=UTC),
            experiment="known",
            cell={"backend": backend, "task": "coding/known", "repetition": 0},
            task="coding/known",
            agent="coding",
            clock="wall",
        )
        write_trace(directory / "traces" / f"{name}.jsonl", header, _events(name, steps))
    return directory


@pytest.fixture
def byo_upstream(tmp_path: Path) -> Iterator[str]:
    """The scripted stand-in upstream (`byo/upstream.py`, two models: big-slow and
    small-fast) in its own process; its API root. Stopped after the test."""
    byo = Path(__file__).resolve().parent / "byo"
    port_file = tmp_path / "upstream.port"
    process = subprocess.Popen([sys.executable, str(byo / "upstream.py"), str(port_file)])
    try:
        for _ in range(600):
            if port_file.exists() and port_file.read_text():
                break
            assert process.poll() is None, f"{process.args!r} exited"
            time.sleep(0.05)
        else:
            raise AssertionError(f"{process.args!r} never wrote {port_file}")
        yield f"http://127.0.0.1:{int(port_file.read_text())}/v1"
    finally:
        process.terminate()
        process.wait(10)
