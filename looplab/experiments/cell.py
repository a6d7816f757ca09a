"""One cell of an experiment, run to its trace: `run_cell(context, cell) -> CellOutcome`.

A cell is one (backend, agent, task, repetition). Running it writes exactly one trace at
`<traces>/<cell id>.jsonl`: the header, `run_start`, then (only once the run has finished)
its model, tool, sandbox and step events and `run_end`. A cell cut off before that leaves
a trace without `run_end`, which resume sets aside. Three kinds of cell, chosen by
`cell_kind`: a `wrapped` foreign agent (`looplab.experiments.wrapped`), a trace-driven
`workload` (`looplab.experiments.workload`), or a bundled `task` run by its agent.

The function is independent of where it runs: the in-process runner calls it for each cell,
and an executor on another process or node can call it with its own `ServerPool`.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from looplab.agents.config import AgentConfig, tightest
from looplab.agents.runner import TaskRun, run_task
from looplab.analysis.caps import cap_events
from looplab.analysis.retime import annotate_reasoning, compose_virtual_timeline
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.clock import utc_now
from looplab.errors import LooplabError
from looplab.experiments.axes import apply_to_config
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.guards.monitor import LoopLagMonitor
from looplab.experiments.matrix import Cell
from looplab.experiments.outcome import CellOutcome
from looplab.experiments.record import run_events
from looplab.experiments.servers import ServerPool
from looplab.experiments.workload import cell_clock, cell_shape, run_workload_cell
from looplab.experiments.wrapped import fast_upstream, run_wrapped_cell
from looplab.layout import trace_path
from looplab.tasks import load_task
from looplab.tasks.references import is_trace_driven
from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import EventBuilder
from looplab.traces.end_reason import EndReason
from looplab.traces.identity import run_identity
from looplab.traces.io import TraceWriter
from looplab.traces.schema import RunEndEvent, TraceEvent, TraceHeader
from looplab.workloads.shape import TaskShape

__all__ = [
    "CellContext",
    "CellKind",
    "TraceSink",
    "agent_config",
    "cell_kind",
    "run_cell",
]

CellKind = Literal["wrapped", "workload", "task"]
Observer = Callable[[str], None]


class TraceSink(Protocol):
    """Where a cell's trace lines go: a `TraceWriter`, or a stream to the process that
    writes the experiment directory (an executor's worker)."""

    def write(self, event: TraceEvent) -> None:
        """Append one event."""
        ...

    def close(self) -> None:
        """No more events (idempotent)."""
        ...


def _trace_writer(path: Path, header: TraceHeader) -> TraceSink:
    return TraceWriter(path, header)


@dataclass
class CellContext:
    """What every cell of one experiment shares."""

    config: ExperimentConfig
    traces: Path
    """The directory the cell's trace goes to."""
    servers: ServerPool
    monitor: LoopLagMonitor
    observer: Callable[[str], Observer | None] = field(default=lambda _cell_id: None)
    """Per cell id: a client observer (model/tool phase changes), or None."""
    open_trace: Callable[[Path, TraceHeader], TraceSink] = _trace_writer
    """Opens the cell's trace: by default a `TraceWriter` on the file."""


def agent_config(config: ExperimentConfig, *, clock: str = "virtual") -> AgentConfig:
    """The agent settings with the experiment's budgets applied: `budgets.max_steps`,
    `max_tokens` and the agent's deadline `wall_time_budget_s`, the tightest of
    `budgets.wall_time_s`, the `agent` section's own `wall_time_budget_s` and, on the wall
    clock, the task time cap `task_timeout_s` (which then stops the loop as a wall-time
    budget would; on the virtual clock only `_capped` applies it, to the composed task
    time). The token budget is the tighter of `budgets.max_tokens` and the agent's own; the
    step budget is `budgets.max_steps` (it has a default, so it always replaces the
    agent's)."""
    budgets = config.budgets
    cap = budgets.task_timeout_s if clock == "wall" else None
    return config.agent.with_limits(
        max_steps=budgets.max_steps,
        token_budget=tightest(budgets.max_tokens, config.agent.token_budget),
        wall_time_budget_s=tightest(budgets.wall_time_s, config.agent.wall_time_budget_s, cap),
    )


def _capped(config: ExperimentConfig, events: list[TraceEvent]) -> list[TraceEvent]:
    """The run cut at the experiment's task time cap, ending `timeout` (`cap_events`)."""
    cap = config.budgets.task_timeout_s
    if cap is None:
        return events
    end = events[-1]
    wall = config.budgets.wall_time_s
    stopped = (
        isinstance(end, RunEndEvent)
        and end.end_reason == EndReason.WALL_TIME_BUDGET
        and (wall is None or cap <= wall)
    )
    return cap_events(events, cap, stopped=stopped)


def cell_kind(config: ExperimentConfig, cell: Cell) -> CellKind:
    """Which runner the cell needs: a wrapped agent, a trace-driven workload, a task."""
    if any(w.name == cell.agent for w in config.wrapped):
        return "wrapped"
    return "workload" if is_trace_driven(cell.task) else "task"


async def run_cell(context: CellContext, cell: Cell) -> CellOutcome:
    """Run one cell and write its trace (see the module docstring).

    Returns:
        `done` with the run's totals, or `failed` with the error (bad task, backend or
        sandbox); a harness bug raises.
    """
    path = trace_path(context.traces, cell.id)
    run_id = f"{cell.id}.{uuid.uuid4().hex[:8]}"
    config: ExperimentConfig = apply_to_config(context.config, cell.variant)
    try:
        if cell_kind(config, cell) == "wrapped":
            return await _run_wrapped(context, cell, path, run_id)
        clock = cell_clock(config, cell.task)
        endpoint, server = await context.servers.endpoint(cell, virtual=clock == "virtual")
        start = _agent_start(config, cell, run_id, server)
        header = _header(config, cell, run_id, endpoint, server, start.shape)
    except LooplabError as exc:
        return CellOutcome(cell, "failed", path, error=str(exc))
    async with AsyncExitStack() as stack:
        writer = context.open_trace(path, header)
        stack.callback(writer.close)
        origin_wall = utc_now()
        # the origin's clock time is known once the run has ended: its wall time now
        writer.write(EventBuilder(run_id, RunAxis(None, origin_wall)).run_start(task=cell.task))
        client = await stack.enter_async_context(
            InstrumentedClient(endpoint, observer=context.observer(cell.id))
        )
        try:
            run = await start.run(client)
        except LooplabError as exc:
            return CellOutcome(cell, "failed", path, error=str(exc))
        lag = context.monitor.p99_ms(run.result.started, run.result.ended)
        mean_lag = context.monitor.mean_ms(run.result.started, run.result.ended)
        events = run_events(
            run_id,
            run,
            origin_wall=origin_wall,
            model=endpoint.model,
            profile=server.simulator.profile.name if server else None,
            loop_lag_p99_ms=lag,
        )
        if server is not None and clock == "virtual":
            events = compose_virtual_timeline(events, server.simulator.phases)
        elif server is not None:
            events = annotate_reasoning(events, server.simulator.phases)
        events = _capped(config, events)
        for event in events:
            writer.write(event)
    end = events[-1]
    assert isinstance(end, RunEndEvent)
    return CellOutcome(
        cell,
        "done",
        path,
        task_s=end.end,
        steps=end.steps,
        success=end.success,
        error=end.error,
        loop_lag_p99_ms=end.loop_lag_p99_ms,
        end_reason=end.end_reason,
        loop_lag_mean_ms=mean_lag,
        clock=clock,
    )


@dataclass
class _AgentStart:
    """How to run the cell's agent once its client is open."""

    run: Callable[[InstrumentedClient], Awaitable[TaskRun]]
    shape: TaskShape | None = None
    """The trace-driven shape, for workload cells."""


def _agent_start(
    config: ExperimentConfig, cell: Cell, run_id: str, server: SimulatorServer | None
) -> _AgentStart:
    """Load the cell's task (or draw its workload shape): input errors raise here, before
    the trace exists."""
    agent = agent_config(config, clock=cell_clock(config, cell.task))
    if cell_kind(config, cell) == "workload":
        shape = cell_shape(cell.task, cell.seed, config.workload)

        def workload(client: InstrumentedClient) -> Awaitable[TaskRun]:
            return run_workload_cell(
                shape,
                cell.task,
                server,
                client,
                agent_config=agent,
                sandbox_config=config.sandbox,
                settings=config.workload,
            )

        return _AgentStart(workload, shape)
    task = load_task(cell.task)

    def bundled(client: InstrumentedClient) -> Awaitable[TaskRun]:
        return run_task(
            task,
            client,
            agent=cell.agent,
            agent_config=agent,
            sandbox_config=config.sandbox,
            experiment=config.name,
            run_id=run_id,
        )

    return _AgentStart(bundled)


def _header(
    config: ExperimentConfig,
    cell: Cell,
    run_id: str,
    endpoint: EndpointConfig,
    server: SimulatorServer | None,
    shape: TaskShape | None,
) -> TraceHeader:
    """The trace header: what ran, against which profile and endpoint, in which sandbox."""
    profile = server.simulator.profile if server else None
    return TraceHeader(
        run_id=run_id,
        created=utc_now(),
        experiment=config.name,
        cell=cell.describe(),
        task=cell.task,
        agent=cell.agent,
        model=endpoint.model,
        profile=profile.model_dump(mode="json", by_alias=True) if profile else None,
        backend={
            "kind": cell.backend.kind,
            "name": cell.backend.name,
            "base_url": endpoint.base_url,
            **({"transport": endpoint.transport} if endpoint.transport != "http" else {}),
        },
        sandbox={"kind": config.sandbox.kind},
        clock=cell_clock(config, cell.task),
        identity=run_identity(
            agent=cell.agent,
            task=cell.task,
            profile=cell.backend.name,
            decode_tps=profile.decode_tps if profile else None,
            clock=cell_clock(config, cell.task),
            model=endpoint.model,
        ),
        notes=[f"trace-driven: {shape.source}", *shape.notes] if shape else [],
    )


async def _run_wrapped(context: CellContext, cell: Cell, path: Path, run_id: str) -> CellOutcome:
    """A wrapped (foreign) agent's cell: `looplab.experiments.wrapped`."""
    config = context.config
    agent = next(w for w in config.wrapped if w.name == cell.agent)
    profile = cell.backend.latency_profile(cell.seed)
    fast = fast_upstream(cell.backend, agent, profile)
    upstream = (await context.servers.server(fast, cell.seed)).base_url if fast else None
    end = await run_wrapped_cell(
        agent,
        task_id=cell.task,
        profile=profile,
        trace=path,
        run_id=run_id,
        upstream=upstream or cell.backend.base_url,
        experiment=config.name,
        cell=cell.describe(),
    )
    return CellOutcome(cell, "done", path, task_s=end.end, steps=end.steps, success=end.success)
