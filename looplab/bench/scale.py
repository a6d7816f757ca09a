"""`looplab bench scale`: cells per hour on the virtual clock, in-process and on a local
Ray with 1, 2, 4 ... slots (one cell per slot), and what Ray itself costs.

Every mode runs the same matrix (bundled coding tasks, simulated backends, the virtual
clock: model waits cost nothing, tools run for real) into a fresh temporary directory;
the time is the whole `ExperimentRunner.run` (Ray modes include starting and stopping
their local Ray). Scaling is throughput over the 1-slot throughput, against the ideal N.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.executors.config import SLOT_RESOURCE
from looplab.experiments.runner import ExperimentRunner

__all__ = ["RayOverhead", "ScaleRow", "measure_ray_overhead", "run_scale_bench", "scale_config"]


@dataclass(frozen=True)
class ScaleRow:
    """One mode of `looplab bench scale`."""

    mode: str
    slots: int
    cells: int
    failed: int
    seconds: float

    @property
    def cells_per_hour(self) -> float:
        """Throughput: cells finished per hour of wall time."""
        return (self.cells - self.failed) * 3600 / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class RayOverhead:
    """What a local Ray costs by itself."""

    start_s: float
    first_task_s: float
    per_task_ms: float
    shutdown_s: float


def scale_config(cells: int, directory: Path, executor: dict[str, Any]) -> ExperimentConfig:
    """`cells` virtual-clock cells (fast simulated backend, a bundled coding task)."""
    return validate_model(
        ExperimentConfig,
        {
            "name": "bench-scale",
            "backends": [{"name": "fast", "profile": "fast-750"}],
            "tasks": ["coding/fix-pager"],
            "repetitions": cells,
            "clock": "virtual",
            "concurrency": executor.pop("concurrency", 1),
            "executor": executor,
            "output_dir": str(directory),
            "budgets": {"max_steps": 20},
        },
    )


def _time_run(config: ExperimentConfig) -> tuple[float, int]:
    """Seconds for the whole run and the number of failed cells."""
    runner = ExperimentRunner(config)
    runner.prepare_directory(fresh=True)
    started = time.perf_counter()
    result = asyncio.run(runner.run())
    return time.perf_counter() - started, sum(o.status == "failed" for o in result.outcomes)


def run_scale_bench(cells: int, slots: list[int], *, inprocess: bool = True) -> list[ScaleRow]:
    """Run the matrix in-process (concurrency 1 and max(slots)) and on Ray per slot count."""
    modes: list[tuple[str, int, dict[str, Any]]] = []
    if inprocess:
        for n in sorted({1, max(slots)}):
            modes.append(("in-process", n, {"kind": "inprocess", "concurrency": n}))
    for n in slots:
        ray = {"kind": "ray", "address": "local", "local_slots": n, "virtual_cells_per_slot": 1}
        modes.append(("ray local", n, ray))
    rows = []
    with tempfile.TemporaryDirectory(prefix="looplab-bench-scale-") as temporary:
        for index, (mode, n, executor) in enumerate(modes):
            config = scale_config(cells, Path(temporary) / str(index), executor)
            seconds, failed = _time_run(config)
            rows.append(ScaleRow(mode, n, cells, failed, seconds))
    return rows


def _noop() -> None:
    return None


def measure_ray_overhead(tasks: int = 50) -> RayOverhead:
    """Start a local Ray (1 slot), time a first and `tasks` warm no-op tasks, stop it."""
    import ray

    started = time.perf_counter()
    ray.init(
        address="local",  # a new Ray, never one `ray start` left running here
        num_cpus=1,
        resources={SLOT_RESOURCE: 1},
        include_dashboard=False,
        log_to_driver=False,
    )
    start_s = time.perf_counter() - started
    try:
        remote = ray.remote(_noop).options(num_cpus=0, resources={SLOT_RESOURCE: 0.01})
        began = time.perf_counter()
        ray.get(remote.remote())
        first_task_s = time.perf_counter() - began
        times = []
        for _ in range(tasks):
            began = time.perf_counter()
            ray.get(remote.remote())
            times.append(time.perf_counter() - began)
    finally:
        began = time.perf_counter()
        ray.shutdown()
        shutdown_s = time.perf_counter() - began
    return RayOverhead(start_s, first_task_s, statistics.median(times) * 1000, shutdown_s)
