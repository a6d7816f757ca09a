"""Every bundled task: untouched it fails its check, its reference solution (played by the
scripted policy through the real agent loop, in a LocalSandbox) passes it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from looplab.agents.runner import run_task
from looplab.agents.services import start_services, stop_services
from looplab.tasks import list_tasks, load_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.sandboxes.local import LocalSandbox

FAST = ["ttft_s=0", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]
CODING = [name for name in list_tasks("coding") if name != "coding/nbugs"]
FAMILY = ["coding/nbugs-1", "coding/nbugs-5", "coding/nbugs-32"]
WEB = list_tasks("web")


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """One fast simulator for the module."""
    with SimulatorServer(resolve_profile("fast-750", FAST)) as running:
        yield running


def test_at_least_eight_coding_tasks_and_a_family() -> None:
    """The suite has the breadth the issue asks for."""
    assert len(list_tasks("coding")) >= 8
    assert load_task("coding/nbugs").spec.family is not None


def test_at_least_five_web_tasks_with_an_app_and_a_checker() -> None:
    """Five web tasks or more, each serving an app and judging by its server-side state."""
    assert len(WEB) >= 5
    for name in WEB:
        task = load_task(name)
        assert [s.name for s in task.spec.services] == ["app"], name
        assert (task.directory / "check" / "check.py").is_file(), name
        assert "{app_url}" in task.spec.prompt, name


@pytest.mark.parametrize("name", WEB)
async def test_untouched_web_task_fails_its_check(name: str) -> None:
    """With its app up and nobody using it, a web task's checker says no."""
    task = load_task(name)
    workspace = task.build_workspace()
    async with await LocalSandbox.create(workspace) as sandbox:
        services = await start_services(sandbox, task.services)
        assert set(services.inside) == {"app"}
        verdict = await task.check(sandbox, workspace)
        await stop_services(sandbox, task.services)
    assert not verdict.passed, verdict.output


@pytest.mark.parametrize("name", [*CODING, *FAMILY])
async def test_untouched_task_fails_its_check(name: str) -> None:
    """No check is vacuous: the task as shipped does not pass it."""
    task = load_task(name)
    workspace = task.build_workspace()
    async with await LocalSandbox.create(workspace) as sandbox:
        verdict = await task.check(sandbox, workspace)
    assert not verdict.passed, verdict.output


@pytest.mark.parametrize("name", [*CODING, *FAMILY])
async def test_reference_solution_solves_the_task(server: SimulatorServer, name: str) -> None:
    """The coding agent, driven by the scripted policy, solves the task and finishes."""
    task = load_task(name)
    endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
    async with InstrumentedClient(endpoint) as client:
        run = await run_task(task, client)
    assert run.result.end_reason == "finish", run.result.final_text
    assert run.solved, run.check.output
    assert not [tool.error for tool in run.result.tool_errors if tool.error]
    expected = len(task.solution.steps)
    if task.solution.family is not None:
        family = task.solution.family
        expected += len(family.per_item) * (task.parameter or 0) + len(family.suffix)
    assert len(run.result.steps) == expected


def test_family_parameter_out_of_range_is_a_config_error() -> None:
    """nbugs-33 names the allowed range instead of failing later."""
    from looplab.errors import ConfigError

    with pytest.raises(ConfigError, match=r"1\.\.32"):
        load_task("coding/nbugs-33")
