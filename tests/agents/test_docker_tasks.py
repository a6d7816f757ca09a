"""Tasks end to end in a DockerSandbox (docker tier): every coding task, and every web task
(its app reached by the host's browser through a port published on 127.0.0.1)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from looplab.agents.config import AgentConfig
from looplab.agents.runner import run_task
from looplab.agents.services import start_services
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes.docker import DockerSandbox
from looplab.tasks import list_tasks, load_task

FAST = ["ttft_s=0", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]
DOCKER = SandboxConfig(kind="docker")


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """One fast simulator for the module."""
    with SimulatorServer(resolve_profile("fast-750", FAST)) as running:
        yield running


async def _solve(server: SimulatorServer, name: str, config: AgentConfig | None = None) -> None:
    task = load_task(name)
    endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
    async with InstrumentedClient(endpoint) as client:
        run = await run_task(task, client, agent_config=config, sandbox_config=DOCKER)
    assert run.sandbox.startswith("docker sandbox")
    assert run.result.end_reason == "finish", run.result.final_text
    assert run.solved, run.check.output
    expected = len(task.solution.steps)
    if task.solution.family is not None:
        family = task.solution.family
        expected += len(family.per_item) * (task.parameter or 0) + len(family.suffix)
    assert len(run.result.steps) == expected


CODING_TASKS = [t for t in list_tasks("coding") if t != "coding/nbugs"] + ["coding/nbugs-3"]


@pytest.mark.docker
@pytest.mark.parametrize("name", CODING_TASKS)
async def test_coding_task_solved_in_docker(server: SimulatorServer, name: str) -> None:
    """The coding agent solves every bundled coding task (docs served in the container)."""
    await _solve(server, name)


@pytest.mark.docker
@pytest.mark.browser
@pytest.mark.parametrize("name", list_tasks("web"))
async def test_web_task_solved_in_docker(server: SimulatorServer, name: str) -> None:
    """The computer-use agent solves every web task whose app runs in the container."""
    await _solve(server, name)


@pytest.mark.docker
@pytest.mark.browser
async def test_web_task_with_screenshots_solved_in_docker(server: SimulatorServer) -> None:
    """Screenshot observations work the same with the app in a container: the host's
    browser captures the page served through the published port."""
    await _solve(server, "web/signup-wizard", AgentConfig(observation="screenshot"))


@pytest.mark.docker
async def test_published_port_is_on_loopback_and_reaches_the_service() -> None:
    """published_port maps a container port to a 127.0.0.1 port that reaches the app."""
    task = load_task("web/settings-nav")
    workspace = task.build_workspace()
    config = DOCKER.model_copy(update={"network": "bridge", "publish_ports": [8000]})
    async with await DockerSandbox.create(workspace, config=config) as sandbox:
        assert sandbox.published_port(9999) is None
        host_port = sandbox.published_port(8000)
        assert host_port is not None
        services = await start_services(sandbox, task.services)
        assert services.host["app"] == f"http://127.0.0.1:{host_port}"
        with socket.create_connection(("127.0.0.1", host_port), timeout=5) as conn:
            conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
            reply = b""
            while chunk := conn.recv(65536):
                reply += chunk
        assert b"Dashboard" in reply
