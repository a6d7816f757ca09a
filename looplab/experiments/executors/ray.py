"""`RayExecutor`: one Ray task per cell, this process the only writer of the directory.

Each cell is a Ray generator task (`ray_worker.stream_cell`) asking for its share of a
`looplab_cell_slot` (`node.cell_resources`) and no CPU, so the slots alone decide how many
cells a node runs. Its simulator, agent and sandbox run together on the task's node; the
trace streams back and is appended here as it arrives (`TraceWriter`). When a node or
worker is lost mid-cell, the attempt's trace is set aside as incomplete (never counted)
and the cell runs again, up to `max_attempts` times, then fails with the last error. A
full disk under the directory is no lost attempt: it stops the run with the in-process
executor's `DiskFullError` (one line, resumable), the cell's trace left incomplete.
Cancelled (Ctrl-C, SIGTERM), the tasks in flight are cancelled (each cleans up on its
node) and their traces stay incomplete, so the directory resumes like an in-process one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator
from typing import Any

import structlog

from looplab.errors import ConfigError, PrerequisiteError
from looplab.experiments.directory import set_aside
from looplab.experiments.executors.base import ExecutorJob
from looplab.experiments.executors.config import SLOT_RESOURCE, ExecutorConfig
from looplab.experiments.executors.node import cell_resources
from looplab.experiments.executors.ray_worker import (
    Done,
    Header,
    Line,
    Status,
    StreamItem,
    collect_cell,
    stream_cell,
)
from looplab.experiments.executors.reap import ProcessTree
from looplab.experiments.guards.diskfull import disk_full_in
from looplab.experiments.matrix import Cell
from looplab.experiments.outcome import CellOutcome
from looplab.layout import trace_path
from looplab.traces.io import TraceWriter

__all__ = ["RayExecutor", "connect"]

log = structlog.get_logger(__name__)


def connect(config: ExecutorConfig) -> None:
    """Connect this process to Ray (`address: local` starts one with `local_slots` slots).

    Raises:
        PrerequisiteError: Ray is not installed (the `looplab[ray]` extra), or no cluster
            answers at the address.
    """
    from looplab.extras import require

    require("ray", "executor kind ray")
    import ray

    options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if config.address == "local":
        options |= {
            # "local": always a new Ray, never one that `ray start` left on this machine
            "address": "local",
            "num_cpus": config.local_slots,
            "resources": {SLOT_RESOURCE: config.local_slots},
            "include_dashboard": False,
            # Ray runs workers at nice 15 by default: cells would lose the CPU to any
            # other load and measure it
            "_system_config": {"worker_niceness": 0},
        }
    else:
        _check_reachable(config.address)
        options["address"] = config.address
    # ray.init runs off the main thread on purpose (Ray's own SIGTERM handler would exit
    # without the cells' clean-up); its warning that it set no handler is noise
    worker_log = logging.getLogger("ray._private.worker")
    worker_log.addFilter(_no_sigterm_warning)
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise PrerequisiteError(
            f"cannot connect to Ray at {config.address!r}: {str(exc).splitlines()[0]}",
            fix="start a cluster (ray start --head --resources='{\"looplab_cell_slot\": 2}'), "
            "or use --ray-address local",
        ) from None
    finally:
        worker_log.removeFilter(_no_sigterm_warning)


def _check_reachable(address: str) -> None:
    """Fail fast when nothing listens at a `host:port` / `ray://host:port` address (Ray
    itself would keep retrying, and Ctrl-C cannot stop a connect in progress).

    Raises:
        PrerequisiteError: the port does not accept a connection within 5 s.
    """
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # `auto`, or a form Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise PrerequisiteError(
            f"no Ray cluster answers at {address!r} ({exc})",
            fix="check the address (ray status on the head prints it), or use --ray-address local",
        ) from None


def _shutdown(tree: ProcessTree, local: bool) -> None:
    """Disconnect; a local Ray is stopped and none of its processes (those in `tree`, made
    before `ray.init`) outlives this call (its workers exit on their own after the raylet,
    late on a loaded machine)."""
    import ray

    if local:
        tree.snapshot()
    ray.shutdown()
    if killed := tree.settle():
        log.warning("ray.leftovers_killed", pids=killed)


def _no_sigterm_warning(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("SIGTERM handler is not set")


class RayExecutor:
    """Runs each cell as a Ray task (see the module docstring)."""

    def __init__(self, config: ExecutorConfig) -> None:
        self.executor_config = config

    async def run(self, cells: list[Cell], job: ExecutorJob) -> None:
        """Run every cell on the cluster; disconnect (or stop the local Ray) at the end."""
        wrapped = [w.name for w in job.config.wrapped if w.name in job.config.agents]
        if wrapped:
            raise ConfigError(
                f"wrapped agents {wrapped} run in-process only", field="executor.kind"
            )
        import ray

        tree = ProcessTree()
        await asyncio.to_thread(connect, self.executor_config)
        try:
            # Ray Client runs no generator tasks: there the trace comes back whole, at the end
            streaming = not self.executor_config.address.startswith("ray://")
            remote = ray.remote(stream_cell if streaming else collect_cell)
            async with asyncio.TaskGroup() as group:
                for cell in cells:
                    group.create_task(self._cell(remote, cell, job, streaming=streaming))
        finally:
            await asyncio.to_thread(_shutdown, tree, self.executor_config.address == "local")

    async def _cell(
        self, remote: Any, cell: Cell, job: ExecutorJob, *, streaming: bool = True
    ) -> None:
        """One cell, attempt after attempt until one ends or `max_attempts` are lost."""
        errors: list[str] = []
        observe = job.observer(cell.id)
        for attempt in range(1, self.executor_config.max_attempts + 1):
            task = remote.options(
                num_cpus=0, max_retries=0, resources=cell_resources(job.config, cell)
            ).remote(job.config, cell, attempt, str(job.traces))
            mirror = _TraceMirror(job, cell)
            try:
                outcome = await mirror.follow(_batches(task, streaming), observe)
            except asyncio.CancelledError:
                _stop(task)
                mirror.close()
                raise
            except Exception as exc:  # a lost node or worker: Ray's errors, whatever kind
                full = disk_full_in(exc, mirror.path)
                if full is not None:  # this driver's disk, not the attempt: stop the run
                    _stop(task)
                    mirror.leave()
                    raise full from None
                errors.append(f"attempt {attempt}: {type(exc).__name__}: {exc}"[:500])
                log.warning("cell.attempt_lost", cell=cell.id, attempt=attempt, error=errors[-1])
                mirror.abandon()
                continue
            job.finished(outcome)
            return
        path = trace_path(job.traces, cell.id)
        error = f"lost {len(errors)} attempts; last: {errors[-1]}"
        job.finished(CellOutcome(cell, "failed", path, error=error))


def _stop(task: Any) -> None:
    """Cancel a cell's Ray task (it cleans up on its node); a failed cancel must not hide
    why the cell is stopped."""
    import ray

    with contextlib.suppress(Exception):
        ray.cancel(task)


async def _batches(task: Any, streaming: bool) -> AsyncIterator[list[StreamItem]]:
    """The batches of a generator task as they come, or a plain task's one list."""
    if streaming:
        async for ref in task:
            yield await ref
    else:
        yield await asyncio.wrap_future(task.future())


class _TraceMirror:
    """The driver's copy of one attempt's trace, appended as the lines arrive."""

    def __init__(self, job: ExecutorJob, cell: Cell) -> None:
        self.path = trace_path(job.traces, cell.id)
        self.traces = job.traces
        self.writer: TraceWriter | None = None

    async def follow(self, batches: AsyncIterator[list[StreamItem]], observe: Any) -> CellOutcome:
        """Append the streamed lines until the outcome arrives (Ray errors propagate)."""
        async for batch in batches:
            for item in batch:
                match item:
                    case Header(header=header):
                        self.writer = TraceWriter(self.path, header)
                    case Line(event=event):
                        assert self.writer is not None, "a trace line before its header"
                        self.writer.write(event)
                    case Status(phase=phase) if observe is not None:
                        observe(phase)
                    case Done(outcome=outcome):
                        self.close()
                        outcome.trace_path = self.path
                        return outcome
        raise RuntimeError("the cell's stream ended without its outcome")

    def close(self) -> None:
        """Close the file (the trace is complete or not, as far as it got)."""
        if self.writer is not None:
            self.writer.close()

    def leave(self) -> None:
        """The disk is full: close the trace as far as it got, where it is (an incomplete
        trace runs again on resume); a close that cannot flush either is let go."""
        if self.writer is not None:
            with contextlib.suppress(OSError):
                self.writer.close()

    def abandon(self) -> None:
        """A lost attempt: close its trace and set it aside as incomplete."""
        self.close()
        if self.writer is not None and self.path.exists():
            set_aside(self.traces, self.path)
