"""Record against one upstream, replay at other speeds with no upstream; divergences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.proxy.calls import CallRecord
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}
]  # fmt: skip


async def _session(base_url: str) -> list[dict[str, Any]]:
    """A two-step agent loop (tool call, then answer), streamed; returns the replies."""
    client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "Fix pager.py"}]
    replies = []
    for _ in range(2):
        stream = await client.chat.completions.create(
            model="looplab-lorem", messages=messages, tools=TOOLS, stream=True,
            stream_options={"include_usage": True},
        )  # fmt: skip
        text, calls = "", {}
        async for chunk in stream:
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    entry["id"] = call.id or entry["id"]
                    entry["name"] = (call.function.name if call.function else None) or entry["name"]
                    entry["arguments"] += (call.function.arguments if call.function else "") or ""
        replies.append({"text": text, "calls": list(calls.values())})
        if calls:
            tool_calls = [{"id": c["id"], "type": "function",
                           "function": {"name": c["name"], "arguments": c["arguments"]}}
                          for c in calls.values()]  # fmt: skip
            messages.append({"role": "assistant", "content": None, "tool_calls": tool_calls})
            messages.extend({"role": "tool", "tool_call_id": c["id"], "content": "ok"}
                            for c in calls.values())  # fmt: skip
    await client.close()
    return replies


def _rate(call: CallRecord) -> float:
    assert call.first_token is not None and call.last_token is not None
    tokens = (call.usage.completion or 0) - (call.usage.reasoning or 0)
    return (tokens - 1) / (call.last_token - call.first_token)


async def test_recording_replays_at_two_speeds_without_upstream(
    upstream: SimulatorServer, tmp_path: Path
) -> None:
    """A session recorded once replays at 200 and at 400 tok/s, identical, no upstream."""
    store = tmp_path / "rec"
    fast = resolve_profile("fast-750", ["ttft_s=0", "prefill_tps=null"])
    with ProxyServer(fast, upstream=upstream.base_url, record=store) as recorder:
        recorded = await _session(recorder.base_url)
    index = [json.loads(line) for line in (store / "index.jsonl").read_text().splitlines()]
    assert [entry["step"] for entry in index] == [0, 1]
    exchange = json.loads((store / index[1]["file"]).read_text())
    assert exchange["format"] == "looplab-proxy-1"
    assert exchange["usage"]["completion"] == 120
    assert exchange["upstream"]["total_s"] > 0
    for rate in (200, 400):
        profile = resolve_profile("slow-80", [f"decode_tps={rate}", "ttft_s=0.05"])
        with ProxyServer(profile, replay=store) as replayer:
            replayed = await _session(replayer.base_url)
            calls = list(replayer.proxy.history.calls)
            assert replayer.proxy.recording is not None
            assert replayer.proxy.recording.divergences == []
        assert replayed == recorded
        assert [c.source for c in calls] == ["replay", "replay"]
        # client, proxy and upstream share this interpreter (GIL, GC): 3% fast at most
        # (no token goes out early), slower only as a loaded machine delays the threads;
        # test_wrap (own process): 1%
        assert rate * 0.85 <= _rate(calls[1]) <= rate * 1.03


async def test_unrecorded_request_is_a_clear_error_or_goes_upstream(
    upstream: SimulatorServer, tmp_path: Path
) -> None:
    """Off the recording: an OpenAI-shaped 400 naming the step, or the upstream when given."""
    store = tmp_path / "rec"
    with ProxyServer(resolve_profile("fast-750"), upstream=upstream.base_url, record=store) as rec:
        await _session(rec.base_url)
    question = [{"role": "user", "content": "Something else entirely"}]
    with ProxyServer(resolve_profile("fast-750"), replay=store) as replayer:
        client = openai.AsyncOpenAI(base_url=replayer.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError) as missed:
            await client.chat.completions.create(model="looplab-lorem", messages=question)
        await client.close()
        assert replayer.proxy.recording is not None
        divergence = replayer.proxy.recording.divergences[0]
    assert missed.value.body["code"] == "replay_miss"  # type: ignore[index]
    assert "step 0" in missed.value.message
    assert divergence.step == 0 and not divergence.recorded
    assert "Fix pager.py" in divergence.expected
    both = ProxyServer(resolve_profile("fast-750"), replay=store, upstream=upstream.base_url)
    with both:
        client = openai.AsyncOpenAI(base_url=both.base_url, api_key="k", max_retries=0)
        answer = await client.chat.completions.create(model="looplab-lorem", messages=question)
        await client.close()
        assert both.proxy.history.calls[-1].source == "upstream"
    assert answer.choices[0].message.content


async def test_out_of_order_session_reports_its_step(
    upstream: SimulatorServer, tmp_path: Path
) -> None:
    """A replayed session that skips its first request diverges at step 0, still served."""
    store = tmp_path / "rec"
    with ProxyServer(resolve_profile("fast-750"), upstream=upstream.base_url, record=store) as rec:
        await _session(rec.base_url)
    index = [json.loads(line) for line in (store / "index.jsonl").read_text().splitlines()]
    request = json.loads((store / index[1]["file"]).read_text())["request"]
    with ProxyServer(resolve_profile("fast-750"), replay=store) as replayer:
        async with httpx2.AsyncClient() as http:
            reply = await http.post(replayer.base_url + "/chat/completions", json=request)
        assert reply.status_code == 200 and "[DONE]" in reply.text
        assert replayer.proxy.recording is not None
        divergences = replayer.proxy.recording.divergences
    assert len(divergences) == 1
    assert divergences[0].step == 0 and divergences[0].recorded


async def test_replay_decodes_hidden_reasoning_at_the_profiles_rate(tmp_path: Path) -> None:
    """Recorded hidden reasoning tokens delay the first visible token by reasoning / rate."""
    store = tmp_path / "rec"
    thinking = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0", "prefill_tps=null",
                                            "output_tokens=80", "reasoning_tokens=40"])  # fmt: skip
    with (
        SimulatorServer(thinking) as source,
        ProxyServer(resolve_profile("fast-750"), upstream=source.base_url, record=store) as rec,
    ):
        client = openai.AsyncOpenAI(base_url=rec.base_url, api_key="k")
        stream = await client.responses.create(model="looplab-lorem", input="Think.", stream=True)
        [event async for event in stream]
        await client.close()
    profile = resolve_profile("slow-80", ["decode_tps=400", "ttft_s=0.05", "prefill_tps=null"])
    with ProxyServer(profile, replay=store) as replayer:
        client = openai.AsyncOpenAI(base_url=replayer.base_url, api_key="k")
        stream = await client.responses.create(model="looplab-lorem", input="Think.", stream=True)
        [event async for event in stream]
        await client.close()
        (call,) = replayer.proxy.history.calls
    assert call.usage.reasoning == 40 and call.first_token is not None
    assert 0.15 - 1e-6 <= call.first_token - call.received < 0.15 + 0.04  # never early
