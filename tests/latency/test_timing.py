"""The one call-timing function: its formula, its token track, and that every user calls it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from looplab.analysis.retime import profile_model_timing, sweep_trace
from looplab.backends.simulator.model import Simulator
from looplab.bench.synthetic import write_synthetic_experiment
from looplab.clock import VirtualClock
from looplab.latency.presets import resolve_profile
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import CallTokens, TimingModel, plan_call
from looplab.traces.io import read_trace
from looplab.traces.schema import ModelCallEvent

PROFILE = resolve_profile(
    "fast-750",
    [
        "decode_tps=400",
        "ttft_s=0.2",
        "network_rtt_s=0.03",
        "pipeline_stages=10",
        "stage_latency_s=0.002",
        "prefill_tps=5000",
        "ttft_jitter_s={kind: uniform, low: 0.0, high: 0.1}",
        "output_tokens=101",
        "reasoning_tokens=40",
        "prefix_cache=false",
    ],
)
"""Every TTFT part non-zero, so no part can be dropped unnoticed."""


def test_flat_plan_is_the_documented_formula() -> None:
    """TTFT = rtt + base + jitter mean + stages + prefill; reasoning R/rate; decode (V-1)/rate."""
    plan = plan_call(PROFILE, CallTokens(prompt=2000, cached=1500, reasoning=40, output=101))
    assert plan.network_s == pytest.approx(0.03)
    assert plan.base_s == pytest.approx(0.2 + 0.05)
    assert plan.pipeline_s == pytest.approx(0.02)
    assert plan.prefill_s == pytest.approx(500 / 5000)
    assert plan.ttft_s == pytest.approx(0.03 + 0.25 + 0.02 + 0.1)
    assert plan.reasoning_s == pytest.approx(40 / 400)
    assert plan.decode_s == pytest.approx(100 / 400)
    assert plan.first_visible_s == pytest.approx(plan.ttft_s + 0.1)


def test_track_release_times_agree_with_the_plan() -> None:
    """Token k is at first + k/rate; `due` inverts `time_of`; no-visible replies end at the
    last reasoning token."""
    plan = plan_call(PROFILE, CallTokens(prompt=100, reasoning=40, output=101))
    track = plan.track(10.0)
    assert track.time_of(0) == pytest.approx(10.0 + plan.ttft_s)
    assert track.time_of(40) - track.time_of(0) == pytest.approx(plan.reasoning_s)
    assert track.time_of(140) - track.time_of(40) == pytest.approx(plan.decode_s)
    for k in (0, 1, 39, 40, 100, 140):
        assert track.due(track.time_of(k)) == k + 1
        assert track.due(track.time_of(k) - 1e-6) == k
    silent = plan_call(PROFILE, CallTokens(prompt=100, reasoning=40, output=0))
    assert silent.reasoning_s == pytest.approx(39 / 400)
    assert silent.decode_s == 0


async def test_simulator_schedule_is_the_plan() -> None:
    """The simulator's intended schedule for a request is `plan` of its token counts."""
    simulator = Simulator(PROFILE, clock=VirtualClock())
    body = {"model": "looplab-lorem", "messages": [{"role": "user", "content": "hello " * 50}]}
    prepared = simulator.prepare(json.dumps(body).encode())
    await simulator.complete(prepared)
    record = simulator.timings[prepared.request_id]
    tokens = CallTokens(prepared.prompt_tokens, prepared.cached_tokens, 40, 101)
    plan = TimingModel.from_profile(PROFILE).plan(
        tokens, ttft_extra_s=prepared.ttft_extra_s, decode_factor=prepared.decode_factor
    )
    assert record["ttft_s"] == pytest.approx(plan.ttft_s)
    assert record["reasoning_s"] == pytest.approx(plan.reasoning_s)
    assert record["decode_s"] == pytest.approx(plan.decode_s)
    assert record["intended_first_s"] == pytest.approx(plan.first_visible_s)
    assert record["intended_last_s"] == pytest.approx(plan.total_s)


def test_retiming_sweep_and_synthetic_data_use_the_plan(tmp_path: Path) -> None:
    """Virtual re-timing, the sweep's totals and the synthetic report data all equal `plan`."""
    write_synthetic_experiment(tmp_path, 2, profiles=("slow-80", "fast-750"))
    (trace,) = [read_trace(p) for p in (tmp_path / "traces").glob("slow-80__*.jsonl")]
    slow = resolve_profile("slow-80")
    model = TimingModel.from_profile(slow)
    calls = [e for e in trace.events if isinstance(e, ModelCallEvent)]
    plans = []
    for call in calls:
        assert call.completion_tokens is not None and call.prompt_tokens is not None
        tokens = CallTokens(call.prompt_tokens, call.cached_tokens or 0, 0, call.completion_tokens)
        plan = model.plan(tokens)
        plans.append(plan)
        assert call.ttft_s == pytest.approx(plan.first_visible_s)
        assert call.decode_s == pytest.approx(plan.decode_s)
        timing = profile_model_timing(slow)(call)
        assert timing is not None
        assert timing.ttft_s + timing.reasoning_s == pytest.approx(plan.first_visible_s)
        assert timing.decode_s == pytest.approx(plan.decode_s)
    (point,) = sweep_trace(trace, [slow.decode_tps], [slow.ttft_s], slow)
    assert point.ttft_total_s == pytest.approx(sum(p.ttft_s for p in plans))
    assert point.decode_s == pytest.approx(sum(p.reasoning_s + p.decode_s for p in plans))


def test_timing_model_reads_every_timing_field_of_the_profile() -> None:
    """`from_profile` carries each timing field (a new field must be added there too)."""
    model = TimingModel.from_profile(PROFILE)
    assert (model.decode_tps, model.ttft_s, model.network_rtt_s) == (400, 0.2, 0.03)
    assert model.pipeline_s == pytest.approx(0.02)
    assert model.ttft_jitter_mean_s == pytest.approx(0.05)
    assert model.prefill_tps == 5000
    assert isinstance(PROFILE, LatencyProfile)


def test_per_token_framing_is_paid_by_the_calls_transport() -> None:
    """`token_overhead_s` follows every completion token after the first over HTTP, 70% of
    it on a WebSocket by default (or `websocket_token_overhead_s`); the token track agrees."""
    framed = PROFILE.model_copy(update={"token_overhead_s": 0.001})
    tokens = CallTokens(prompt=100, reasoning=40, output=101)
    model = TimingModel.from_profile(framed)
    http, ws = (model.plan(tokens, transport=t) for t in ("http", "websocket"))
    assert http.reasoning_s == pytest.approx(40 * (1 / 400 + 0.001))
    assert http.decode_s == pytest.approx(100 * (1 / 400 + 0.001))
    assert ws.decode_s == pytest.approx(100 * (1 / 400 + 0.0007))
    assert http.ttft_s == ws.ttft_s == pytest.approx(plan_call(PROFILE, tokens).ttft_s)
    track = ws.track(0.0)
    assert track.time_of(140) - track.time_of(40) == pytest.approx(ws.decode_s)
    own = framed.model_copy(update={"websocket_token_overhead_s": 0.0})
    assert TimingModel.from_profile(own).plan(tokens, transport="websocket").decode_s == (
        pytest.approx(plan_call(PROFILE, tokens).decode_s)
    )
    assert model.frame_s == 0.0  # the profile's model is unframed; each plan frames its own
