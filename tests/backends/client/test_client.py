"""The instrumented client: assembly, timing records, keys, and faults."""

from __future__ import annotations

import logging
from typing import Any

import httpx2
import pytest

from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer, simulator_transport
from looplab.backends.simulator.model import Simulator
from looplab.clock import VirtualClock
from looplab.errors import BackendError, ConfigError
from looplab.latency.presets import resolve_profile

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)

USER = [{"role": "user", "content": "Fix the bug."}]


async def test_in_process_transport_on_virtual_clock(tools: list[dict[str, Any]]) -> None:
    """Through the httpx2 ASGI transport and a virtual clock, a slow profile costs no time."""
    simulator = Simulator(resolve_profile("slow-80", ["output_tokens=400"]), clock=VirtualClock())
    http = httpx2.AsyncClient(transport=simulator_transport(simulator))
    endpoint = EndpointConfig(
        base_url="http://looplab.local/v1", model="looplab-lorem", fetch_server_timing=True
    )
    async with InstrumentedClient(endpoint, http_client=http) as client:
        text = await client.complete(USER)
        call = await client.complete(USER, tools=tools)
    assert text.completion_tokens == 400
    assert text.server_timing is not None
    assert text.server_timing["intended_first_s"] == pytest.approx(0.3 + 11 / 10_000, abs=0.01)
    assert simulator.clock.now() >= 400 / 80  # the virtual clock advanced by the decode time
    assert call.finish_reason == "tool_calls"
    assert call.message["tool_calls"][0]["function"]["name"] == "run_tests"


async def test_timing_record_is_consistent(fast_server: SimulatorServer) -> None:
    """scheduled <= sent <= first token <= last token <= end, chunk times inside them."""
    endpoint = EndpointConfig(
        base_url=fast_server.base_url, model="looplab-lorem", fetch_server_timing=True
    )
    async with InstrumentedClient(endpoint) as client:
        response = await client.complete(USER, scheduled=0.0)
    t = response.timing
    assert t.first_token is not None and t.last_token is not None and t.end is not None
    assert 0.0 <= t.scheduled <= t.sent <= t.first_token <= t.last_token <= t.end
    assert t.chunk_times[0] == t.first_token and t.chunk_times[-1] == t.last_token
    assert t.client_queue_s == t.sent
    assert response.visible_chunks == len(t.chunk_times)
    assert response.prompt_tokens and response.cached_tokens == 0
    assert response.request_id == (response.server_timing or {}).get("request_id")


async def test_api_key_comes_from_named_variable_and_is_never_logged(
    fast_server: SimulatorServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The key is read from the named env var, is not on the config, and not in logs."""
    endpoint = EndpointConfig(
        base_url=fast_server.base_url, model="looplab-lorem", api_key_env="LOOPLAB_TEST_KEY"
    )
    with pytest.raises(ConfigError, match="LOOPLAB_TEST_KEY"):
        InstrumentedClient(endpoint)
    secret = "sk-test-5ecret-value"
    monkeypatch.setenv("LOOPLAB_TEST_KEY", secret)
    caplog.set_level(logging.DEBUG)
    async with InstrumentedClient(endpoint) as client:
        response = await client.complete(USER)
    assert secret not in repr(endpoint) + repr(response)
    assert secret not in caplog.text


async def test_backend_errors_carry_status() -> None:
    """An HTTP error becomes a BackendError with the status; the simulator injects them."""
    profile = resolve_profile(
        "fast-750", ["ttft_s=0", "faults.error_rate=1", "faults.error_status=503"]
    )
    with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-lorem")
        async with InstrumentedClient(endpoint) as client:
            with pytest.raises(BackendError) as caught:
                await client.complete(USER)
    assert caught.value.status == 503
    assert "Injected fault" in str(caught.value)


async def test_dropped_stream_is_an_error() -> None:
    """A stream cut before [DONE] is a BackendError, not a silently short answer."""
    profile = resolve_profile(
        "fast-750", ["decode_tps=5000", "ttft_s=0", "output_tokens=50", "faults.drop_stream_rate=1"]
    )
    with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-lorem")
        async with InstrumentedClient(endpoint) as client:
            with pytest.raises(BackendError, match="ended before"):
                await client.complete(USER)


async def test_unknown_model_is_backend_error(fast_server: SimulatorServer) -> None:
    """A 404 from the backend surfaces as BackendError(status=404)."""
    endpoint = EndpointConfig(base_url=fast_server.base_url, model="gpt-nope")
    async with InstrumentedClient(endpoint) as client:
        with pytest.raises(BackendError) as caught:
            await client.complete(USER)
    assert caught.value.status == 404


def test_a_streamed_call_is_ready_when_its_object_closes_not_at_a_brace_in_a_string() -> None:
    """The assembler announces a call once its arguments' top-level object closes; braces
    and escaped quotes inside strings do not close it."""
    from looplab.backends.client.assembly import StreamAssembler, ToolReady

    ready: list[ToolReady] = []
    assembler = StreamAssembler(ready.append)
    pieces = ['{"path": "a.js", "text": "f() {', ' return \\"}\\"; }', '"', "}"]
    for number, piece in enumerate(pieces):
        fragment = {"index": 0, "function": {"arguments": piece}}
        if number == 0:
            fragment |= {"id": "c1", "function": {"name": "write_file", "arguments": piece}}
        assembler.add({"choices": [{"delta": {"tool_calls": [fragment]}}]})
        assert len(ready) == (1 if number == len(pieces) - 1 else 0)
    assert ready[0].call["function"]["arguments"] == "".join(pieces)
