"""Trace-driven live runs: a recorded shape played step by step through the real loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from looplab.agents.workload.runner import run_workload_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.policies.workload import WorkloadPolicy
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.errors import BackendError
from looplab.latency.presets import resolve_profile
from looplab.traces.io import read_trace
from looplab.workloads.resolve import WorkloadSettings
from looplab.workloads.shape import shape_from_trace

FAST = ["decode_tps=20000", "ttft_s=0", "prefill_tps=null"]


async def test_recorded_session_is_replayed_step_by_step(fixtures: Path) -> None:
    """A TraceLab session: per step the tokens, cache hits, tool names and times come back."""
    trace = read_trace(fixtures / "imported" / "tracelab-codex.jsonl")
    shape = shape_from_trace(trace).scaled(tool_scale=0.1, other_scale=0.01)
    async with SimulatorServer(resolve_profile("fast-750", FAST)) as server:
        policy = server.simulator.policies["looplab-workload"]
        assert isinstance(policy, WorkloadPolicy)
        policy.load(shape)
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-workload")
        async with InstrumentedClient(endpoint) as client:
            run = await run_workload_task(shape, client, settings=WorkloadSettings())
    assert run.check.passed and run.result.end_reason == "answer"  # its last round: no tool
    steps = run.result.steps
    assert len(steps) == len(shape.steps) == 9
    grew = 0

    def reachable(index: int) -> int:
        """Least prompt step `index` can have: the previous prompt, its reply and margin."""
        if index == 0:
            return 0
        before = steps[index - 1].model
        assert before is not None and before.prompt_tokens is not None
        visible = (before.completion_tokens or 0) - (before.reasoning_tokens or 0)
        return before.prompt_tokens + visible + 30

    for index, (live, recorded, call) in enumerate(
        zip(steps, shape.steps, trace.model_calls(), strict=True)
    ):
        model = live.model
        assert model is not None
        assert model.completion_tokens == call.completion_tokens
        assert model.reasoning_tokens == call.reasoning_tokens
        assert model.cached_tokens == call.cached_tokens
        assert model.prompt_tokens is not None and call.prompt_tokens is not None
        floor = reachable(index)
        if call.prompt_tokens >= floor:
            assert abs(model.prompt_tokens - call.prompt_tokens) <= 3, index
            grew += 1
        else:  # the recorded prompt shrank or grew less than the reply: it holds the reply
            assert floor - 30 <= model.prompt_tokens <= floor, index
        assert [t.name for t in live.tools] == [t.name for t in recorded.tools]
        assert all(t.synthetic for t in live.tools)
        assert [t.ok for t in live.tools] == [t.ok for t in recorded.tools]
        for tool, planned in zip(live.tools, recorded.tools, strict=True):
            # above: a sandbox exec's own cost (~10 ms, far more on a loaded machine)
            assert planned.seconds - 0.002 <= tool.duration_s <= max(planned.seconds, 0.02) + 0.25
    assert grew == 7  # all but the two rounds whose prompt grew less than their reply


async def test_policy_refuses_unknown_shapes_and_extra_steps(fixtures: Path) -> None:
    """A prompt naming no loaded shape, or a step past the shape, is a 400 with the reason."""
    shape = shape_from_trace(read_trace(fixtures / "calibrate" / "b.jsonl"))
    async with SimulatorServer(resolve_profile("fast-750", FAST)) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-workload")
        async with InstrumentedClient(endpoint) as client:
            with pytest.raises(BackendError, match="names no loaded task shape") as error:
                await client.complete([{"role": "user", "content": shape.marker}])
            assert error.value.status == 400
            policy = server.simulator.policies["looplab-workload"]
            assert isinstance(policy, WorkloadPolicy)
            policy.load(shape)
            messages = [
                {"role": "user", "content": shape.marker},
                {"role": "assistant", "content": "one"},
                {"role": "user", "content": "next"},
                {"role": "assistant", "content": "two"},
                {"role": "user", "content": "next"},
            ]
            with pytest.raises(BackendError, match="has 2 step"):
                await client.complete(messages)


@pytest.mark.docker
async def test_recorded_run_plays_in_a_docker_sandbox(fixtures: Path) -> None:
    """The same trace-driven run works in a DockerSandbox: tools work in the container."""
    from looplab.sandbox_contract import SandboxConfig

    shape = shape_from_trace(read_trace(fixtures / "imported" / "inspect-browser.jsonl"))
    shape = shape.scaled(tool_scale=0.05, other_scale=0.0)
    async with SimulatorServer(resolve_profile("fast-750", FAST)) as server:
        policy = server.simulator.policies["looplab-workload"]
        assert isinstance(policy, WorkloadPolicy)
        policy.load(shape)
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-workload")
        async with InstrumentedClient(endpoint) as client:
            run = await run_workload_task(
                shape, client, sandbox_config=SandboxConfig(kind="docker")
            )
    assert run.sandbox.startswith("docker sandbox") and run.check.passed
    names = [t.name for step in run.result.steps for t in step.tools]
    assert names == [t.name for step in shape.steps for t in step.tools]
    execs = [e for step in run.result.steps for e in step.sandbox_events if e.kind == "exec"]
    assert len(execs) == len(names)
