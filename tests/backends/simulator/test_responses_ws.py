"""The Responses API over a persistent WebSocket, through the real openai client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import CallTokens, TimingModel

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)

OVERHEAD = ["request_overhead_s=0.25", "websocket_overhead_s=0.05"]
PROFILE = ["decode_tps=400", "ttft_s=0", "prefill_tps=null", "output_tokens=20"]


@pytest.fixture
def ws_server() -> Iterator[SimulatorServer]:
    """A simulator at 400 tok/s with 3 hidden reasoning tokens and per-call overheads."""
    profile = resolve_profile("fast-750", [*PROFILE, "reasoning_tokens=3", *OVERHEAD])
    with SimulatorServer(profile) as server:
        yield server


_END = ("response.completed", "response.incomplete", "error")


async def _turn(connection: Any, **create: Any) -> tuple[list[str], Any, float]:
    """Send one response.create; (event types, the last event, seconds to the first delta)."""
    started = time.perf_counter()
    await connection.response.create(model="looplab-lorem", **create)
    kinds: list[str] = []
    first_delta = float("nan")
    async for event in connection:
        kinds.append(event.type)
        if event.type == "response.output_text.delta" and first_delta != first_delta:
            first_delta = time.perf_counter() - started
        if event.type in _END:
            return kinds, event, first_delta
    raise AssertionError("the connection closed mid-turn")


async def test_two_turns_on_one_connection(ws_server: SimulatorServer) -> None:
    """Two paced turns on one WebSocket: ordered events, usage, previous_response_id."""
    client = openai.AsyncOpenAI(base_url=ws_server.base_url, api_key="k", max_retries=0)
    async with client.responses.connect() as connection:
        kinds, first, _ = await _turn(connection, input="Explain.", instructions="Be brief.")
        kinds2, second, _ = await _turn(
            connection, input="And then?", previous_response_id=first.response.id
        )
    await client.close()
    for sequence in (kinds, kinds2):
        assert sequence[:2] == ["response.created", "response.in_progress"]
        assert sequence[-1] == "response.completed"
        assert sequence.count("response.output_text.delta") >= 2
        assert sequence.index("response.output_text.done") < sequence.index(
            "response.output_item.done", sequence.index("response.content_part.added")
        )
    assert first.response.output_text and len(first.response.output_text.split()) == 20
    usage, usage2 = first.response.usage, second.response.usage
    assert usage.output_tokens == 23
    assert usage.output_tokens_details.reasoning_tokens == 3
    # the second turn's prompt holds the first turn's input and reply
    assert usage2.input_tokens > usage.input_tokens + 20
    assert second.response.previous_response_id == first.response.id


async def test_refused_turn_is_an_error_event_and_the_connection_lives(
    ws_server: SimulatorServer,
) -> None:
    """An unknown previous_response_id and an unknown model are `error` events; the next
    turn on the same connection is served."""
    client = openai.AsyncOpenAI(base_url=ws_server.base_url, api_key="k", max_retries=0)
    async with client.responses.connect() as connection:
        _, missing, _ = await _turn(connection, input="x", previous_response_id="resp_nope")
        await connection.response.create(model="no-such-model", input="x")
        unknown = await connection.recv()
        _, done, _ = await _turn(connection, input="Now properly.")
    await client.close()
    assert missing.type == "error"
    assert missing.error.code == "previous_response_not_found"
    assert missing.error.param == "previous_response_id"
    assert unknown.type == "error" and unknown.status == 404
    assert unknown.error.code == "model_not_found"
    assert done.type == "response.completed"


async def test_websocket_turn_pays_the_websocket_overhead(ws_server: SimulatorServer) -> None:
    """A WebSocket turn is planned with websocket_overhead_s, an HTTP request with
    request_overhead_s (timing endpoint), and the client sees the difference."""
    client = openai.AsyncOpenAI(base_url=ws_server.base_url, api_key="k", max_retries=0)
    async with client.responses.connect() as connection:
        await _turn(connection, input="warm up")
        _, ws_done, ws_first = await _turn(connection, input="Explain.")
    started = time.perf_counter()
    http_first = float("nan")
    async with client.responses.stream(model="looplab-lorem", input="Explain.") as stream:
        async for event in stream:
            if event.type == "response.output_text.delta" and http_first != http_first:
                http_first = time.perf_counter() - started
        http_done = await stream.get_final_response()
    await client.close()
    timings = []
    async with httpx2.AsyncClient(base_url=ws_server.base_url.removesuffix("/v1")) as http:
        for response_id in (ws_done.response.id, http_done.id):
            rid = response_id.removeprefix("resp_")
            reply = await http.get(f"/v1/looplab/requests/{rid}/timing")
            timings.append(reply.json())
    assert [t["transport"] for t in timings] == ["websocket", "http"]
    assert [t["overhead_s"] for t in timings] == [0.05, 0.25]
    assert http_first - ws_first > 0.1  # planned 0.2 s apart; loose on a loaded machine


def test_overhead_is_part_of_the_one_timing_formula() -> None:
    """`plan` adds the transport's overhead to TTFT; an unset websocket overhead is 20% of
    the HTTP one; an unknown transport names the known ones."""
    profile = LatencyProfile(decode_tps=100, ttft_s=0.1, request_overhead_s=0.2)
    model = TimingModel.from_profile(profile)
    tokens = CallTokens(prompt=10, output=5)
    http, ws = model.plan(tokens), model.plan(tokens, transport="websocket")
    assert http.overhead_s == pytest.approx(0.2)
    assert ws.overhead_s == pytest.approx(0.04)
    assert http.ttft_s - ws.ttft_s == pytest.approx(0.16)
    assert model.fixed_ttft_s == pytest.approx(0.3)
    with pytest.raises(ValueError, match="http, websocket"):
        model.plan(tokens, transport="carrier-pigeon")
