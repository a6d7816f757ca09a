"""Executors without a cluster: the registry, the config, and the Ray driver's attempts
(lost attempts set aside, a cell that keeps failing reported) against an injected remote."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import pytest

from looplab.clock import utc_now
from looplab.config import validate_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.directory import is_complete
from looplab.experiments.executors.base import ExecutorJob, make_executor
from looplab.experiments.executors.config import SLOT_RESOURCE, ExecutorConfig
from looplab.experiments.executors.inprocess import InProcessExecutor
from looplab.experiments.executors.node import cell_resources
from looplab.experiments.executors.ray import RayExecutor
from looplab.experiments.executors.ray_worker import Done, Header, Line, StreamItem
from looplab.experiments.matrix import Cell, expand_cells
from looplab.experiments.outcome import CellOutcome
from looplab.traces.schema import RunEndEvent, RunStartEvent, TraceHeader


class NodeLost(Exception):
    """Stands in for Ray's error when a task's node dies."""


async def _ready(items: list[StreamItem]) -> list[StreamItem]:
    return items


class FakeRemote:
    """A `ray.remote(stream_cell)` stand-in: attempts listed in `plan` lose their node
    after the header and `run_start`; the others complete."""

    def __init__(self, lost: set[int]) -> None:
        self.lost = lost
        self.attempts: list[int] = []
        self.resources: list[dict[str, float]] = []

    def options(self, **options: Any) -> FakeRemote:
        self.resources.append(options["resources"])
        return self

    def remote(self, config: ExperimentConfig, cell: Cell, attempt: int, traces: str) -> Any:
        self.attempts.append(attempt)
        return self._stream(cell, attempt, Path(traces))

    async def _stream(
        self, cell: Cell, attempt: int, traces: Path
    ) -> AsyncIterator[Awaitable[list[StreamItem]]]:
        header = TraceHeader(run_id=f"{cell.id}.{attempt}", created=utc_now(), node={"a": 1})
        start = RunStartEvent(run_id=header.run_id, start=0.0, end=0.0)
        yield _ready([Header(header), Line(start)])
        if attempt in self.lost:
            raise NodeLost(f"node of attempt {attempt} died")
        end = RunEndEvent(run_id=header.run_id, start=0.0, end=1.0, end_reason="done", steps=1)
        outcome = CellOutcome(cell, "done", traces / "elsewhere.jsonl", task_s=1.0, steps=1)
        yield _ready([Line(end), Done(outcome)])


def _job(tmp_path: Path, config: ExperimentConfig, outcomes: list[CellOutcome]) -> ExecutorJob:
    traces = tmp_path / "traces"
    traces.mkdir()
    return ExecutorJob(config, traces, outcomes.append, lambda _cell_id: None)


@pytest.fixture
def virtual_config(small_config: dict[str, Any]) -> ExperimentConfig:
    """The small experiment on the virtual clock, Ray executor, 3 attempts."""
    small_config |= {"clock": "virtual", "executor": {"kind": "ray", "max_attempts": 3}}
    return validate_model(ExperimentConfig, small_config)


def test_lost_attempt_is_set_aside_and_the_cell_runs_again(
    tmp_path: Path, virtual_config: ExperimentConfig
) -> None:
    """A lost first attempt leaves an incomplete trace aside; the second one is counted."""
    cell = expand_cells(virtual_config)[0]
    outcomes: list[CellOutcome] = []
    job = _job(tmp_path, virtual_config, outcomes)
    remote = FakeRemote(lost={1})
    asyncio.run(RayExecutor(virtual_config.executor)._cell(remote, cell, job))
    assert remote.attempts == [1, 2]
    assert [o.status for o in outcomes] == ["done"]
    assert outcomes[0].trace_path == job.traces / f"{cell.id}.jsonl"
    assert is_complete(outcomes[0].trace_path)
    aside = list((job.traces / "incomplete").glob("*.jsonl"))
    assert len(aside) == 1 and not is_complete(aside[0])
    assert remote.resources[0] == {SLOT_RESOURCE: 0.25}


def test_cell_that_keeps_failing_is_reported_not_retried_forever(
    tmp_path: Path, virtual_config: ExperimentConfig
) -> None:
    """After `max_attempts` lost attempts the cell fails with the last error."""
    cell = expand_cells(virtual_config)[0]
    outcomes: list[CellOutcome] = []
    remote = FakeRemote(lost={1, 2, 3})
    job = _job(tmp_path, virtual_config, outcomes)
    asyncio.run(RayExecutor(virtual_config.executor)._cell(remote, cell, job))
    assert remote.attempts == [1, 2, 3]
    assert [o.status for o in outcomes] == ["failed"]
    assert "lost 3 attempts" in str(outcomes[0].error) and "NodeLost" in str(outcomes[0].error)
    assert len(list((job.traces / "incomplete").glob("*.jsonl"))) == 3
    assert not (job.traces / f"{cell.id}.jsonl").exists()


def test_wall_clock_cell_takes_a_whole_slot(small_config: dict[str, Any]) -> None:
    """A wall-clock cell asks for one slot, a virtual one for 1/virtual_cells_per_slot."""
    wall = validate_model(ExperimentConfig, small_config)
    assert cell_resources(wall, expand_cells(wall)[0]) == {SLOT_RESOURCE: 1.0}
    small_config |= {"clock": "virtual", "executor": {"virtual_cells_per_slot": 8}}
    virtual = validate_model(ExperimentConfig, small_config)
    assert cell_resources(virtual, expand_cells(virtual)[0]) == {SLOT_RESOURCE: 0.125}


def test_registry_and_config_errors() -> None:
    """Kinds come from the registry; an unknown one is refused naming the allowed ones."""
    assert isinstance(make_executor(ExecutorConfig()), InProcessExecutor)
    assert isinstance(make_executor(ExecutorConfig(kind="ray")), RayExecutor)
    with pytest.raises(ConfigError, match="inprocess"):
        validate_model(ExecutorConfig, {"kind": "slurm"})


def test_executor_is_not_part_of_the_stored_experiment(small_config: dict[str, Any]) -> None:
    """A directory made in-process accepts the same experiment on Ray (resume anywhere)."""
    from looplab.experiments.runner import ExperimentRunner

    ExperimentRunner(validate_model(ExperimentConfig, small_config)).prepare_directory(fresh=False)
    small_config["executor"] = {"kind": "ray", "address": "auto"}
    ExperimentRunner(validate_model(ExperimentConfig, small_config)).prepare_directory(fresh=False)


def test_unreachable_cluster_fails_fast_with_a_fix() -> None:
    """An address where nothing listens is a PrerequisiteError at once, not Ray's retries."""
    from looplab.errors import PrerequisiteError
    from looplab.experiments.executors.ray import _check_reachable

    with pytest.raises(PrerequisiteError, match="no Ray cluster answers"):
        _check_reachable("ray://127.0.0.1:1")
    _check_reachable("auto")  # resolved by Ray itself


def test_process_tree_waits_for_new_matching_children_and_kills_the_rest() -> None:
    """Only matching children started after the tree count: one that exits within the grace
    is left alone, one that outlives it is killed, an older one is never touched."""
    import subprocess

    from looplab.experiments.executors.reap import ProcessTree

    older = subprocess.Popen(["sleep", "60"])
    tree = ProcessTree(match=b"sleep")
    quick = subprocess.Popen(["sleep", "0.2"])
    stuck = subprocess.Popen(["sleep", "60"])
    try:
        tree.snapshot()
        assert set(tree.processes) == {quick.pid, stuck.pid}
        assert tree.settle(grace_s=1.0) == [stuck.pid]
        assert stuck.wait(timeout=5) == -9 and quick.wait(timeout=5) == 0
        assert older.poll() is None
    finally:
        for process in (older, quick, stuck):
            process.kill()
            process.wait()
