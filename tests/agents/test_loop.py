"""The shared agent loop: timing, limits, malformed tool calls, backend faults, detours."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from looplab.agents.config import AgentConfig, RetryConfig
from looplab.agents.runner import run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.policies import PlannedToolCall, PolicyContext, Reply
from looplab.backends.policies.scripted import ScriptedPolicy
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.protocol import ChatRequest
from looplab.latency.presets import resolve_profile
from looplab.tasks import load_task

FAST = ["ttft_s=0", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]
QUICK_RETRY = RetryConfig(max_attempts=4, base_delay_s=0.001, max_delay_s=0.01)


class MalformedPolicy:
    """Asks for an unknown tool, broken JSON and off-schema arguments, then finishes."""

    name = "malformed"

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """One bad call per step, a finish call at the end."""
        step = sum(1 for m in request.messages if m.role == "assistant")
        bad = [
            ("no_such_tool", "{}"),
            ("read_file", '{"path": '),
            ("read_file", '{"path": 3}'),
            ("edit_file", '{"path": "pager.py", "old_text": "absent", "new_text": ""}'),
        ]
        name, arguments = bad[step] if step < len(bad) else ("finish", '{"summary": "gave up"}')
        call = PlannedToolCall(f"call_{step}", name, context.tokenizer.split(arguments))
        return Reply(tool_calls=[call], reasoning_tokens=0)


class ReadingPolicy:
    """Calls a tool at every step and never finishes (for the step limit)."""

    name = "reading"

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """One `read_file` call per step."""
        step = sum(1 for m in request.messages if m.role == "assistant")
        arguments = context.tokenizer.split('{"path": "pager.py"}')
        return Reply(tool_calls=[PlannedToolCall(f"call_{step}", "read_file", arguments)])


@pytest.fixture
def server() -> Iterator[SimulatorServer]:
    """A fast simulator with the malformed and reading policies added."""
    with SimulatorServer(resolve_profile("fast-750", FAST)) as running:
        running.simulator.policies["looplab-malformed"] = MalformedPolicy()
        running.simulator.policies["looplab-reading"] = ReadingPolicy()
        yield running


def _client(server: SimulatorServer, model: str = "looplab-scripted") -> InstrumentedClient:
    return InstrumentedClient(EndpointConfig(base_url=server.base_url, model=model))


async def test_step_timings_add_up_to_the_wall_time(server: SimulatorServer) -> None:
    """Steps are contiguous: their wall times sum to the run's within a small tolerance."""
    async with _client(server) as client:
        run = await run_task(load_task("coding/fix-discount"), client)
    result = run.result
    total = sum(step.wall_s for step in result.steps)
    assert abs(result.wall_s - total) < 0.02 + 0.05 * result.wall_s
    for step in result.steps:
        assert step.model is not None and step.model.ttft_s is not None
        assert step.model_s > 0 and step.overhead_s > -1e-6
        assert step.model_s + step.tool_s <= step.wall_s + 1e-6
    assert any(event.kind == "exec" for step in result.steps for event in step.sandbox_events)


async def test_malformed_tool_calls_become_error_results(server: SimulatorServer) -> None:
    """Unknown tool, bad JSON, off-schema arguments: recorded errors, and the loop goes on."""
    async with _client(server, "looplab-malformed") as client:
        run = await run_task(load_task("coding/fix-pager"), client)
    tools = [tool for step in run.result.steps for tool in step.tools]
    assert run.result.end_reason == "finish"
    assert [t.ok for t in tools] == [False, False, False, False, True]
    assert "unknown tool" in str(tools[0].error)
    assert "not valid JSON" in str(tools[1].error)
    assert "schema" in str(tools[2].error)
    assert tools[3].error is None  # a clean failure result, not a malformed call
    contents = [m["content"] for m in run.result.messages if m["role"] == "tool"]
    assert "old_text not found" in contents[3]


async def test_step_limit_ends_the_run_with_its_reason(server: SimulatorServer) -> None:
    """max_steps cuts the run and says so."""
    async with _client(server) as client:
        run = await run_task(
            load_task("coding/fix-discount"), client, agent_config=AgentConfig(max_steps=2)
        )
    assert run.result.end_reason == "step_limit"
    assert len(run.result.steps) == 2
    assert not run.solved


async def test_a_long_run_is_stopped_by_its_step_limit_not_by_langgraph(
    server: SimulatorServer,
) -> None:
    """30 steps (LangGraph's default budget is 25 supersteps): the loop's own limit ends
    the run, with every step made; the graph's budget is derived from max_steps."""
    async with _client(server, "looplab-reading") as client:
        run = await run_task(
            load_task("coding/nbugs-2"), client, agent_config=AgentConfig(max_steps=30)
        )
    assert run.result.end_reason == "step_limit"
    assert len(run.result.steps) == 30
    assert all(len(step.tools) == 1 for step in run.result.steps)


async def test_token_budget_ends_the_run(server: SimulatorServer) -> None:
    """The token budget is checked before each model call."""
    config = AgentConfig(token_budget=1)
    async with _client(server) as client:
        run = await run_task(load_task("coding/fix-discount"), client, agent_config=config)
    assert run.result.end_reason == "token_budget"
    assert len(run.result.steps) == 1


async def test_parallel_tool_calls_overlap(server: SimulatorServer) -> None:
    """With parallel_tool_calls the two calls of fix-pager's first step run concurrently."""
    config = AgentConfig(parallel_tool_calls=True)
    async with _client(server) as client:
        run = await run_task(load_task("coding/fix-pager"), client, agent_config=config)
    first, second = run.result.steps[0].tools
    assert run.solved
    assert second.started < first.ended


@pytest.mark.parametrize(
    "fault", ["faults.error_rate=0.3", "faults.error_status=429", "faults.drop_stream_rate=0.3"]
)
async def test_backend_faults_are_retried_and_recorded(fault: str) -> None:
    """Injected 5xx/429/dropped streams are retried per the policy; the task still passes."""
    overrides = [*FAST, fault, "faults.seed=3"]
    if "error_status" in fault:
        overrides.append("faults.error_rate=0.3")
    config = AgentConfig(retry=QUICK_RETRY.model_copy(update={"max_attempts": 10}))
    with SimulatorServer(resolve_profile("fast-750", overrides)) as server:
        async with _client(server) as client:
            run = await run_task(load_task("coding/fix-discount"), client, agent_config=config)
    attempts = [a for step in run.result.steps for a in step.attempts]
    assert run.solved and run.result.end_reason == "finish"
    assert attempts, "the seeded faults should have hit at least one call"


async def test_exhausted_retries_end_with_backend_error() -> None:
    """When every attempt fails the run ends with `backend_error`, not an exception."""
    overrides = [*FAST, "faults.error_rate=1", "faults.error_status=503"]
    config = AgentConfig(retry=QUICK_RETRY)
    with SimulatorServer(resolve_profile("fast-750", overrides)) as server:
        async with _client(server) as client:
            run = await run_task(load_task("coding/fix-pager"), client, agent_config=config)
    assert run.result.end_reason == "backend_error"
    assert len(run.result.steps[0].attempts) == QUICK_RETRY.max_attempts
    assert "503" in str(run.result.error)


async def test_imperfect_script_takes_detours_and_still_solves(server: SimulatorServer) -> None:
    """Seeded imperfection adds wrong edits and extra reads; the agent recovers."""
    server.simulator.policies["looplab-scripted"] = ScriptedPolicy(imperfection=0.6)
    task = load_task("coding/nbugs-6")
    async with _client(server) as client:
        run = await run_task(task, client)
    assert run.solved and run.result.end_reason == "finish"
    assert len(run.result.steps) > 6 + 4
    assert any("first attempt" in t.arguments for s in run.result.steps for t in s.tools)
