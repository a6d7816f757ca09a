"""A task time cap ends a real run `timeout`: the shipped deadline experiment."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from looplab.analysis.caps import finished
from looplab.config import load_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.traces.io import read_trace

CONFIG = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "deadline.yaml"


@pytest.mark.slow
def test_cap_times_out_slow_80_and_not_fast_750(tmp_path: Path) -> None:
    """fix-discount on the virtual clock under the shipped 30 s cap: the slow-80 run
    (about 45 s uncapped) is cut at 30 s and ends `timeout`, unfinished; the fast-750 run
    (about 13 s) finishes and is solved."""
    config = load_model(
        ExperimentConfig,
        CONFIG,
        ["tasks=[coding/fix-discount]", f"output_dir={tmp_path / 'exp'}"],
    )
    assert config.budgets.task_timeout_s == 30
    runner = ExperimentRunner(config)
    runner.prepare_directory(fresh=False)
    asyncio.run(runner.run())
    ends = {}
    for path in sorted((tmp_path / "exp" / "traces").glob("*.jsonl")):
        trace = read_trace(path)
        ends[trace.header.cell.backend] = trace.end
    slow, fast = ends["slow-80"], ends["fast-750"]
    assert slow is not None and fast is not None
    assert (slow.end_reason, slow.success, slow.end) == ("timeout", False, 30.0)
    assert not finished(slow)
    assert fast.end_reason != "timeout" and fast.success is True and fast.end < 30.0


@pytest.mark.slow
def test_wall_clock_cap_stops_the_run_and_ends_it_timeout(tmp_path: Path) -> None:
    """On the wall clock a 3 s cap stops fix-pager at slow-80 at its first step boundary
    past 3 s: the trace ends `timeout` at the cap, with fewer steps than the task needs."""
    config = load_model(
        ExperimentConfig,
        CONFIG,
        [
            "tasks=[coding/fix-pager]",
            "clock=wall",
            "budgets.task_timeout_s=3",
            "backends=[{name: slow-80, profile: slow-80}]",
            f"output_dir={tmp_path / 'exp'}",
        ],
    )
    runner = ExperimentRunner(config)
    runner.prepare_directory(fresh=False)
    asyncio.run(runner.run())
    (path,) = (tmp_path / "exp" / "traces").glob("*.jsonl")
    end = read_trace(path).end
    assert end is not None
    assert (end.end_reason, end.success, end.end) == ("timeout", False, 3.0)
    assert end.steps < 4
