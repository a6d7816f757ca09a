"""Run one bundled task end to end: workspace -> sandbox -> services -> agent -> check.

This is the per-cell work of an experiment (the runner of issue 5 wraps it): it times the
sandbox start apart from the task (task time starts at the first model request), runs the
task kind's agent, and judges the result with the task's own check.

Web tasks (and coding tasks with `browse_via: browser`) get a `BrowserSession` on this
host, launched after the sandbox and its services (its start is setup too, reported as
`browser_start_s`). The browser reaches the task's services on the host's loopback (see
sandboxes/browser.py), so the prompt names the services' host URLs, and the sandbox gets
network `bridge` with the services' ports published.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from dataclasses import dataclass
from typing import Any

from looplab.agents.coding.agent import SYSTEM_PROMPT as CODING_PROMPT
from looplab.agents.coding.agent import coding_toolbox
from looplab.agents.computer_use.agent import SYSTEM_PROMPT as COMPUTER_USE_PROMPT
from looplab.agents.computer_use.agent import computer_use_toolbox
from looplab.agents.config import AgentConfig
from looplab.agents.loop import AgentLoop
from looplab.agents.records import RunResult
from looplab.agents.services import start_services, stop_services
from looplab.agents.taskset import CheckResult, Task
from looplab.backends.client import InstrumentedClient
from looplab.errors import SandboxError
from looplab.sandbox import SandboxConfig, SandboxEvent
from looplab.sandboxes.browser import BrowserConfig, BrowserSession
from looplab.sandboxes.factory import open_sandbox
from looplab.tools.base import ToolContext
from looplab.tools.registry import ToolBox

__all__ = ["TaskRun", "run_task"]


@dataclass
class TaskRun:
    """One task run: the agent's result, the checker's verdict, and the setup cost."""

    task: str
    result: RunResult
    check: CheckResult
    sandbox_start_s: float
    sandbox: str
    browser_start_s: float = 0.0
    """Launching the browser (web tasks), also setup: not in the task time."""

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
    browser_config: BrowserConfig | None = None,
) -> TaskRun:
    """Run `task` with its kind's agent and check the outcome.

    Args:
        task: a loaded task instance.
        client: the backend (simulated or real).
        agent_config: loop settings; the task's limits apply when they are stricter.
        sandbox_config: sandbox kind and limits; the task's network need is applied.
        browser_config: how the browser is launched (web tasks, `browse_via: browser`).

    Raises:
        SandboxError, PrerequisiteError: the sandbox, a service or the browser cannot
            start, or a service the browser needs is not reachable from this host.
    """
    config = _with_task_limits(agent_config or AgentConfig(), task)
    web = task.spec.kind == "web"
    use_browser = web or config.browse_via == "browser"
    base = sandbox_config or SandboxConfig()
    sandbox_config = base.model_copy(update=_network_update(task, base, use_browser))
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
    browser: BrowserSession | None = None
    browser_start_s = 0.0
    try:
        services = await start_services(sandbox, task.spec.services)
        sandbox_start_s = time.perf_counter() - started
        urls = services.inside
        if use_browser:
            unreachable = sorted(set(services.inside) - set(services.host))
            if unreachable:
                raise SandboxError(
                    f"services {unreachable} are not published on this host's loopback",
                    sandbox_id=sandbox.id,
                )
            urls = services.host
            launched = time.perf_counter()
            browser = await BrowserSession.start(browser_config)
            browser_start_s = time.perf_counter() - launched
        toolbox: ToolBox
        if web:
            toolbox = computer_use_toolbox(
                snapshot_after_action=config.snapshot_after_action,
                screenshots=config.screenshots,
            )
            prompt = COMPUTER_USE_PROMPT
        else:
            toolbox, prompt = coding_toolbox(config.browse_via), CODING_PROMPT
        context = ToolContext(sandbox=sandbox, services=services.inside, browser=browser)
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
    return TaskRun(task.name, result, check, sandbox_start_s, sandbox.description, browser_start_s)


def _with_task_limits(config: AgentConfig, task: Task) -> AgentConfig:
    limits = task.spec.limits
    budget = config.wall_time_budget_s
    return config.model_copy(
        update={
            "max_steps": min(config.max_steps, limits.max_steps),
            "wall_time_budget_s": min(budget, limits.wall_time_s) if budget else limits.wall_time_s,
        }
    )


def _network_update(task: Task, base: SandboxConfig, use_browser: bool) -> dict[str, Any]:
    """A host browser needs the services on the host's loopback: network + published ports."""
    network = "bridge" if use_browser else task.spec.network
    if network == "none":
        return {}
    ports = sorted({*base.publish_ports, *(s.port for s in task.spec.services)})
    return {"network": network, "publish_ports": ports}
