"""The Ray side of a cell: `stream_cell` runs one cell on the worker's node and streams its
trace back (a Ray generator task); it never writes the experiment directory.

The cell runs in a thread of its own event loop (the generator blocks on the queue the
thread fills); header, events and phase changes go back as they happen, in batches of
whatever is ready, and the cell's `CellOutcome` comes last. A lost node leaves the
driver with the lines sent so far: an incomplete trace.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looplab.experiments.cell import CellContext, TraceSink
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.executors.inprocess import run_guarded
from looplab.experiments.executors.node import node_info
from looplab.experiments.guards.monitor import LoopLagMonitor
from looplab.experiments.matrix import Cell
from looplab.experiments.outcome import CellOutcome
from looplab.experiments.servers import ServerPool
from looplab.traces.schema import TraceEvent, TraceHeader

__all__ = ["Done", "Header", "Line", "Status", "StreamItem", "collect_cell", "stream_cell"]


@dataclass(frozen=True)
class Header:
    """The trace's first line (with the node filled in)."""

    header: TraceHeader


@dataclass(frozen=True)
class Line:
    """One event of the trace."""

    event: TraceEvent


@dataclass(frozen=True)
class Status:
    """A phase change of the cell: `model` (a call in flight) or `tools`."""

    phase: str


@dataclass(frozen=True)
class Done:
    """The cell's outcome: always the last item."""

    outcome: CellOutcome


StreamItem = Header | Line | Status | Done


class _StreamSink:
    """A `TraceSink` that queues the lines for the driver."""

    def __init__(self, items: queue.Queue[StreamItem | None]) -> None:
        self._items = items

    def write(self, event: TraceEvent) -> None:
        self._items.put(Line(event))

    def close(self) -> None:
        """Nothing to close: the driver closes its file when the outcome arrives."""


class _CellThread(threading.Thread):
    """Runs one cell in its own event loop, feeding `items`; `None` marks the end."""

    def __init__(
        self, config: ExperimentConfig, cell: Cell, node: dict[str, Any], traces: Path
    ) -> None:
        super().__init__(name=f"looplab-cell-{cell.id}", daemon=True)
        self.items: queue.Queue[StreamItem | None] = queue.Queue()
        self._config, self._cell, self._node, self._traces = config, cell, node, traces
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[CellOutcome] | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._main())
        finally:
            self.items.put(None)

    def cancel(self) -> None:
        """Cancel the cell (it cleans up: sandbox, services, simulator)."""
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        monitor = LoopLagMonitor()
        monitor.start()
        servers = ServerPool(virtual=self._config.clock == "virtual")
        context = CellContext(
            self._config, self._traces, servers, monitor, self._observer, self._open
        )
        try:
            self._task = asyncio.create_task(run_guarded(context, self._cell))
            self.items.put(Done(await self._task))
        except asyncio.CancelledError:
            pass  # the driver stopped the cell; its trace stays incomplete
        finally:
            await monitor.stop()
            await servers.stop()

    def _open(self, path: Path, header: TraceHeader) -> TraceSink:
        self.items.put(Header(header.model_copy(update={"node": self._node})))
        return _StreamSink(self.items)

    def _observer(self, cell_id: str) -> Callable[[str], None]:
        return lambda event: self.items.put(Status(event))


def stream_cell(
    config: ExperimentConfig, cell: Cell, attempt: int, traces: str
) -> Iterator[list[StreamItem]]:
    """Run `cell` here and yield its trace in batches (see the module docstring).

    Args:
        config: the experiment.
        cell: the cell to run.
        attempt: 1-based attempt number (recorded in the header's `node`).
        traces: the driver's trace directory (only named in the outcome, never written).
    """
    import ray

    context = ray.get_runtime_context()
    ids = {"ray_node_id": context.get_node_id(), "task_id": context.get_task_id() or ""}
    thread = _CellThread(config, cell, node_info(attempt, ids), Path(traces))
    thread.start()
    try:
        while True:
            batch = [thread.items.get()]
            while not thread.items.empty():
                batch.append(thread.items.get_nowait())
            items = [item for item in batch if item is not None]
            if items:
                yield items
            if len(items) < len(batch):
                return
    finally:
        thread.cancel()
        thread.join()


def collect_cell(
    config: ExperimentConfig, cell: Cell, attempt: int, traces: str
) -> list[StreamItem]:
    """`stream_cell`'s items as one list, at the end: for Ray Client (`ray://`), which
    runs no generator tasks. A lost node then leaves no trace at all (nothing counted)."""
    return [item for batch in stream_cell(config, cell, attempt, traces) for item in batch]
