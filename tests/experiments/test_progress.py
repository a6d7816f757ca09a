"""`looplab run`'s progress output: the lag warning only where lag could change a reported
number, the running list counted against the limits the start line states, and
virtual-clock times labelled as such."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.outcome import CellOutcome
from looplab.experiments.runner import ExperimentRunner
from looplab.experiments.summaries.finish import where
from looplab.experiments.summaries.progress import LAG_SHARE, RunProgress, lag_share


def _outcome(config: ExperimentConfig, **values: Any) -> CellOutcome:
    """A finished cell of `config`'s first cell with the given totals."""
    cell = ExperimentRunner(config).validate()[0]
    return CellOutcome(cell, "done", Path("t.jsonl"), success=True, **values)


def _line(outcome: CellOutcome) -> str:
    console = Console(record=True, width=300, color_system=None)
    RunProgress(console)(outcome, 1, 4)
    return console.export_text()


def test_lag_warns_only_when_it_could_change_a_reported_number(
    small_config: dict[str, Any],
) -> None:
    """A 40 ms p99 with a 2 ms mean on a 7-step, 6.9 s run is no warning (it adds 0.4%);
    a 50 ms mean on a 10-step 5 s run is (20%), with the share and the threshold said."""
    config = validate_model(ExperimentConfig, small_config)
    calm = _outcome(config, task_s=6.9, steps=7, loop_lag_p99_ms=40.0, loop_lag_mean_ms=2.0)
    share = lag_share(calm)
    assert share is not None and share < LAG_SHARE
    assert "lagged" not in _line(calm)
    busy = _outcome(config, task_s=5.0, steps=10, loop_lag_p99_ms=90.0, loop_lag_mean_ms=50.0)
    line = _line(busy)
    assert "lagged 50 ms on average" in line and "1.00 s (20%)" in line and "over the 1%" in line


def test_virtual_clock_times_are_labelled_virtual(small_config: dict[str, Any]) -> None:
    """A virtual-clock cell's time says `virtual`; a wall-clock one does not."""
    config = validate_model(ExperimentConfig, small_config)
    assert "3.50 s virtual, solved" in _line(_outcome(config, task_s=3.5, steps=4, clock="virtual"))
    assert "3.50 s, solved" in _line(_outcome(config, task_s=3.5, steps=4, clock="wall"))


def test_status_line_counts_what_runs() -> None:
    """The status line says how many cells run and drops each as it ends."""
    progress = RunProgress(Console(record=True, width=300, color_system=None))
    for cell in ("a", "b", "c"):
        progress.status(cell, "start", 0)
    progress.status("b", "model", 1)
    assert progress.status_line().startswith("running 3: a ")
    assert "b 0.0 s step 1 model" in progress.status_line()
    progress.status("a", "end", 2)
    assert progress.status_line().startswith("running 2: b ")


def test_start_line_states_the_trace_driven_limit(small_config: dict[str, Any]) -> None:
    """With trace-driven cells under their own limit the start line states both limits."""
    small_config.update(
        tasks=["coding/fix-pager", "workload/mini-swe-agent-deepseek"],
        concurrency=2,
        workload={"concurrency": 8},
    )
    config = validate_model(ExperimentConfig, small_config)
    assert where(config) == "concurrency 2, trace-driven cells 8 beside them"


def test_a_capped_cell_says_timeout_not_unsolved(small_config: dict[str, Any]) -> None:
    """A cell stopped by the task time cap says `timeout`; a backend failure says so; an
    agent that simply failed its task is `NOT solved`."""
    config = validate_model(ExperimentConfig, small_config)
    capped = _outcome(config, task_s=30.0, steps=3, end_reason="timeout")
    capped.success = False
    assert "timeout (the task time cap)" in _line(capped) and "NOT solved" not in _line(capped)
    broken = _outcome(config, task_s=1.0, steps=1, end_reason="backend_error")
    broken.success = False
    assert "backend error" in _line(broken)
    failed = _outcome(config, task_s=5.0, steps=4, end_reason="done")
    failed.success = False
    assert "NOT solved" in _line(failed)
