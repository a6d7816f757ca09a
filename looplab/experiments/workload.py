"""Trace-driven cells of an experiment: load the shape, hand it to the simulator, play it.

A cell whose task is `trace:...`, `workload:...` or `workload/<id>` (see
`looplab.workloads.resolve`) runs the workload agent against the simulator's `workload`
policy (model `looplab-workload`), whatever the backend's `policy` says: the shape is
loaded into that backend's in-process simulator before the run. The shape is scaled by
the experiment's `workload.tool_scale`, and its cache hits are dropped when
`workload.cache` is `simulator`. `workload.clock` may put trace-driven cells on another
clock than the experiment's (`cell_clock`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from looplab.agents.config import AgentConfig
from looplab.agents.runner import TaskRun
from looplab.agents.workload.runner import run_workload_task
from looplab.backends.client.client import InstrumentedClient
from looplab.backends.policies.workload import WorkloadPolicy
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.errors import ConfigError
from looplab.sandbox_contract import SandboxConfig
from looplab.tasks.references import is_trace_driven
from looplab.workloads.resolve import WorkloadSettings, load_shape
from looplab.workloads.shape import TaskShape

if TYPE_CHECKING:
    from looplab.experiments.config import ExperimentConfig

__all__ = ["WORKLOAD_MODEL", "cell_clock", "cell_shape", "run_workload_cell"]

WORKLOAD_MODEL = "looplab-workload"
"""The simulator model id that plays task shapes."""


def cell_clock(config: ExperimentConfig, task: str) -> Literal["wall", "virtual"]:
    """The clock a cell runs on: `workload.clock` for trace-driven tasks when set, else
    the experiment's `clock`."""
    if is_trace_driven(task) and config.workload.clock is not None:
        return config.workload.clock
    return config.clock


def cell_shape(task: str, seed: int, settings: WorkloadSettings) -> TaskShape:
    """The (scaled) shape a trace-driven cell plays.

    Raises:
        ConfigError: the task's file is missing or gives no shape.
    """
    shape = load_shape(task, seed).scaled(tool_scale=settings.tool_scale)
    return shape.without_cache_hits() if settings.cache == "simulator" else shape


async def run_workload_cell(
    shape: TaskShape,
    task: str,
    server: SimulatorServer | None,
    client: InstrumentedClient,
    *,
    agent_config: AgentConfig,
    sandbox_config: SandboxConfig,
    settings: WorkloadSettings,
) -> TaskRun:
    """Load `shape` into `server`'s workload policy and play it through `client`.

    Raises:
        ConfigError: no simulator (trace-driven tasks need a simulated backend).
    """
    policy = server.simulator.policies.get(WORKLOAD_MODEL) if server is not None else None
    if not isinstance(policy, WorkloadPolicy):
        raise ConfigError(f"{task!r} needs a simulated backend", field="backends")
    policy.load(shape)
    return await run_workload_task(
        shape,
        client,
        agent_config=agent_config,
        sandbox_config=sandbox_config,
        settings=settings,
        task_name=task,
    )
