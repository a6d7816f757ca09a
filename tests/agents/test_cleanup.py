"""A task run leaves nothing running, however it ends; agent kinds come from one registry."""

from __future__ import annotations

import asyncio
import os
import typing

import pytest

from looplab.agents.config import TASK_KIND_AGENTS
from looplab.agents.runner import AGENT_KINDS, agent_kind, run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.errors import ConfigError
from looplab.experiments.config import AgentName
from looplab.latency.presets import resolve_profile
from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes.leftovers import find_owned
from looplab.tasks import load_task


def test_agent_kinds_are_one_registry() -> None:
    """Config names, task kinds and the registry agree; an unknown kind lists the known."""
    # `workload` plays a trace-driven task's shape (experiments/workload.py), not a task
    assert set(AGENT_KINDS) == set(typing.get_args(AgentName)) - {"auto", "workload"}
    assert set(TASK_KIND_AGENTS.values()) <= set(AGENT_KINDS)
    with pytest.raises(ConfigError, match="coding, computer_use"):
        agent_kind("poet")


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
async def test_cancelled_run_stops_services_and_removes_everything(kind: str) -> None:
    """Cancelled mid-run (Ctrl-C / SIGTERM do this), a task with a docs server leaves no
    process, container, cgroup or temporary directory behind."""
    before = find_owned(os.getpid())
    profile = resolve_profile("slow-80", ["decode_tps=20", "ttft_s=0"])
    with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
        async with InstrumentedClient(endpoint) as client:
            task = load_task("coding/fix-pager")  # has a docs service
            run = asyncio.ensure_future(
                run_task(task, client, sandbox_config=SandboxConfig(kind=kind))
            )
            await asyncio.sleep(3)  # sandbox, docs server and the first slow model call
            assert find_owned(os.getpid()).dirs != before.dirs, "the run should be under way"
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
    after = find_owned(os.getpid())
    assert after.held() == before.held()
