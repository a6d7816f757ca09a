"""The serving model: decode slows with context and load, prefill grows with the prompt,
and the simulator's schedule follows it exactly (virtual clock) or closely (wall clock)."""

from __future__ import annotations

import asyncio
import itertools
import json
import random

import pytest

from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.model import Simulator
from looplab.clock import VirtualClock
from looplab.latency.presets import presets, resolve_profile
from looplab.latency.timing import CallTokens, TimingModel

GPU = TimingModel.from_profile(presets()["gpu-frontier-batched-68"])
WAFER = TimingModel.from_profile(presets()["sol-cerebras-750"])


def test_decode_rate_at_a_context() -> None:
    """GPU preset: 68 tok/s at zero context, TraceLab's ~40.7 tok/s at a 119K context."""
    assert 1 / GPU.token_s(0) == pytest.approx(68)
    assert 1 / GPU.token_s(119_000) == pytest.approx(40.8, abs=0.1)
    assert 1 / WAFER.token_s(119_000) == pytest.approx(750 / 1.0595)


def test_decode_rate_under_load_and_the_ceiling() -> None:
    """Each extra stream adds 2%; past the ceiling a stream gets server_max_tps / streams."""
    assert 1 / GPU.token_s(0, streams=11) == pytest.approx(68 / 1.2)
    assert 1 / GPU.token_s(0, streams=64) == pytest.approx(68 / 2.26)
    assert 1 / GPU.with_(batch_slowdown=0.0).token_s(0, streams=64) == pytest.approx(2500 / 64)
    background = GPU.with_(background_streams=32)
    assert background.token_s(5000, streams=1) == pytest.approx(GPU.token_s(5000, streams=33))
    assert 1 / WAFER.token_s(0, streams=16) == pytest.approx(750)


def test_prefill_at_a_prompt_is_linear_plus_quadratic() -> None:
    """Prefill of uncached positions C..P-1 is (u + k u (P+C-1)/2 / 100K) / prefill_tps."""
    assert GPU.prefill_s(100_000) == pytest.approx((100_000 + 49_999.5) / 8000)
    assert GPU.prefill_s(120_000, cached=119_000) == pytest.approx(
        (1000 + 1000 * 238_999 / 2 / 100_000) / 8000
    )
    assert GPU.with_(prefill_context_slowdown=0.0).prefill_s(100_000) == pytest.approx(12.5)


def test_closed_form_span_is_the_sum_of_token_times() -> None:
    """`span_s` equals the token-by-token sum, across the throughput ceiling's knee too."""
    rng = random.Random(3)
    models = [GPU, GPU.with_(server_max_tps=200.0), WAFER, GPU.with_(decode_context_slowdown=0.0)]
    for model, _ in itertools.product(models, range(20)):
        first = rng.randint(0, 300_000)
        last = first + rng.randint(-1, 2000)
        streams = rng.randint(1, 40)
        expected = sum(model.token_s(c, streams, 1.1) for c in range(first, last + 1))
        assert model.span_s(first, last, streams, 1.1) == pytest.approx(expected, rel=1e-9)


def test_replan_keeps_the_past_and_paces_the_rest_at_the_new_load() -> None:
    """A stream joining at t slows only what is left; a half-done token keeps its progress."""
    model = TimingModel(decode_tps=100.0, batch_slowdown=1.0)  # 2 streams: half speed
    track = CallTokens(prompt=0, output=11)
    plan = model.plan(track)
    tokens = plan.track(0.0)
    assert tokens.time_of(10) == pytest.approx(0.1)
    tokens.replan(0.045, streams=2)  # 4.5 tokens done
    assert tokens.time_of(4) == pytest.approx(0.04)
    assert tokens.time_of(5) == pytest.approx(0.045 + 0.5 * 0.02)
    assert tokens.time_of(10) == pytest.approx(0.045 + 5.5 * 0.02)
    tokens.replan(0.07, streams=1)  # back alone, 5.75 tokens done
    assert tokens.time_of(5) == pytest.approx(0.055)
    assert tokens.time_of(6) == pytest.approx(0.07 + 0.25 * 0.01)
    assert tokens.time_of(10) == pytest.approx(0.07 + 4.25 * 0.01)
    assert tokens.due(0.0726) == 7


async def test_virtual_schedule_follows_the_context_curve_exactly() -> None:
    """On a virtual clock every slot is released at its intended time, and the intervals
    grow within one reply as the context grows."""
    profile = resolve_profile(
        "fast-750",
        ["decode_context_slowdown=500", "output_tokens=300", "ttft_s=0.1", "prefix_cache=false"],
    )
    simulator = Simulator(profile, clock=VirtualClock())
    body = {"model": "looplab-lorem", "messages": [{"role": "user", "content": "go " * 400}]}
    prepared = simulator.prepare(json.dumps(body).encode())
    released = [r async for r in simulator._run(prepared)]
    record = simulator.timings[prepared.request_id]
    assert record["lateness_max_s"] == pytest.approx(0, abs=1e-9)
    times = [r.actual for r in released]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps[-1] > gaps[0] * 1.3
    model = TimingModel.from_profile(profile)
    tokens = CallTokens(prepared.prompt_tokens, 0, 0, 300)
    assert record["decode_s"] == pytest.approx(model.plan(tokens).decode_s)


@pytest.mark.timing
async def test_wall_clock_streams_follow_a_changing_load() -> None:
    """Through real HTTP, a stream that others join mid-reply slows down as planned and the
    client sees the intended (re-planned) rate. (TTFT 50 ms: with a TTFT under ~40 ms the
    first chunk reaches this client ~40 ms late, a loopback TCP effect outside the server.)"""
    profile = resolve_profile(
        "fast-750",
        [
            "decode_tps=2000",
            "batch_slowdown=0.5",
            "ttft_s=0.05",
            "prefill_tps=null",
            "output_tokens=600",
            "reasoning_tokens=0",
            "decode_jitter=0",
        ],
    )
    with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(
            base_url=server.base_url, model="looplab-lorem", fetch_server_timing=True
        )
        async with InstrumentedClient(endpoint) as client:
            await client.complete([{"role": "user", "content": "warm"}], max_tokens=2)

            async def late(index: int) -> None:
                await asyncio.sleep(0.1)
                await client.complete([{"role": "user", "content": f"other {index}"}])

            first, *_ = await asyncio.gather(
                client.complete([{"role": "user", "content": "first"}]), late(1), late(2)
            )
    timing = first.server_timing
    assert timing is not None
    assert timing["replans"] >= 2
    assert timing["intended_rate_tps"] < 2000 * 0.8
    assert first.decode_rate_tps == pytest.approx(timing["intended_rate_tps"], rel=0.03)
