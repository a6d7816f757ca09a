"""The experiment runner: config -> cells -> runs -> traces + results database.

Directory layout of an experiment (`runs/<name>/` by default):

```
config.json           the resolved config; a rerun with a different one is refused
traces/<cell>.jsonl   one trace per cell (append-only, ends with run_end when complete)
traces/incomplete/    traces of runs that were cut off (kept, never counted)
results.duckdb        runs, steps, model_calls, tool_calls (rebuilt from the traces)
```

Resume: a cell whose trace is complete is not run again; a cell whose trace lacks its
`run_end` (the process was killed mid-run) has that trace moved to `incomplete/` and is
run afresh, so no run is ever counted twice.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from looplab.agents.config import AgentConfig
from looplab.agents.runner import run_task
from looplab.agents.taskset import load_task
from looplab.analysis.retime import annotate_reasoning, compose_virtual_timeline
from looplab.backends.client import EndpointConfig, InstrumentedClient
from looplab.backends.inprocess import SimulatorServer
from looplab.backends.presets import resolve_profile
from looplab.backends.profile import LatencyProfile
from looplab.clock import VirtualClock, utc_now
from looplab.errors import LooplabError
from looplab.experiments.config import BackendSpec, ExperimentConfig
from looplab.experiments.directory import is_complete, prepare, set_aside
from looplab.experiments.interrupt import Terminated, cancel_on_sigterm
from looplab.experiments.matrix import Cell, expand_cells
from looplab.experiments.monitor import LoopLagMonitor, cell_observer
from looplab.experiments.record import run_events
from looplab.experiments.workload import (
    WORKLOAD_MODEL,
    cell_clock,
    cell_shape,
    run_workload_cell,
)
from looplab.experiments.wrapped import WrappedAgent, fast_upstream, run_wrapped_cell
from looplab.tasks.references import is_trace_driven
from looplab.traces.io import TraceWriter
from looplab.traces.schema import RunEndEvent, RunStartEvent, TraceHeader
from looplab.traces.scrub import Scrubber
from looplab.traces.store import IndexReport, ResultStore
from looplab.workloads.shape import TaskShape

__all__ = [
    "CellOutcome",
    "ExperimentResult",
    "ExperimentRunner",
    "LoopLagMonitor",
    "ProgressFn",
    "StatusFn",
]

log = structlog.get_logger(__name__)


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


@dataclass
class ExperimentResult:
    """All cells of one invocation and where the results are."""

    directory: Path
    outcomes: list[CellOutcome] = field(default_factory=list)

    @property
    def database(self) -> Path:
        """The results database."""
        return self.directory / "results.duckdb"


ProgressFn = Callable[[CellOutcome, int, int], None]
StatusFn = Callable[[str, str, int], None]
"""(cell id, phase, step): see `ExperimentRunner`."""


class ExperimentRunner:
    """Runs an experiment's cells with bounded concurrency (see the module docstring).

    Args:
        config: the validated experiment.
        progress: called after each cell with (outcome, finished so far, total).
        status: called while cells run with (cell id, phase, step): phase `start` (sandbox
            and services starting), `model` (a model call of step `step` in flight), `tools`
            (between calls), `end`. For live progress displays; must not block.
    """

    def __init__(
        self,
        config: ExperimentConfig,
        progress: ProgressFn | None = None,
        status: StatusFn | None = None,
    ) -> None:
        self.config = config
        self.directory = config.resolved_output_dir()
        self.traces = self.directory / "traces"
        self.progress = progress
        self.status = status
        self._servers: dict[tuple[str, int, str], SimulatorServer] = {}
        self.pruned: list[str] = []
        """Leftover containers removed before this invocation (docker sandboxes)."""
        self._server_lock = asyncio.Lock()

    def validate(self) -> list[Cell]:
        """Check everything that can be checked before anything is written: the tasks (globs
        expanded), the number of cells, every backend's profile.

        Returns:
            The cells, in run order.

        Raises:
            ConfigError: naming the field and what is allowed.
        """
        cells = expand_cells(self.config)
        for backend in self.config.backends:
            self._profile(backend, 0)
        return cells

    def prepare_directory(self, *, fresh: bool) -> None:
        """Validate the experiment, then create its directory, or check that an existing one
        holds the same experiment.

        Raises:
            ConfigError: the experiment is invalid, or the directory holds a different one.
        """
        self.validate()
        current = Scrubber().scrub(self.config.model_dump(mode="json"))
        prepare(self.directory, current, fresh=fresh)

    async def run(self) -> ExperimentResult:
        """Run every missing cell and index all traces; leave nothing running.

        SIGTERM and Ctrl-C cancel the cells in flight: each cleans up (services, browser,
        sandbox, temporary files), its cut-off trace stays incomplete (rerun on resume),
        and the index is rebuilt from the complete traces before the interrupt propagates.

        Raises:
            ConfigError: bad tasks or backends (before anything runs).
            Terminated: SIGTERM arrived (after the clean-up).
        """
        cells = self.validate()
        await self._prune_leftovers()
        result = ExperimentResult(self.directory)
        pending = self._pending(cells, result)
        with cancel_on_sigterm() as signals:
            try:
                await self._run_pending(pending, result, len(cells))
            except asyncio.CancelledError:
                if signals:
                    raise Terminated(signals[0]) from None
                raise
            finally:
                self.index()
        return result

    def index(self) -> IndexReport:
        """Rebuild `results.duckdb` from the complete traces (atomically)."""
        report = ResultStore.rebuild_file(self.directory / "results.duckdb", self.traces)
        unstorable = {k: v for k, v in report.skipped.items() if not v.startswith("incomplete")}
        if unstorable:
            log.warning("index.skipped", traces=unstorable)
        return report

    async def _prune_leftovers(self) -> None:
        """Remove what killed runs left: host processes, cgroups, temp dirs (and containers)."""
        from looplab.sandboxes.leftovers import prune_host

        host = await asyncio.to_thread(prune_host)
        if host.processes or host.dirs or host.cgroups:
            log.info("host.pruned", processes=host.processes, dirs=host.dirs, cgroups=host.cgroups)
        if self.config.sandbox.kind == "docker":
            from looplab.sandboxes.prune import prune

            self.pruned = (await asyncio.to_thread(prune)).removed
            if self.pruned:
                log.info("sandbox.pruned", containers=self.pruned)

    def _pending(self, cells: list[Cell], result: ExperimentResult) -> list[Cell]:
        """Cells without a complete trace (cut-off traces set aside); skipped ones reported."""
        pending: list[Cell] = []
        for cell in cells:
            path = self.traces / f"{cell.id}.jsonl"
            if path.exists() and is_complete(path):
                result.outcomes.append(CellOutcome(cell, "skipped", path))
            else:
                if path.exists():
                    log.info("cell.incomplete_trace_set_aside", cell=cell.id, trace=str(path))
                    set_aside(self.traces, path)
                pending.append(cell)
        for done, outcome in enumerate(result.outcomes, start=1):
            if self.progress:
                self.progress(outcome, done, len(cells))
        return pending

    async def _run_pending(self, pending: list[Cell], result: ExperimentResult, total: int) -> None:
        gate = asyncio.Semaphore(self.config.concurrency)
        driven = self.config.workload.concurrency
        driven_gate = asyncio.Semaphore(driven) if driven else gate
        monitor = LoopLagMonitor()
        monitor.start()

        async def one(cell: Cell) -> None:
            async with driven_gate if is_trace_driven(cell.task) else gate:
                log.info("cell.start", cell=cell.id, task=cell.task, backend=cell.backend.name)
                try:
                    outcome = await self._run_cell(cell, monitor)
                except Exception as exc:  # a harness bug fails its cell, not the experiment
                    log.exception("cell.crashed", cell=cell.id)
                    path = self.traces / f"{cell.id}.jsonl"
                    outcome = CellOutcome(
                        cell, "failed", path, error=f"{type(exc).__name__}: {exc}"
                    )
            log.info(
                "cell.end",
                cell=cell.id,
                status=outcome.status,
                task_s=outcome.task_s,
                steps=outcome.steps,
                success=outcome.success,
                error=outcome.error,
                loop_lag_p99_ms=outcome.loop_lag_p99_ms,
            )
            if self.status is not None:
                self.status(cell.id, "end", outcome.steps or 0)
            result.outcomes.append(outcome)
            if self.progress:
                self.progress(outcome, len(result.outcomes), total)

        try:
            # a TaskGroup, not gather: cancelled (Ctrl-C, SIGTERM), it waits until every cell
            # has cleaned up, where gather returns as soon as one waiting cell is cancelled
            async with asyncio.TaskGroup() as group:
                for cell in pending:
                    group.create_task(one(cell))
        finally:
            await monitor.stop()
            for server in self._servers.values():
                await asyncio.to_thread(server.stop)
            self._servers.clear()

    def _profile(self, backend: BackendSpec, seed: int) -> LatencyProfile | None:
        if backend.kind == "real":
            return None
        overrides = [*backend.profile_overrides(), f"seed={seed}"]
        return resolve_profile(backend.profile or backend.name, overrides)

    async def _server(self, backend: BackendSpec, seed: int, clock_name: str) -> SimulatorServer:
        key = (backend.name, seed, clock_name)
        async with self._server_lock:
            if key not in self._servers:
                profile = self._profile(backend, seed)
                assert profile is not None
                clock = VirtualClock() if clock_name == "virtual" else None
                server = SimulatorServer(profile, clock=clock)
                await asyncio.to_thread(server.start)
                self._servers[key] = server
            return self._servers[key]

    async def _endpoint(self, cell: Cell) -> tuple[EndpointConfig, SimulatorServer | None]:
        backend = cell.backend
        if backend.kind == "real":
            assert backend.base_url is not None
            assert backend.model is not None
            endpoint = EndpointConfig(
                base_url=backend.base_url, model=backend.model, api_key_env=backend.api_key_env
            )
            return endpoint, None
        server = await self._server(backend, cell.seed, cell_clock(self.config, cell.task))
        model = WORKLOAD_MODEL if is_trace_driven(cell.task) else f"looplab-{backend.policy}"
        return EndpointConfig(base_url=server.base_url, model=model), server

    async def _run_cell(self, cell: Cell, monitor: LoopLagMonitor) -> CellOutcome:
        path = self.traces / f"{cell.id}.jsonl"
        run_id = f"{cell.id}.{uuid.uuid4().hex[:8]}"
        wrapped = {w.name: w for w in self.config.wrapped}
        if cell.agent in wrapped:
            return await self._run_wrapped(cell, wrapped[cell.agent], path, run_id)
        shape: TaskShape | None = None
        try:
            endpoint, server = await self._endpoint(cell)
            if is_trace_driven(cell.task):
                shape = cell_shape(cell.task, cell.seed, self.config.workload)
            else:
                task = load_task(cell.task)
            profile = server.simulator.profile if server else None
            header = TraceHeader(
                run_id=run_id,
                created=utc_now(),
                experiment=self.config.name,
                cell=cell.describe(),
                task=cell.task,
                agent=cell.agent,
                model=endpoint.model,
                profile=profile.model_dump(mode="json", by_alias=True) if profile else None,
                backend={"kind": cell.backend.kind, "name": cell.backend.name,
                         "base_url": endpoint.base_url},
                sandbox={"kind": self.config.sandbox.kind},
                clock=cell_clock(self.config, cell.task),
                notes=[f"trace-driven: {shape.source}", *shape.notes] if shape else [],
            )  # fmt: skip
        except LooplabError as exc:
            return CellOutcome(cell, "failed", path, error=str(exc))
        async with AsyncExitStack() as stack:
            writer = stack.enter_context(TraceWriter(path, header))
            origin_wall = utc_now()
            writer.write(
                RunStartEvent(
                    run_id=run_id, wall_time=origin_wall, start=0.0, end=0.0, task=cell.task
                )
            )
            client = await stack.enter_async_context(
                InstrumentedClient(endpoint, observer=cell_observer(self.status, cell.id))
            )
            try:
                if shape is not None:
                    run = await run_workload_cell(
                        shape, cell.task, server, client, agent_config=self._agent_config(),
                        sandbox_config=self.config.sandbox, settings=self.config.workload,
                    )  # fmt: skip
                else:
                    run = await run_task(
                        task,
                        client,
                        agent=cell.agent,
                        agent_config=self._agent_config(),
                        sandbox_config=self.config.sandbox,
                        experiment=self.config.name,
                        run_id=run_id,
                    )
            except LooplabError as exc:
                return CellOutcome(cell, "failed", path, error=str(exc))
            lag = monitor.p99_ms(run.result.started, run.result.ended)
            events = run_events(
                run_id, run, origin_wall=origin_wall, model=endpoint.model,
                profile=profile.name if profile else None, loop_lag_p99_ms=lag,
            )  # fmt: skip
            if cell_clock(self.config, cell.task) == "virtual" and server is not None:
                events = compose_virtual_timeline(events, server.simulator.timings)
            elif server is not None:
                events = annotate_reasoning(events, server.simulator.timings)
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
            loop_lag_p99_ms=end.loop_lag_p99_ms,
        )

    async def _run_wrapped(
        self, cell: Cell, agent: WrappedAgent, path: Path, run_id: str
    ) -> CellOutcome:
        """A wrapped (foreign) agent's cell: `looplab.experiments.wrapped`."""
        profile = self._profile(cell.backend, cell.seed)
        fast = fast_upstream(cell.backend, agent, profile)
        try:
            server = await self._server(fast, cell.seed, self.config.clock) if fast else None
            upstream = server.base_url if server else None
            end = await run_wrapped_cell(
                agent, task_id=cell.task, profile=profile, trace=path, run_id=run_id,
                upstream=upstream or cell.backend.base_url, experiment=self.config.name,
                cell=cell.describe(),
            )  # fmt: skip
        except LooplabError as exc:
            return CellOutcome(cell, "failed", path, error=str(exc))
        return CellOutcome(cell, "done", path, task_s=end.end, steps=end.steps, success=None)

    def _agent_config(self) -> AgentConfig:
        budgets = self.config.budgets
        return self.config.agent.model_copy(
            update={
                "max_steps": budgets.max_steps,
                "token_budget": budgets.max_tokens,
                "wall_time_budget_s": budgets.wall_time_s,
            }
        )
