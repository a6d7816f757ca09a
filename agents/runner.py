"""Run one bundled task end to end: workspace -> sandbox -> services -> agent -> check.

This is the per-cell work of an experiment (the runner of issue 5 wraps it): it times the
sandbox start apart from the task (task time starts at the first model request), runs the
task kind's agent, and judges the result with the task's own check.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from dataclasses import dataclass
from typing import Any

from agents.coding.agent import SYSTEM_PROMPT as CODING_PROMPT
from agents.coding.agent import coding_toolbox
from agents.config import AgentConfig
from agents.loop import AgentLoop
from agents.records import RunResult
from agents.services import start_services, stop_services
from agents.taskset import CheckResult, Task
from looplab.backends.client import InstrumentedClient
from looplab.errors import ConfigError
from looplab.sandbox import SandboxConfig, SandboxEvent
from sandboxes.factory import open_sandbox
from tools.base import ToolContext

__all__ = ["TaskRun", "run_task"]


@dataclass
class TaskRun:
    """One task run: the agent's result, the checker's verdict, and the setup cost."""

    task: str
    result: RunResult
    check: CheckResult
    sandbox_start_s: float
    sandbox: str

    @property
    def solved(self) -> bool:
        """The check passed (whatever the agent said)."""
        return self.check.passed


async def run_task(
    task: Task,
    client: InstrumentedClient,
    *,
    agent_config: AgentConfig | None = None,
    sandbox_config: SandboxConfig | None = None,
) -> TaskRun:
    """Run `task` with its kind's agent and check the outcome.

    Args:
        task: a loaded task instance.
        client: the backend (simulated or real).
        agent_config: loop settings; the task's limits apply when they are stricter.
        sandbox_config: sandbox kind and limits; the task's network need is applied.

    Raises:
        ConfigError: a web task or `browse_via: browser` (not available yet).
        SandboxError, PrerequisiteError: the sandbox or a service cannot start.
    """
    config = _with_task_limits(agent_config or AgentConfig(), task)
    if task.spec.kind != "coding" or config.browse_via != "sandbox":
        # the computer-use agent and the Playwright BrowserSession are not written yet
        raise ConfigError(
            f"{task.name}: only coding tasks with browse_via 'sandbox' can run so far",
            field="browse_via" if task.spec.kind == "coding" else "task",
            allowed=["coding tasks", "sandbox"],
        )
    base = sandbox_config or SandboxConfig()
    sandbox_config = base.model_copy(update=_network_update(task, base))
    pristine = task.build_workspace()
    events: list[SandboxEvent] = []
    sink_target: list[AgentLoop] = []

    def sink(event: SandboxEvent) -> None:
        if sink_target:
            sink_target[0].record_sandbox_event(event)
        else:
            events.append(event)

    started = time.perf_counter()
    sandbox = await open_sandbox(sandbox_config, pristine, sink=sink, run_id=task.name)
    browser: Any = None
    try:
        services = await start_services(sandbox, task.spec.services)
        sandbox_start_s = time.perf_counter() - started
        toolbox = coding_toolbox(config.browse_via)
        urls = services.inside
        prompt = CODING_PROMPT
        context = ToolContext(sandbox=sandbox, services=urls, browser=browser)
        loop = AgentLoop(client, toolbox, context, prompt, config)
        sink_target.append(loop)
        result = await loop.run(task.prompt(urls))
        sink_target.clear()
        check = await task.check(sandbox, pristine)
        await stop_services(sandbox, task.spec.services)
    finally:
        if browser is not None:
            with contextlib.suppress(Exception):
                await browser.close()
        await sandbox.close()
        shutil.rmtree(pristine.parent, ignore_errors=True)
    return TaskRun(task.name, result, check, sandbox_start_s, sandbox.description)


def _with_task_limits(config: AgentConfig, task: Task) -> AgentConfig:
    limits = task.spec.limits
    budget = config.wall_time_budget_s
    return config.model_copy(
        update={
            "max_steps": min(config.max_steps, limits.max_steps),
            "wall_time_budget_s": min(budget, limits.wall_time_s) if budget else limits.wall_time_s,
        }
    )


def _network_update(task: Task, base: SandboxConfig) -> dict[str, Any]:
    if task.spec.network == "none":
        return {}
    ports = sorted({*base.publish_ports, *(s.port for s in task.spec.services)})
    return {"network": task.spec.network, "publish_ports": ports}
