"""The eager sandbox knob: the first model request overlaps the sandbox's setup."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

from looplab.agents.config import AgentConfig, RetryConfig
from looplab.agents.runner import TaskRun, eager_applies, run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.sandbox_contract import SandboxEvent
from looplab.sandboxes.leftovers import find_owned
from looplab.tasks import load_task

PROFILE = ["ttft_s=0.05", "decode_tps=2000", "prefill_tps=null", "reasoning_tokens=0"]


@pytest.fixture
def server() -> Iterator[SimulatorServer]:
    """A fast simulator with a small TTFT (the first request must be in flight a while)."""
    with SimulatorServer(resolve_profile("fast-750", PROFILE)) as running:
        yield running


async def _run(server: SimulatorServer, **knobs: object) -> TaskRun:
    endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
    async with InstrumentedClient(endpoint) as client:
        return await run_task(
            load_task("coding/fix-pager"), client, agent_config=AgentConfig.model_validate(knobs)
        )


def _create(run: TaskRun) -> SandboxEvent:
    return next(e for e in run.setup_events if e.kind == "create")


def _first_sent(run: TaskRun) -> float:
    model = run.result.steps[0].model
    assert model is not None and model.timing is not None
    return model.timing.sent


async def test_eager_sandbox_sends_the_first_request_before_the_sandbox_is_up(
    server: SimulatorServer,
) -> None:
    """With eager_sandbox the first request is sent before the sandbox's create ends, the
    first tool waits for the setup (queued_s), and the task (with a docs URL) is solved."""
    run = await _run(server, eager_sandbox=True)
    assert run.solved
    assert _first_sent(run) < _create(run).ended
    assert run.setup_started is not None and run.setup_started <= _create(run).started
    first_tool = run.result.steps[0].tools[0]
    setup = [e for e in run.setup_events if e.started < first_tool.started]  # not the check's
    assert {e.kind for e in setup} == {"create", "exec"}  # the sandbox and its docs server
    assert first_tool.started >= max(e.ended for e in setup)
    assert first_tool.queued_s is not None and first_tool.queued_s > 0
    stats = run.result.knob_stats
    assert stats["eager_applied"] == 1.0 and stats["sandbox_wait_s"] > 0
    assert run.result.knobs["eager_sandbox"] is True


async def test_without_eager_sandbox_the_sandbox_starts_before_the_first_request(
    server: SimulatorServer,
) -> None:
    """Knob off: the sandbox (and its services) are up before the first request is sent."""
    run = await _run(server)
    assert run.solved
    setup = [e for e in run.setup_events if e.started < run.result.steps[0].started]
    assert _create(run) in setup and max(e.ended for e in setup) <= _first_sent(run)
    assert "eager_applied" not in run.result.knob_stats


async def test_a_failing_first_model_call_leaves_no_sandbox_running() -> None:
    """Eager, the backend unreachable: the run ends with backend_error, the setup finishes
    and is torn down; no process, cgroup or directory is left."""
    before = find_owned(os.getpid())
    endpoint = EndpointConfig(base_url="http://127.0.0.1:9/v1", model="looplab-scripted")
    config = AgentConfig(eager_sandbox=True, retry=RetryConfig(max_attempts=1))
    async with InstrumentedClient(endpoint) as client:
        run = await run_task(load_task("coding/fix-pager"), client, agent_config=config)
    assert run.result.end_reason == "backend_error" and not run.solved
    after = find_owned(os.getpid())
    assert after.held() == before.held()


async def test_a_run_cancelled_during_the_eager_setup_leaves_nothing() -> None:
    """Eager, cancelled while the first (slow) model call and the setup run: the unfinished
    setup is cancelled and awaited, and nothing it started is left."""
    before = find_owned(os.getpid())
    profile = resolve_profile("slow-80", ["decode_tps=20", "ttft_s=1"])
    with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
        async with InstrumentedClient(endpoint) as client:
            config = AgentConfig(eager_sandbox=True)
            run = asyncio.ensure_future(
                run_task(load_task("coding/fix-pager"), client, agent_config=config)
            )
            await asyncio.sleep(0.05)
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
    after = find_owned(os.getpid())
    assert after.held() == before.held()


def test_eager_sandbox_does_not_apply_with_a_browser() -> None:
    """A browser's URLs (docker's published ports) and its launch are setup the prompt
    needs first: the knob falls back to the normal order; a coding task's prompt URLs are
    known early (ports chosen ahead), so it applies there."""
    assert eager_applies(use_browser=False)
    assert not eager_applies(use_browser=True)
