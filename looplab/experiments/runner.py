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
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from looplab.experiments.config import ExperimentConfig
from looplab.experiments.directory import is_complete, prepare, set_aside
from looplab.experiments.executors.base import ExecutorJob, make_executor
from looplab.experiments.guards.containment import check_containment
from looplab.experiments.guards.diskfull import disk_full_in
from looplab.experiments.guards.interrupt import Terminated, cancel_on_sigterm
from looplab.experiments.guards.lock import hold_directory
from looplab.experiments.matrix import Cell, expand_cells
from looplab.experiments.outcome import CellOutcome
from looplab.layout import ExperimentDir
from looplab.traces.scrub import Scrubber
from looplab.traces.store import IndexReport, ResultStore

__all__ = [
    "ExperimentResult",
    "ExperimentRunner",
    "ProgressFn",
    "StatusFn",
]

log = structlog.get_logger(__name__)


@dataclass
class ExperimentResult:
    """All cells of one invocation and where the results are."""

    directory: Path
    outcomes: list[CellOutcome] = field(default_factory=list)

    @property
    def database(self) -> Path:
        """The results database."""
        return ExperimentDir(self.directory).store


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
        self.layout = ExperimentDir(self.directory)
        self.traces = self.layout.traces
        self.progress = progress
        self.status = status
        self.pruned: list[str] = []
        """Leftover containers removed before this invocation (docker sandboxes)."""
        self.warnings: list[str] = []
        """What this run does not contain, one line each (`validate` fills it in)."""

    def validate(self) -> list[Cell]:
        """Check everything that can be checked before anything is written: the tasks (globs
        expanded), the number of cells, every backend's profile, containment
        (`looplab.experiments.guards.containment`; its warnings land in `self.warnings`).

        Returns:
            The cells, in run order.

        Raises:
            ConfigError: naming the field and what is allowed.
            PrerequisiteError: a non-scripted cell in a local sandbox without bubblewrap.
        """
        cells = expand_cells(self.config)
        for backend in self.config.backends:
            backend.latency_profile(0)
        self.warnings = check_containment(self.config)
        return cells

    def prepare_directory(self, *, fresh: bool) -> None:
        """Validate the experiment, then create its directory, or check that an existing one
        holds the same experiment.

        Raises:
            ConfigError: the experiment is invalid, or the directory holds a different one.
        """
        self.validate()
        # where cells run is not part of the experiment: resuming on another executor is fine
        current = Scrubber().scrub(self.config.model_dump(mode="json", exclude={"executor"}))
        with self.hold():
            prepare(self.directory, current, fresh=fresh)

    def hold(self) -> AbstractContextManager[None]:
        """Hold the directory's one-writer lock for a block (`looplab.experiments.guards.lock`;
        reentrant: `prepare_directory` and `run` hold it too).

        Raises:
            ConfigError: another process writes the directory, or it cannot be one.
        """
        return hold_directory(self.directory)

    async def run(self) -> ExperimentResult:
        """Run every missing cell and index all traces; leave nothing running.

        SIGTERM and Ctrl-C cancel the cells in flight: each cleans up (services, browser,
        sandbox, temporary files), its cut-off trace stays incomplete (rerun on resume),
        and the index is rebuilt from the complete traces before the interrupt propagates.

        Raises:
            ConfigError: bad tasks or backends (before anything runs), or another process
                writes the directory.
            Terminated: SIGTERM arrived (after the clean-up).
            DiskFullError: the disk under the directory filled up (the cells in flight are
                stopped, their cut-off traces rerun on resume).
        """
        cells = self.validate()
        with self.hold():
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
                except BaseExceptionGroup as group:
                    full = disk_full_in(group, self.traces)
                    if full is None:
                        raise
                    raise full from None
                finally:
                    self._index_after(failing=sys.exc_info()[1] is not None)
        return result

    def _index_after(self, *, failing: bool) -> None:
        """`index` at the end of a run; a full disk raises `DiskFullError`, or, when the run
        is already failing (interrupt, full disk), is logged so the first error stays."""
        try:
            self.index()
        except Exception as exc:
            full = disk_full_in(exc, self.layout.store)
            if full is None:
                raise
            if not failing:
                raise full from None
            log.warning("index.disk_full", store=str(self.layout.store))

    def index(self) -> IndexReport:
        """Rebuild `results.duckdb` from the complete traces (atomically)."""
        report = ResultStore.rebuild_file(self.layout.store, self.traces)
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
            path = self.layout.trace(cell.id)
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
        """Run the pending cells on the configured executor (`executors.base.EXECUTORS`)."""

        scrubber = Scrubber()

        def finished(outcome: CellOutcome) -> None:
            cell = outcome.cell
            if outcome.error:  # an upstream may quote the key in its error: never print it
                outcome.error = scrubber.text(outcome.error)
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

        executor = make_executor(self.config.executor)
        await executor.run(pending, ExecutorJob(self.config, self.traces, finished, self._observer))

    def _observer(self, cell_id: str) -> Callable[[str], None] | None:
        """A client observer turning call start/end into (cell, phase, step) status."""
        status = self.status
        if status is None:
            return None
        steps = 0

        def observe(event: str) -> None:
            nonlocal steps
            if event == "model":
                steps += 1
                status(cell_id, "model", steps)
            else:
                status(cell_id, "tools", steps)

        status(cell_id, "start", 0)
        return observe
