"""`InProcessExecutor`: the cells as asyncio tasks of this process (the default).

At most `concurrency` cells at once (trace-driven ones: `workload.concurrency` when set),
sharing one `ServerPool` and one `LoopLagMonitor`.
"""

from __future__ import annotations

import asyncio

import structlog

from looplab.experiments.cell import CellContext, run_cell
from looplab.experiments.executors.base import ExecutorJob
from looplab.experiments.executors.config import ExecutorConfig
from looplab.experiments.guards.diskfull import disk_full_in
from looplab.experiments.guards.monitor import LoopLagMonitor
from looplab.experiments.matrix import Cell
from looplab.experiments.outcome import CellOutcome
from looplab.experiments.servers import ServerPool
from looplab.layout import trace_path
from looplab.tasks.references import is_trace_driven

__all__ = ["InProcessExecutor", "run_guarded"]

log = structlog.get_logger(__name__)


async def run_guarded(context: CellContext, cell: Cell) -> CellOutcome:
    """`run_cell`, with a harness bug turned into the cell's `failed` outcome.

    Raises:
        DiskFullError: the disk under the traces is full (it stops the whole run: every
            next cell would fail the same way; no traceback is logged).
    """
    log.info("cell.start", cell=cell.id, task=cell.task, backend=cell.backend.name)
    path = trace_path(context.traces, cell.id)
    try:
        return await run_cell(context, cell)
    except Exception as exc:  # a harness bug fails its cell, not the experiment
        full = disk_full_in(exc, path)
        if full is not None:
            raise full from None
        log.exception("cell.crashed", cell=cell.id)
        return CellOutcome(cell, "failed", path, error=f"{type(exc).__name__}: {exc}")


class InProcessExecutor:
    """Runs cells in this process's event loop (see the module docstring)."""

    def __init__(self, config: ExecutorConfig | None = None) -> None:
        self.executor_config = config or ExecutorConfig()

    async def run(self, cells: list[Cell], job: ExecutorJob) -> None:
        """Run every cell; cancelled, wait until each in flight has cleaned up."""
        config = job.config
        gate = asyncio.Semaphore(config.concurrency)
        driven = config.workload.concurrency
        driven_gate = asyncio.Semaphore(driven) if driven else gate
        monitor = LoopLagMonitor()
        monitor.start()
        servers = ServerPool(virtual=config.clock == "virtual")
        context = CellContext(config, job.traces, servers, monitor, job.observer)

        async def one(cell: Cell) -> None:
            async with driven_gate if is_trace_driven(cell.task) else gate:
                outcome = await run_guarded(context, cell)
            job.finished(outcome)

        try:
            # a TaskGroup, not gather: cancelled (Ctrl-C, SIGTERM), it waits until every cell
            # has cleaned up, where gather returns as soon as one waiting cell is cancelled
            async with asyncio.TaskGroup() as group:
                for cell in cells:
                    group.create_task(one(cell))
        finally:
            await monitor.stop()
            await servers.stop()
