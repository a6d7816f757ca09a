"""Every web task solved end to end by the computer-use agent (scripted policy) in real
Chromium, with the browser on this host and the app in a LocalSandbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from looplab.agents.runner import TaskRun, run_task
from looplab.tasks import list_tasks, load_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.policies.scripted import ScriptedPolicy
from looplab.latency.presets import resolve_profile

FAST = ["ttft_s=0", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]
WEB = list_tasks("web")

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """One fast simulator for the module."""
    with SimulatorServer(resolve_profile("fast-750", FAST)) as running:
        yield running


async def _solve(server: SimulatorServer, name: str) -> TaskRun:
    """The web task `name` run by the computer-use agent with the reference script."""
    endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
    async with InstrumentedClient(endpoint) as client:
        return await run_task(load_task(name), client)


@pytest.mark.parametrize("name", WEB)
async def test_reference_solution_solves_the_web_task(server: SimulatorServer, name: str) -> None:
    """The computer-use agent drives the app to the state the checker wants, step for step;
    the steps follow each other inside the run, after the browser's start."""
    run = await _solve(server, name)
    assert run.result.end_reason == "finish", run.result.final_text
    assert run.solved, run.check.output
    assert not [tool for tool in run.result.tool_errors if tool.error]
    steps = run.result.steps
    assert len(steps) == len(load_task(name).solution.steps)
    assert run.result.started <= steps[0].started
    assert all(before.ended <= after.started for before, after in zip(steps, steps[1:]))
    assert steps[-1].ended <= run.result.ended
    assert run.browser_start_s > 0


# a web run's steps against its wall time: browser work under parallel load drifts
@pytest.mark.timing
async def test_the_steps_hold_the_web_runs_time(server: SimulatorServer) -> None:
    """What falls between a web run's steps is the harness's own work (LangGraph's superstep,
    Playwright's queued page events): 0.5% of the run on a quiet machine, 18% beside two
    busy processes (measured on 2 cores); a missing step or a set-up inside the run would be
    more. The longest bundled web task; a wall-clock ratio, so in the serial timing group."""
    run = await _solve(server, "web/orders-admin")
    assert run.solved
    total = sum(step.wall_s for step in run.result.steps)
    assert abs(run.result.wall_s - total) < 0.05 + 0.25 * run.result.wall_s


async def test_imperfect_web_script_adds_snapshots_and_still_solves() -> None:
    """Web detours are extra `snapshot` steps; refs stay valid, so the task still passes."""
    with SimulatorServer(resolve_profile("fast-750", FAST)) as server:
        server.simulator.policies["looplab-scripted"] = ScriptedPolicy(imperfection=0.5)
        task = load_task("web/settings-nav")
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
        async with InstrumentedClient(endpoint) as client:
            run = await run_task(task, client)
    names = [tool.name for step in run.result.steps for tool in step.tools]
    assert run.solved and run.result.end_reason == "finish"
    assert len(run.result.steps) > len(task.solution.steps)
    assert names.count("snapshot") > 0
