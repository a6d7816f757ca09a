"""The eager sandbox on the virtual clock: real setup next to the virtual first call."""

from __future__ import annotations

import pytest

from looplab.agents.config import AgentConfig
from looplab.agents.runner import run_task
from looplab.analysis.retime import compose_virtual_timeline
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.clock import VirtualClock, utc_now
from looplab.experiments.record import run_events
from looplab.latency.presets import resolve_profile
from looplab.tasks import load_task
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    SandboxOpEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
)


async def _virtual_events(ttft_s: float) -> list[TraceEvent]:
    decode = 750 if ttft_s else 100_000  # long call, or one far shorter than the setup
    profile = resolve_profile(
        "fast-750", [f"ttft_s={ttft_s}", f"decode_tps={decode}", "prefill_tps=null"]
    )
    with SimulatorServer(profile, clock=VirtualClock()) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
        async with InstrumentedClient(endpoint) as client:
            config = AgentConfig(eager_sandbox=True)
            run = await run_task(load_task("coding/fix-pager"), client, agent_config=config)
        events = run_events("r", run, origin_wall=utc_now(), model="m", profile=profile.name)
        return compose_virtual_timeline(events, server.simulator.phases)


# the eager setup's start within 50 ms of the first request: 0.26 s beside two workers
@pytest.mark.timing
@pytest.mark.parametrize("ttft_s", [5.0, 0.0])
async def test_the_first_tool_starts_when_both_the_virtual_call_and_the_real_setup_are_done(
    ttft_s: float,
) -> None:
    """On the virtual clock the setup keeps its real span from the origin, step 0's first
    tool starts at the later of the virtual call's end (a long TTFT) and the setup's end
    (a near-instant call), its wait is that gap, and end to end = task + the setup's
    part before the origin (~0)."""
    events = await _virtual_events(ttft_s)
    call = next(e for e in events if isinstance(e, ModelCallEvent) and e.step == 0)
    tool = min(
        (e for e in events if isinstance(e, ToolCallEvent) and e.step == 0), key=lambda e: e.start
    )
    setup = [
        e for e in events if isinstance(e, SandboxOpEvent) and e.step is None and e.end < tool.end
    ]
    end = next(e for e in events if isinstance(e, RunEndEvent))
    setup_end = max(e.end for e in setup)
    assert min(e.start for e in setup) >= 0  # it began with the first request
    assert setup_end < 5.0  # real wall work, not stretched by the virtual call
    assert tool.start == pytest.approx(max(call.end, setup_end), abs=0.02)
    assert tool.queued_s == pytest.approx(max(0.0, setup_end - call.end), abs=0.02)
    assert end.end_to_end_s is not None and 0 <= end.end_to_end_s - end.end < 0.05
    step = next(e for e in events if isinstance(e, StepEvent) and e.step == 0)
    assert step.end >= tool.end and step.tool_s >= 0
    assert end.success
