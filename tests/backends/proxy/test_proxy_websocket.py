"""The Responses WebSocket in front of the pacing proxy, through the real openai client."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.proxy.trace import wrap_events
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.traces.schema import ModelCallEvent

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)

PACE = ["decode_tps=400", "ttft_s=0.05", "prefill_tps=null"]
OVERHEAD = ["request_overhead_s=0.2", "websocket_overhead_s=0.02"]
_END = ("response.completed", "response.incomplete", "error")


async def _turn(connection: Any, **create: Any) -> tuple[list[str], Any]:
    """Send one response.create; (event types, the last event)."""
    await connection.response.create(model="looplab-lorem", **create)
    kinds: list[str] = []
    async for event in connection:
        kinds.append(event.type)
        if event.type in _END:
            return kinds, event
    raise AssertionError("the connection closed mid-turn")


async def test_proxy_paces_a_websocket_conversation(upstream: SimulatorServer) -> None:
    """Two turns on one WebSocket through the proxy: paced at the profile's rate, usage
    from the upstream, previous_response_id resolved by the proxy, websocket overhead."""
    profile = resolve_profile("slow-80", [*PACE, *OVERHEAD])
    with ProxyServer(profile, upstream=upstream.base_url) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="k", max_retries=0)
        async with client.responses.connect() as connection:
            kinds, first = await _turn(connection, input="Explain.")
            kinds2, second = await _turn(
                connection, input="More.", previous_response_id=first.response.id
            )
            _, missing = await _turn(connection, input="x", previous_response_id="resp_nope")
        await client.close()
        calls = proxy.proxy.history.calls
        async with httpx2.AsyncClient() as http:
            base = proxy.base_url.removesuffix("/v1")
            rid = calls[0].request_id
            timing = (await http.get(f"{base}/v1/looplab/requests/{rid}/timing")).json()
    for sequence in (kinds, kinds2):
        assert sequence[:2] == ["response.created", "response.in_progress"]
        assert sequence[-1] == "response.completed"
        assert "response.output_text.delta" in sequence
    assert first.response.usage.output_tokens == 120
    assert second.response.usage.input_tokens > first.response.usage.input_tokens + 100
    assert second.response.previous_response_id == first.response.id
    assert missing.type == "error" and missing.error.code == "previous_response_not_found"
    assert len(calls) == 2
    # the transport is on each call's record, its timing JSON and a wrapped run's trace
    assert [c.transport for c in calls] == ["websocket", "websocket"]
    assert timing["transport"] == "websocket"
    events = wrap_events("ws-run", calls, exited=calls[-1].received + 5, exit_code=0, task=None)
    models = [e for e in events if isinstance(e, ModelCallEvent)]
    assert [m.transport for m in models] == ["websocket", "websocket"]
    call = calls[0]
    assert call.first_token is not None and call.last_token is not None
    assert 119 / (call.last_token - call.first_token) == pytest.approx(400, rel=0.05)
    assert timing["scheduled_first_s"] == pytest.approx(0.05 + 0.02, abs=0.01)
