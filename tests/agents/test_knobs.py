"""Latency knobs in the loop: streaming dispatch, tool limits, speculative read-only tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from looplab.agents.config import AgentConfig
from looplab.agents.dispatch import CallOutcome, StepDispatcher
from looplab.agents.records import ToolCallRecord
from looplab.agents.runner import TaskRun, run_task
from looplab.agents.speculation import READ_ONLY_TOOLS, Speculator
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.policies import PlannedToolCall, PolicyContext, Reply
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.protocol import ChatRequest
from looplab.latency.presets import resolve_profile
from looplab.tasks import load_task
from looplab.tools.base import ToolResult

# slow enough that a long second call takes a while to stream, fast enough for a test
PROFILE = ["ttft_s=0", "decode_tps=400", "prefill_tps=null", "reasoning_tokens=0"]
OLD = "    start = page * per_page\n"
EDIT = {"path": "pager.py", "old_text": OLD, "new_text": OLD.replace("\n", "  # same\n")}
PLANS: dict[str, list[list[tuple[str, dict[str, Any]]]]] = {
    "stream": [
        [("read_file", {"path": "pager.py"}), ("list_files", {"path": "x" * 400})],
        [("finish", {"summary": "done"})],
    ],
    "speculate": [
        [("edit_file", EDIT)],
        [("run_tests", {})],  # the guess after an edit: a hit
        [("edit_file", {**EDIT, "old_text": EDIT["new_text"], "new_text": EDIT["old_text"]})],
        [("read_file", {"path": "pager.py"})],  # not the guess: a miss
        [("finish", {"summary": "done"})],
    ],
}


class PlanPolicy:
    """Plays one of `PLANS` (model `looplab-<plan>`), one step per assistant turn."""

    def __init__(self, plan: str) -> None:
        self.name = plan
        self.plan = PLANS[plan]

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """The plan's calls for this step (finish once the plan is played)."""
        step = sum(1 for m in request.messages if m.role == "assistant")
        calls = self.plan[min(step, len(self.plan) - 1)]
        planned = [
            PlannedToolCall(f"c{step}_{i}", name, context.tokenizer.split(json.dumps(args)))
            for i, (name, args) in enumerate(calls)
        ]
        return Reply(content_pieces=["ok"], tool_calls=planned, reasoning_tokens=0)


@pytest.fixture
def server() -> Iterator[SimulatorServer]:
    """A simulator with the plan policies."""
    with SimulatorServer(resolve_profile("fast-750", PROFILE)) as running:
        for plan in PLANS:
            running.simulator.policies[f"looplab-{plan}"] = PlanPolicy(plan)
        yield running


async def _run(server: SimulatorServer, plan: str, **knobs: Any) -> TaskRun:
    endpoint = EndpointConfig(base_url=server.base_url, model=f"looplab-{plan}")
    async with InstrumentedClient(endpoint) as client:
        return await run_task(
            load_task("coding/fix-pager"), client, agent_config=AgentConfig(**knobs)
        )


@pytest.mark.parametrize("streaming", [True, False])
async def test_streaming_dispatch_starts_a_tool_before_the_last_token(
    server: SimulatorServer, streaming: bool
) -> None:
    """With the knob, the first call starts while the second one's arguments still stream
    (tool start < the reply's last token); without it, every call starts after it."""
    run = await _run(server, "stream", streaming_dispatch=streaming)
    step = run.result.steps[0]
    assert step.model is not None and step.model.timing.last_token is not None
    first, second = step.tools
    if streaming:
        assert first.dispatch == "stream" and first.started < step.model.timing.last_token
        assert first.dispatch_token is not None and 0 < (first.dispatch_fraction or 0) < 0.5
        assert second.dispatch in ("stream", "after_message")
        assert run.result.knob_stats["streamed_calls"] >= 1
    else:
        assert first.dispatch is None and first.started > step.model.timing.last_token
        assert second.started >= first.ended  # one tool at a time by default
    assert step.model_s + step.tool_s <= step.wall_s + 1e-6
    assert run.result.knobs["streaming_dispatch"] is streaming


async def test_a_tool_limit_above_one_runs_calls_concurrently(
    server: SimulatorServer,
) -> None:
    """`max_parallel_tools: 2` overlaps the two calls of a step (the default does not:
    see the streaming test's control)."""
    parallel = (await _run(server, "stream", max_parallel_tools=2)).result.steps[0].tools
    assert parallel[1].started < parallel[0].ended
    assert parallel[0].dispatch == "after_message"


async def test_speculation_uses_a_matching_guess_and_drops_a_miss(
    server: SimulatorServer,
) -> None:
    """Tests guessed after an edit are used when the model asks for them (a hit); the
    guess before a read_file is dropped: the conversation has exactly the real calls'
    results, one per call, and no trace of the dropped test run."""
    run = await _run(server, "speculate", speculation=True)
    result = run.result
    stats = result.knob_stats
    assert stats["speculation_hits"] == 1 and stats["speculation_misses"] == 1
    assert stats["speculation_wasted_s"] > 0
    calls = [t for s in result.steps for t in s.tools]
    assert [t.name for t in calls] == ["edit_file", "run_tests", "edit_file", "read_file", "finish"]
    assert calls[1].dispatch == "speculative" and calls[1].call_id == "c1_0"
    assert calls[1].started < result.steps[1].model_ended
    tool_messages = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == [t.call_id for t in calls]
    verdicts = [m for m in tool_messages if str(m["content"]).startswith(("PASSED", "FAILED"))]
    assert [m["tool_call_id"] for m in verdicts] == ["c1_0"]


async def test_speculation_never_runs_a_tool_that_is_not_read_only() -> None:
    """Whatever the predictor says, only READ_ONLY_TOOLS in the toolbox are ever run."""
    ran: list[str] = []

    async def run_call(call: dict[str, Any]) -> CallOutcome:
        ran.append(call["function"]["name"])
        record = ToolCallRecord("", call["function"]["name"], "{}", 0.0, 0.0, True, None, 0)
        return record, ToolResult("x")

    tools = frozenset({"edit_file", "write_file", "shell", "read_file", "run_tests"})
    for name in ["edit_file", "write_file", "shell", "browse", "read_file"]:
        speculator = Speculator(run_call, tools, predict=lambda _p, _t, n=name: (n, {"path": "a"}))
        speculator.start([])
        await speculator.drain()
    assert ran == ["read_file"]
    assert {"read_file", "list_files", "run_tests"} == READ_ONLY_TOOLS


async def test_speculation_pauses_after_misses_in_a_row_and_resumes_on_a_shadow_hit() -> None:
    """Two misses in a row pause speculation (guesses only shadowed, not run); a shadow
    guess that would have matched resumes it."""
    ran: list[str] = []

    async def run_call(call: dict[str, Any]) -> CallOutcome:
        ran.append(call["function"]["name"])
        record = ToolCallRecord("", call["function"]["name"], "{}", 0.0, 0.0, True, None, 0)
        return record, ToolResult("x")

    guess = {"id": "x", "function": {"name": "run_tests", "arguments": "{}"}}
    other = {"id": "y", "function": {"name": "edit_file", "arguments": "{}"}}
    speculator = Speculator(
        run_call, frozenset({"run_tests"}), predict=lambda _p, _t: ("run_tests", {})
    )
    dispatcher = StepDispatcher(run_call, limit=1, streaming=False)
    for first in (other, other, other, guess, guess):
        speculator.start([])
        speculator.resolve(first, dispatcher)
    await speculator.drain()
    stats = speculator.stats()
    assert stats["speculation_misses"] == 2 and stats["speculation_paused"] == 2
    assert stats["speculation_hits"] == 1  # resumed after the shadow hit
