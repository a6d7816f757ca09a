"""The pacing proxy in front of a real upstream (the simulator) over loopback HTTP."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import openai
import pytest

from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.proxy.app import ProxyServer
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)

PACE = ["decode_tps=400", "ttft_s=0.15", "prefill_tps=null"]
"""The profile the proxy paces to: 400 tok/s after a 150 ms TTFT, no prefill."""

SHARED = 0.03
"""Rate tolerance here: client, proxy and upstream share this test's interpreter (GIL, GC
pauses of its large heap); the 1% checks run the proxy in its own process (test_wrap)."""

LATE_S = 0.04
"""How late a release may be here (never early): a loaded machine delays this process's
threads by tens of ms; `looplab bench proxy` measures the real lateness (~0.1 ms)."""

QUESTION: list[Any] = [{"role": "user", "content": "x"}]

TOOL = {
    "type": "function",
    "function": {
        "name": "run_tests",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]},
    },
}  # fmt: skip


def _proxy(upstream: SimulatorServer, *extra: str) -> ProxyServer:
    return ProxyServer(resolve_profile("slow-80", [*PACE, *extra]), upstream=upstream.base_url)


async def test_stream_is_paced_to_the_profile(upstream: SimulatorServer) -> None:
    """Streamed tokens come at the profile's TTFT and decode rate, not the upstream's."""
    with _proxy(upstream) as proxy:
        endpoint = EndpointConfig(base_url=proxy.base_url, model="looplab-lorem")
        async with InstrumentedClient(endpoint) as client:
            await client.complete([{"role": "user", "content": "warm"}])
            response = await client.complete([{"role": "user", "content": "Explain."}])
        call = proxy.proxy.history.calls[-1]
    assert response.completion_tokens == 120
    # at the client (same process as both servers, so GIL-shared): loosely
    assert response.decode_rate_tps == pytest.approx(400, rel=0.05)
    assert response.timing.ttft_s == pytest.approx(0.15, abs=0.03)
    assert call.first_token is not None and call.last_token is not None
    # never early; late only by what a loaded machine's shared interpreter delays it
    assert 0.15 - 1e-6 <= call.first_token - call.received < 0.15 + LATE_S
    assert 119 / (call.last_token - call.first_token) == pytest.approx(400, rel=SHARED)
    assert call.upstream_slower == []
    assert call.upstream_end is not None and call.upstream_end < call.first_token


async def test_first_token_never_before_the_upstreams(upstream: SimulatorServer) -> None:
    """A slower upstream TTFT sets the first token, then decode goes on at the profile's rate."""
    slow = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0.4", "prefill_tps=null",
                                        "output_tokens=120"])  # fmt: skip
    with SimulatorServer(slow) as late, _proxy(late, "ttft_s=0.05") as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="k")
        raw = await client.chat.completions.with_raw_response.create(
            model="looplab-lorem", messages=[{"role": "user", "content": "x"}], stream=True
        )
        async for _ in raw.parse():
            pass
        await client.close()
        call = proxy.proxy.history.calls[-1]
        async with httpx2.AsyncClient() as http:
            body = {"model": "looplab-lorem", "messages": QUESTION, "stream": True}
            text = (await http.post(proxy.base_url + "/chat/completions", json=body)).text
    assert "x-looplab-upstream-slower" not in raw.headers  # headers left before it was known
    assert ": looplab upstream-slower ttft late_s=0.3" in text  # said before the first token
    assert text.index("upstream-slower ttft") < text.index('"content"')
    assert "ttft" in call.upstream_slower
    assert call.first_token is not None and call.last_token is not None
    assert call.upstream_first_token is not None
    assert call.first_token >= call.upstream_first_token
    assert call.first_token - call.received >= 0.4
    assert 119 / (call.last_token - call.first_token) == pytest.approx(400, rel=SHARED)


async def test_slower_upstream_decode_is_reported(upstream: SimulatorServer) -> None:
    """An upstream decoding slower than the profile sets the pace and the stream says so."""
    slow = resolve_profile("fast-750", ["decode_tps=200", "ttft_s=0", "prefill_tps=null",
                                        "output_tokens=60"])  # fmt: skip
    with SimulatorServer(slow) as late, _proxy(late, "decode_tps=2000", "ttft_s=0") as proxy:
        body = {"model": "looplab-lorem", "messages": [{"role": "user", "content": "x"}],
                "stream": True}  # fmt: skip
        async with httpx2.AsyncClient() as http:
            reply = await http.post(proxy.base_url + "/chat/completions", json=body)
        call = proxy.proxy.history.calls[-1]
    assert ": looplab upstream-slower decode" in reply.text
    assert "decode" in call.upstream_slower
    assert call.first_token is not None and call.last_token is not None
    assert 59 / (call.last_token - call.first_token) < 250


async def test_non_streaming_reply_is_held_to_the_profile(upstream: SimulatorServer) -> None:
    """A non-streamed reply arrives after the profile's whole-call time, intact."""
    with _proxy(upstream) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="k")
        completion = await client.chat.completions.create(
            model="looplab-lorem", messages=[{"role": "user", "content": "x"}]
        )
        await client.close()
        call = proxy.proxy.history.calls[-1]
    assert completion.usage is not None and completion.usage.completion_tokens == 120
    assert call.end is not None
    assert call.end - call.received == pytest.approx(0.15 + 119 / 400, abs=0.02)


async def test_tools_usage_reasoning_and_cache_pass_through() -> None:
    """Tool calls, reasoning and cached token counts reach the client as the upstream sent them."""
    reasoning = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0", "prefill_tps=null",
                                             "reasoning_tokens=9", "output_tokens=30"])  # fmt: skip
    with SimulatorServer(reasoning) as source, _proxy(source) as proxy:
        endpoint = EndpointConfig(base_url=proxy.base_url, model="looplab-lorem")
        messages = [{"role": "system", "content": "You are an agent. " * 300},
                    {"role": "user", "content": "Run the tests."}]  # fmt: skip
        async with InstrumentedClient(endpoint) as client:
            await client.complete(messages, tools=[TOOL])
            response = await client.complete(messages, tools=[TOOL])
    calls = response.message["tool_calls"]
    assert calls[0]["function"]["name"] == "run_tests"
    assert isinstance(json.loads(calls[0]["function"]["arguments"])["path"], str)
    assert response.reasoning_tokens == 9
    assert response.cached_tokens and response.cached_tokens > 900


async def test_errors_pass_through_in_openai_shape(upstream: SimulatorServer) -> None:
    """Upstream errors keep their status and body; an unreachable upstream is a shaped 502."""
    with _proxy(upstream) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.NotFoundError) as missing:
            await client.chat.completions.create(model="nope", messages=QUESTION)
        await client.close()
        async with httpx2.AsyncClient() as http:
            bad = await http.post(proxy.base_url + "/chat/completions", content=b"{not json")
    assert missing.value.body["code"] == "model_not_found"  # type: ignore[index]
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_json"
    nowhere = ProxyServer(resolve_profile("fast-750"), upstream="http://127.0.0.1:9/v1")
    with nowhere:
        client = openai.AsyncOpenAI(base_url=nowhere.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.APIStatusError) as unreachable:
            await client.chat.completions.create(model="m", messages=QUESTION)
        await client.close()
    assert unreachable.value.status_code == 502
    assert unreachable.value.body["code"] == "upstream_unreachable"  # type: ignore[index]


async def test_responses_api_is_paced_too(upstream: SimulatorServer) -> None:
    """A streamed Responses API call (with a function tool) is re-timed like chat."""
    tool: dict[str, Any] = {
        "type": "function",
        "name": "run_tests",
        "parameters": TOOL["function"]["parameters"],
    }  # type: ignore[index]
    with _proxy(upstream) as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="k")
        await client.responses.create(model="looplab-lorem", input="Warm up.")
        text = await client.responses.create(model="looplab-lorem", input="Explain.", stream=True)
        kinds = [event.type async for event in text]
        async with client.responses.stream(model="looplab-lorem", input="Go.", tools=[tool]) as s:
            final = await s.get_final_response()
        await client.close()
        first = proxy.proxy.history.calls[1]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final.output[-1].type == "function_call"
    assert first.usage.completion == 120
    assert first.first_token is not None and first.last_token is not None
    assert 119 / (first.last_token - first.first_token) == pytest.approx(400, rel=SHARED)


async def test_headers_leave_before_the_first_token(upstream: SimulatorServer) -> None:
    """The stock client gets the reply's headers when the upstream's arrive, not with the
    first token: its own per-response work overlaps the TTFT instead of delaying the first
    chunk (issue 28: a fresh openai client saw +10% decode rate at 750 tok/s)."""
    with _proxy(upstream, "ttft_s=1.0") as proxy:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="k", max_retries=0)
        start = time.perf_counter()
        raw = await client.chat.completions.with_raw_response.create(
            model="looplab-lorem", messages=QUESTION, stream=True, max_tokens=600
        )
        headers_s = time.perf_counter() - start
        first_s = None
        async for chunk in raw.parse():
            if first_s is None and chunk.choices and chunk.choices[0].delta.content:
                first_s = time.perf_counter() - start
        await client.close()
    assert raw.headers["x-looplab-source"] == "upstream"
    assert first_s is not None and first_s >= 1.0
    # before the change the headers came with the first token (headers_s ~ first_s); the
    # margin leaves room for a loaded machine's scheduling
    assert headers_s < first_s - 0.5, (headers_s, first_s)
