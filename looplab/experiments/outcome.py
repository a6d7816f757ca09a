"""What happened to one cell in this invocation (`CellOutcome`): what executors report,
the runner collects and the progress line prints.

Its own module so the run command, the runner and the executor registry can name it
without importing what runs a cell (the agent stack, LangGraph, the openai client): a
config or flag error then costs a fraction of a second (0.35 s of CPU, not 1.3 s).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from looplab.experiments.matrix import Cell
from looplab.traces.end_reason import EndReasonValue

__all__ = ["CellOutcome"]


@dataclass
class CellOutcome:
    """What happened to one cell in this invocation."""

    cell: Cell
    status: str
    """`done` (ran now), `skipped` (complete trace found), `failed` (harness error)."""
    trace_path: Path
    task_s: float | None = None
    steps: int | None = None
    success: bool | None = None
    error: str | None = None
    loop_lag_p99_ms: float | None = None
    end_reason: EndReasonValue | None = None
    """The run's `run_end.end_reason` (`done` cells)."""
    loop_lag_mean_ms: float | None = None
    """Mean event-loop lag during the run (what the progress line's warning weighs)."""
    clock: str = "wall"
    """`wall` or `virtual`: how the cell's model times were obtained."""
