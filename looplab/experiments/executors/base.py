"""The `Executor` protocol, what the runner hands it (`ExecutorJob`), and the registry.

An executor runs cells and reports each outcome through `job.finished`; the runner
decides which cells are pending, sets cut-off traces aside, and indexes afterwards. Every
executor leaves the experiment directory written by this process alone: a trace per
cell, append-only, complete (ends with `run_end`) or not.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from looplab.experiments.config import ExperimentConfig
from looplab.experiments.executors.config import ExecutorConfig
from looplab.experiments.matrix import Cell
from looplab.experiments.outcome import CellOutcome

__all__ = ["EXECUTORS", "Executor", "ExecutorJob", "Observer", "make_executor"]

Observer = Callable[[str], None]


@dataclass
class ExecutorJob:
    """What the runner gives an executor."""

    config: ExperimentConfig
    traces: Path
    """The directory the traces go to (`<traces>/<cell id>.jsonl`)."""
    finished: Callable[[CellOutcome], None]
    """Called once per cell, in this process's event loop, when the cell is done."""
    observer: Callable[[str], Observer | None]
    """Per cell id: a status observer of its model/tool phases (see `ExperimentRunner`)."""


class Executor(Protocol):
    """Runs cells to their traces."""

    async def run(self, cells: list[Cell], job: ExecutorJob) -> None:
        """Run every cell, calling `job.finished` once for each.

        Cancelled (Ctrl-C, SIGTERM), it stops the cells in flight and returns only after
        they are cleaned up; their traces stay incomplete (set aside on resume).
        """
        ...


EXECUTORS: dict[str, str] = {
    "inprocess": "looplab.experiments.executors.inprocess:InProcessExecutor",
    "ray": "looplab.experiments.executors.ray:RayExecutor",
}
"""Executor kind -> `module:class` (imported on use: Ray is an optional extra)."""


def make_executor(config: ExecutorConfig) -> Executor:
    """The executor of `config.kind` (its module imported now)."""
    module, name = EXECUTORS[config.kind].split(":")
    factory: Callable[[ExecutorConfig], Executor] = getattr(importlib.import_module(module), name)
    return factory(config)
