"""Injected backend faults: every failed model attempt ends up in the trace, with its error.

The simulator injects HTTP errors (500, 429) and dropped streams; an httpx response hook
counts what the backend really answered. Every answer is either a successful call or a
failed attempt recorded in the written trace (a call that never succeeds is a `model_call`
with `finish_reason: "error"` holding all its attempts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from looplab.agents.config import AgentConfig, RetryConfig
from looplab.agents.runner import run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.clock import utc_now
from looplab.experiments.record import run_events
from looplab.latency.presets import resolve_profile
from looplab.tasks import load_task
from looplab.traces.io import TraceWriter, read_trace
from looplab.traces.schema import ModelCallEvent, TraceHeader

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

FAST = ["decode_tps=5000", "ttft_s=0", "prefill_tps=null"]
RETRY = RetryConfig(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05)

FAULTS = [
    pytest.param(["faults.error_rate=0.35"], id="http-500"),
    pytest.param(["faults.drop_stream_rate=0.35"], id="dropped-streams"),
    pytest.param(
        ["faults.error_rate=0.25", "faults.error_status=429", "faults.drop_stream_rate=0.2"],
        id="429-and-drops",
    ),
    pytest.param(["faults.error_rate=1.0"], id="never-succeeds"),
]


@pytest.mark.parametrize("faults", FAULTS)
async def test_every_failed_attempt_is_recorded(
    tmp_path: Path, campaign: Any, faults: list[str]
) -> None:
    """Answers made by the backend = successful calls + failed attempts in the trace."""
    answers: list[int] = []

    async def count(response: httpx2.Response) -> None:
        if response.request.url.path.endswith("/chat/completions"):
            answers.append(response.status_code)

    profile = resolve_profile("fast-750", [*FAST, *faults, "faults.seed=7"])
    task = load_task("coding/fix-pager")
    with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
        http = httpx2.AsyncClient(event_hooks={"response": [count]}, timeout=60)
        async with InstrumentedClient(endpoint, http_client=http) as client:
            run = await run_task(task, client, agent_config=AgentConfig(retry=RETRY))
    events = run_events("r1", run, origin_wall=utc_now(), model=endpoint.model, profile="x")
    path = tmp_path / "faults.jsonl"
    with TraceWriter(path, TraceHeader(run_id="r1", created=utc_now())) as writer:
        writer.write_all(events)
    calls = [e for e in read_trace(path).events if isinstance(e, ModelCallEvent)]
    recorded = [a for call in calls for a in call.attempts]
    succeeded = [call for call in calls if call.finish_reason != "error"]
    failed_answers = len(answers) - len(succeeded)
    campaign.add("attempts made", failed_answers)
    campaign.add("attempts recorded", len(recorded))
    assert len(recorded) == failed_answers, (answers, [len(c.attempts) for c in calls])
    assert all(attempt.error for attempt in recorded)
    if "faults.error_rate=1.0" in faults:
        assert run.result.end_reason == "backend_error"
        assert [len(c.attempts) for c in calls] == [RETRY.max_attempts]
        assert calls[0].finish_reason == "error" and calls[0].attempts[-1].status == 500
    else:
        assert recorded, "the fault rates should have failed some attempts"
