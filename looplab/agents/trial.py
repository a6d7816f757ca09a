"""A quick trial: bundled tasks at several speeds, driven by the scripted policy.

The logic of `looplab agents try` (`agents/commands.py`): one simulator per latency
preset, each task run end to end in a fresh sandbox, per-run totals returned for printing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from looplab.agents.config import AgentConfig
from looplab.agents.runner import TaskRun, run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.sandbox_contract import SandboxConfig
from looplab.tasks import load_task

__all__ = ["TrialRow", "run_trial"]


@dataclass(frozen=True)
class TrialRow:
    """One run of the trial."""

    preset: str
    task: str
    run: TaskRun

    @property
    def steps(self) -> int:
        """Model calls made."""
        return len(self.run.result.steps)


async def run_trial(
    tasks: Sequence[str],
    presets: Sequence[str],
    *,
    overrides: Sequence[str] = (),
    sandbox: SandboxConfig | None = None,
    agent: AgentConfig | None = None,
) -> list[TrialRow]:
    """Run every task at every preset with `looplab-scripted` and return the runs.

    Raises:
        ConfigError: an unknown task or preset, or a bad override.
        SandboxError, PrerequisiteError: a sandbox, service or browser cannot start.
    """
    loaded = [load_task(name) for name in tasks]
    rows: list[TrialRow] = []
    for preset in presets:
        profile = resolve_profile(preset, list(overrides))
        async with SimulatorServer(profile) as server:
            endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
            async with InstrumentedClient(endpoint) as client:
                for task in loaded:
                    run = await run_task(task, client, agent_config=agent, sandbox_config=sandbox)
                    rows.append(TrialRow(preset, task.name, run))
    return rows
