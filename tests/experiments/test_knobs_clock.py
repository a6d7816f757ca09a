"""Streamed tool time on the virtual clock: laid out where it ran on the wall clock."""

from __future__ import annotations

import json
from typing import Any

import pytest

from looplab.agents.config import AgentConfig
from looplab.agents.runner import run_task
from looplab.analysis.retime import compose_virtual_timeline
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.policies import PlannedToolCall, PolicyContext, Reply
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.protocol import ChatRequest
from looplab.clock import VirtualClock, utc_now
from looplab.experiments.record import run_events
from looplab.latency.presets import resolve_profile
from looplab.tasks import load_task
from looplab.traces.schema import RunEndEvent, StepEvent, ToolCallEvent, TraceEvent

PROFILE = ["ttft_s=0.05", "decode_tps=400", "prefill_tps=null", "reasoning_tokens=0"]
PLAN: list[list[tuple[str, dict[str, Any]]]] = [
    # a 0.4 s command streamed first, then ~0.3 s more of decode for the second call
    [("run_shell", {"command": "sleep 0.4"}), ("list_files", {"path": "y" * 500})],
    [("finish", {"summary": "done"})],
]


class SleepPlan:
    """A slow first call streamed early in the reply, then a long second call."""

    name = "sleepplan"

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """The plan's calls for this step."""
        step = min(sum(1 for m in request.messages if m.role == "assistant"), len(PLAN) - 1)
        calls = [
            PlannedToolCall(f"c{step}_{i}", name, context.tokenizer.split(json.dumps(args)))
            for i, (name, args) in enumerate(PLAN[step])
        ]
        return Reply(tool_calls=calls, reasoning_tokens=0)


async def _events(virtual: bool) -> list[TraceEvent]:
    profile = resolve_profile("fast-750", PROFILE)
    with SimulatorServer(profile, clock=VirtualClock() if virtual else None) as server:
        server.simulator.policies["looplab-sleepplan"] = SleepPlan()
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-sleepplan")
        async with InstrumentedClient(endpoint) as client:
            config = AgentConfig(streaming_dispatch=True)
            run = await run_task(load_task("coding/fix-discount"), client, agent_config=config)
        events = run_events(
            "r", run, origin_wall=utc_now(), model="m", profile=profile.name, loop_lag_p99_ms=None
        )
        return compose_virtual_timeline(events, server.simulator.phases) if virtual else events


@pytest.mark.timing
async def test_virtual_clock_agrees_with_the_wall_on_streamed_tool_time() -> None:
    """With streaming dispatch, the virtual timeline hides the streamed command's time
    behind the decode as the wall clock does: task times agree within 5% (+20 ms), and
    the first step's tools phase is short on both (the command overlapped the reply)."""
    wall, virtual = await _events(False), await _events(True)
    ends = [next(e for e in evs if isinstance(e, RunEndEvent)).end for evs in (wall, virtual)]
    assert abs(ends[1] - ends[0]) <= 0.02 + 0.05 * ends[0], ends
    for events in (wall, virtual):
        step = next(e for e in events if isinstance(e, StepEvent) and e.step == 0)
        shell = next(e for e in events if isinstance(e, ToolCallEvent) and e.name == "run_shell")
        assert shell.dispatch == "stream" and shell.end - shell.start >= 0.39
        assert step.tool_s < 0.3  # without the overlap it would be >= 0.4
        assert abs(step.model_s + step.tool_s + step.overhead_s - step.duration_s) < 1e-6
