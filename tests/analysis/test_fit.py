"""Fitting decode-vs-context and TTFT-vs-prompt curves (the calibration helpers)."""

from __future__ import annotations

import random

import pytest

from looplab.analysis.fit import (
    decode_points,
    fit_decode_vs_context,
    fit_ttft_vs_prompt,
    ttft_points,
)
from looplab.latency.presets import presets, resolve_profile
from looplab.latency.timing import CallTokens, TimingModel
from looplab.traces.schema import ModelCallEvent

GPU = TimingModel.from_profile(presets()["gpu-frontier-batched-68"]).with_(ttft_jitter_mean_s=0.0)


def _call(model: TimingModel, prompt: int, cached: int, output: int) -> ModelCallEvent:
    """A model call timed exactly by `model` (sent at 0)."""
    plan = model.plan(CallTokens(prompt, cached, 0, output))
    return ModelCallEvent(
        run_id="r",
        step=0,
        start=0.0,
        end=plan.total_s,
        sent=0.0,
        first_token=plan.first_visible_s,
        last_token=plan.total_s,
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=output,
        reasoning_tokens=0,
    )


def test_fits_recover_the_model_that_timed_the_calls() -> None:
    """Calls timed by the GPU preset give back its decode rate, slope and prefill curve."""
    rng = random.Random(1)
    calls = []
    for _ in range(40):
        prompt = rng.randint(1_000, 150_000)
        cached = rng.randint(0, prompt - 100)
        calls.append(_call(GPU, prompt, cached, rng.randint(20, 600)))
    decode = fit_decode_vs_context(decode_points(calls))
    assert decode.decode_tps == pytest.approx(68, rel=1e-6)
    assert decode.decode_context_slowdown == pytest.approx(0.56, rel=1e-6)
    assert decode.r2 == pytest.approx(1.0)
    ttft = fit_ttft_vs_prompt(ttft_points(calls))
    assert ttft.ttft_s == pytest.approx(0.6, rel=1e-6)
    assert ttft.prefill_tps == pytest.approx(8000, rel=1e-6)
    assert ttft.prefill_context_slowdown == pytest.approx(1.0, rel=1e-6)
    profile = resolve_profile("fast-750", decode.as_overrides() + ttft.as_overrides())
    assert TimingModel.from_profile(profile).token_s(119_000) == pytest.approx(GPU.token_s(119_000))


def test_noisy_calls_give_a_close_fit_and_a_quality_measure() -> None:
    """With 5% noise on every time the fit stays within ~10% and reports R^2 < 1."""
    rng = random.Random(2)
    points = [
        (c, GPU.token_s(round(c)) * rng.gauss(1, 0.05))
        for c in (rng.uniform(0, 150_000) for _ in range(400))
    ]
    fit = fit_decode_vs_context(points)
    assert fit.decode_tps == pytest.approx(68, rel=0.05)
    assert fit.decode_context_slowdown == pytest.approx(0.56, rel=0.15)
    assert 0.5 < fit.r2 < 1.0
    assert fit.rmse_s > 0


def test_impossible_coefficients_are_dropped_and_said() -> None:
    """Decode getting faster with context, or TTFT shrinking with the prompt, is not fitted:
    the term is set to 0 and a note says so."""
    faster = [(1_000.0, 0.02), (100_000.0, 0.01)]
    fit = fit_decode_vs_context(faster)
    assert fit.decode_context_slowdown == 0
    assert fit.decode_tps == pytest.approx(1 / 0.015)
    assert fit.notes
    flat = fit_ttft_vs_prompt([(1_000, 0, 0.5), (50_000, 0, 0.5), (90_000, 0, 0.5)])
    assert flat.prefill_tps is None
    assert flat.ttft_s == pytest.approx(0.5)


def test_estimated_and_reasoning_calls_are_left_out() -> None:
    """Calls whose times an importer estimated, or whose TTFT hides reasoning, are skipped."""
    call = _call(GPU, 10_000, 0, 100)
    estimated = call.model_copy(update={"estimated": {"decode_s": "x", "ttft_s": "x"}})
    reasoning = call.model_copy(update={"reasoning_tokens": 50, "completion_tokens": 150})
    assert decode_points([estimated]) == [] and ttft_points([estimated]) == []
    assert ttft_points([reasoning]) == []
    assert len(decode_points([reasoning])) == 1
    with pytest.raises(ValueError, match="no calls"):
        fit_decode_vs_context([])
