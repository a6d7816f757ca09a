"""Run one bundled task end to end: workspace -> sandbox -> services -> agent -> check.

This is the per-cell work of an experiment (the runner of issue 5 wraps it): it times the
sandbox start apart from the task (task time starts at the first model request), runs an
agent (`AGENT_KINDS`, a name -> kind registry; by default the task kind's), and judges the
result with the task's own check. However it ends, nothing it started is left: services are
stopped (TERM, then KILL, verified), the browser and sandbox closed, the host workspace
(owner-marked, for `looplab sandbox prune` after a kill -9) deleted.

Web tasks (and coding tasks with `browse_via: browser`) get a `BrowserSession` on this
host, launched after the sandbox and its services (its start is setup too, reported as
`browser_start_s`). The browser reaches the task's services on the host's loopback (see
sandboxes/browser.py), so the prompt names the services' host URLs, and the sandbox gets
network `bridge` with the services' ports published.

With `agent.eager_sandbox` (and no browser; `eager_applies`), the services' ports are
chosen first so the prompt's URLs are known, then the setup runs next to the first model call
and the first tool call waits for it; the setup still ends before the check, and an
unfinished setup is cancelled and awaited before the teardown. `TaskRun.setup_started`
gives the end-to-end time (setup + task) that this knob shortens.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from looplab.agents.coding.agent import SYSTEM_PROMPT as CODING_PROMPT
from looplab.agents.coding.agent import coding_toolbox
from looplab.agents.computer_use.agent import SYSTEM_PROMPT as COMPUTER_USE_PROMPT
from looplab.agents.computer_use.agent import computer_use_toolbox
from looplab.agents.config import TASK_KIND_AGENTS, AgentConfig, tightest
from looplab.agents.loop import AgentLoop
from looplab.agents.records import RunResult
from looplab.agents.services import inside_urls, service_ports, start_services, stop_services
from looplab.backends.client.client import InstrumentedClient
from looplab.config import replaced
from looplab.errors import ConfigError, LooplabError, SandboxError
from looplab.sandbox_contract import Sandbox, SandboxConfig, SandboxEvent
from looplab.sandboxes.browser import BrowserConfig, BrowserSession
from looplab.sandboxes.factory import open_sandbox
from looplab.sandboxes.leftovers import mark_owned
from looplab.tasks import CheckResult, Task
from looplab.tools.base import ToolContext
from looplab.tools.registry import ToolBox

__all__ = [
    "AGENT_KINDS",
    "AgentKind",
    "TaskRun",
    "agent_kind",
    "eager_applies",
    "run_task",
]

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class AgentKind:
    """One kind of agent: its system prompt, its tools, and whether it drives a browser."""

    prompt: str
    toolbox: Callable[[AgentConfig], ToolBox]
    browser: bool = False
    """Needs a `BrowserSession` on this host (the computer-use tools)."""


AGENT_KINDS: dict[str, AgentKind] = {
    "coding": AgentKind(CODING_PROMPT, lambda config: coding_toolbox(config.browse_via)),
    "computer_use": AgentKind(
        COMPUTER_USE_PROMPT,
        lambda config: computer_use_toolbox(
            snapshot_after_action=config.snapshot_after_action,
            screenshots=config.screenshots,
            trace_screenshots=config.trace_screenshots,
            observation=config.observation,
        ),
        browser=True,
    ),
}
"""Agent kind name -> how to build it; a new kind joins with one line."""


def agent_kind(name: str) -> AgentKind:
    """The registered agent kind `name`.

    Raises:
        ConfigError: no such kind (the message lists the registered ones).
    """
    try:
        return AGENT_KINDS[name]
    except KeyError:
        raise ConfigError(
            f"unknown agent kind {name!r}", field="agent", allowed=sorted(AGENT_KINDS)
        ) from None


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
    setup_events: list[SandboxEvent] = field(default_factory=list)
    """Sandbox operations of the setup (create, services), for the trace; with
    `eager_sandbox` they overlap the first step."""
    setup_started: float | None = None
    """`time.perf_counter()` when the setup began (None: unknown): end to end =
    `result.ended - setup_started`."""

    @property
    def solved(self) -> bool:
        """The check passed (whatever the agent said)."""
        return self.check.passed


async def run_task(
    task: Task,
    client: InstrumentedClient,
    *,
    agent: str | None = None,
    agent_config: AgentConfig | None = None,
    sandbox_config: SandboxConfig | None = None,
    browser_config: BrowserConfig | None = None,
    experiment: str = "",
    run_id: str = "",
) -> TaskRun:
    """Run `task` with an agent and check the outcome; leave nothing running.

    Whatever happens (an error, cancellation by Ctrl-C or SIGTERM), the services are
    stopped, the browser and the sandbox closed and the host workspace deleted before this
    returns or raises.

    Args:
        task: a loaded task instance.
        client: the backend (simulated or real).
        agent: an `AGENT_KINDS` name; default: the task kind's (`TASK_KIND_AGENTS`).
        agent_config: loop settings; the task's limits apply when they are stricter.
        sandbox_config: sandbox kind and limits; the task's network need is applied.
        browser_config: how the browser is launched (web tasks, `browse_via: browser`);
            default: the agent config's viewport.
        experiment: the experiment's name (docker label `looplab.experiment`).
        run_id: the run's id (docker label `looplab.run`; default: the task's name).

    Raises:
        ConfigError: an unknown agent kind.
        SandboxError, PrerequisiteError: the sandbox, a service or the browser cannot
            start, or a service the browser needs is not reachable from this host.
    """
    kind = agent_kind(agent or TASK_KIND_AGENTS[task.spec.kind])
    config = _with_task_limits(agent_config or AgentConfig(), task)
    use_browser = kind.browser or config.browse_via == "browser"
    base = sandbox_config or SandboxConfig()
    sandbox_config = replaced(base, **_network_update(task, base, use_browser))
    pristine = task.build_workspace()
    mark_owned(pristine.parent)
    eager = config.eager_sandbox and eager_applies(use_browser)
    state = _Setup()
    if browser_config is None:
        browser_config = BrowserConfig(
            viewport_width=config.viewport_width, viewport_height=config.viewport_height
        )

    def set_up() -> Awaitable[ToolContext]:
        return _set_up(
            state,
            task,
            sandbox_config,
            pristine,
            browser_config,
            use_browser=use_browser,
            experiment=experiment,
            run_id=run_id or task.name,
        )

    started = time.perf_counter()
    pending: asyncio.Future[ToolContext] | None = None
    try:
        if eager:  # the first model call goes out while the sandbox starts
            state.ports = service_ports(sandbox_config.kind, task.spec.services)
            state.urls = inside_urls(state.ports)
            pending = asyncio.ensure_future(set_up())
        context = None if pending is not None else await set_up()
        loop = AgentLoop(client, kind.toolbox(config), context, kind.prompt, config, None, pending)
        state.loop = loop
        result = await loop.run(task.prompt(state.urls))
        state.loop = None  # the check's and the teardown's events: with the setup's
        if pending is not None:
            await pending  # a setup failure raises here even if no tool ever waited
        assert state.sandbox is not None
        check = await task.check(state.sandbox, pristine)
    finally:
        state.loop = None
        await _settle(pending)
        await _tear_down(state.sandbox, task, state.browser, stop=state.services_may_run)
        shutil.rmtree(pristine.parent, ignore_errors=True)
    if config.eager_sandbox:
        result.knob_stats["eager_applied"] = 1.0 if eager else 0.0
    return TaskRun(
        task.name,
        result,
        check,
        state.sandbox_start_s,
        state.sandbox.description,
        state.browser_start_s,
        state.events,
        setup_started=started,
    )


@dataclass
class _Setup:
    """What `run_task` has started so far (the teardown closes whatever is set)."""

    sandbox: Sandbox | None = None
    browser: BrowserSession | None = None
    services_may_run: bool = False
    ready: bool = False
    """Set up: later sandbox events belong to the step running then."""
    sandbox_start_s: float = 0.0
    browser_start_s: float = 0.0
    urls: dict[str, str] = field(default_factory=dict)
    ports: dict[str, int] | None = None
    """The services' ports when chosen before the sandbox exists (eager)."""
    events: list[SandboxEvent] = field(default_factory=list)
    """Sandbox events outside the loop's steps (setup, check, teardown)."""
    loop: AgentLoop | None = None
    """The running loop: once set up, sandbox events are filed under its step."""

    def sink(self, event: SandboxEvent) -> None:
        """An `EventSink`: to the loop's current step once set up, else to `events`."""
        if self.loop is not None and self.ready:
            self.loop.record_sandbox_event(event)
        else:
            self.events.append(event)


async def _set_up(
    state: _Setup,
    task: Task,
    sandbox_config: SandboxConfig,
    pristine: Path,
    browser_config: BrowserConfig | None,
    *,
    use_browser: bool,
    experiment: str,
    run_id: str,
) -> ToolContext:
    """Open the sandbox, start its services (and the browser); `state` tracks each."""
    began = time.perf_counter()
    state.sandbox = await open_sandbox(
        sandbox_config, pristine, sink=state.sink, experiment=experiment, run_id=run_id
    )
    state.services_may_run = True
    services = await start_services(state.sandbox, task.services, state.ports)
    state.sandbox_start_s = time.perf_counter() - began
    state.urls = services.inside
    if use_browser:
        state.urls = _host_urls(state.sandbox, services.inside, services.host)
        launched = time.perf_counter()
        state.browser = await BrowserSession.start(browser_config)
        state.browser_start_s = time.perf_counter() - launched
    state.ready = True
    return ToolContext(sandbox=state.sandbox, services=services.inside, browser=state.browser)


async def _settle(pending: asyncio.Future[ToolContext] | None) -> None:
    """An eager setup still running when the run ended early: cancel it, wait for it."""
    if pending is None:
        return
    if not pending.done():
        pending.cancel()
        await asyncio.wait([pending])
    if not pending.cancelled():
        pending.exception()  # retrieved (it is raised elsewhere, or the run failed first)


def eager_applies(use_browser: bool) -> bool:
    """`eager_sandbox` can apply: no browser is needed. Every task's prompt can be built
    before the sandbox exists (its service ports chosen ahead, `service_ports`); a
    browser's URLs are the host's published ports, known only once a docker sandbox runs,
    and its launch is setup too."""
    return not use_browser


def _host_urls(sandbox: Sandbox, inside: dict[str, str], host: dict[str, str]) -> dict[str, str]:
    """The services' URLs as this host's browser reaches them."""
    unreachable = sorted(set(inside) - set(host))
    if unreachable:
        raise SandboxError(
            f"services {unreachable} are not published on this host's loopback",
            sandbox_id=sandbox.id,
        )
    return host


async def _tear_down(
    sandbox: Sandbox | None, task: Task, browser: BrowserSession | None, *, stop: bool
) -> None:
    """Stop services (verified), close the browser and the sandbox; never raises."""
    if sandbox is not None and stop:
        try:
            forced = await stop_services(sandbox, task.services)
            if forced:
                log.info("services.killed", sandbox=sandbox.id, detail=forced)
        except LooplabError as exc:  # the sandbox's close below kills whatever is left
            log.warning("services.stop_failed", sandbox=sandbox.id, error=str(exc))
    if browser is not None:
        with contextlib.suppress(Exception):
            await browser.close()
    if sandbox is not None:
        await sandbox.close()


def _with_task_limits(config: AgentConfig, task: Task) -> AgentConfig:
    """`config` within the task's own limits (`limits.max_steps`, `limits.wall_time_s`): the
    tighter of each pair holds."""
    limits = task.spec.limits
    return config.with_limits(
        max_steps=min(config.max_steps, limits.max_steps),
        token_budget=config.token_budget,
        wall_time_budget_s=tightest(config.wall_time_budget_s, limits.wall_time_s),
    )


def _network_update(task: Task, base: SandboxConfig, use_browser: bool) -> dict[str, Any]:
    """A host browser needs the services on the host's loopback: network + published ports."""
    network = "bridge" if use_browser else task.spec.network
    if network == "none":
        return {}
    ports = sorted({*base.publish_ports, *(s.port for s in task.spec.services)})
    return {"network": network, "publish_ports": ports}
