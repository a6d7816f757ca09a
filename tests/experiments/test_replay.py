"""Replay (virtual and live) and sweep over recorded runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from looplab.analysis.divergence import find_divergences
from looplab.analysis.replay import replay_virtual
from looplab.analysis.sweep import run_sweep
from looplab.bench.replay import synthetic_trace
from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.replay_live import replay_live
from looplab.experiments.runner import ExperimentRunner
from looplab.latency.presets import resolve_profile
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace


def _record(config: dict[str, Any]) -> list[Trace]:
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    result = asyncio.run(runner.run())
    return load_traces([result.directory])


# a wall-clock run re-timed at its own profile: a late release makes the wall longer
@pytest.mark.timing
def test_virtual_replay_at_own_profile_reproduces_task_time(small_config: dict[str, Any]) -> None:
    """Re-timing a run at the profile it ran with gives back its task time (within 3%)."""
    small_config["backends"] = [
        {"name": "p", "profile": "fast-750", "overrides": {"decode_tps": 400, "ttft_s": 0.05}}
    ]
    trace = _record(small_config)[0]
    profile = resolve_profile("fast-750", ["decode_tps=400", "ttft_s=0.05"])
    again = replay_virtual(trace, profile)
    assert again.end is not None and trace.end is not None
    assert again.end.end == pytest.approx(trace.end.end, rel=0.03)
    slower = replay_virtual(trace, resolve_profile("slow-80"))
    assert slower.end is not None and slower.end.end > 2 * trace.end.end
    assert all("ttft_s" in call.estimated for call in slower.model_calls())


def test_live_replay_reproduces_a_recorded_coding_run(small_config: dict[str, Any]) -> None:
    """Recorded replies served at another speed re-run the tools with no divergence."""
    small_config["backends"] = small_config["backends"][1:]
    recorded = _record(small_config)[0]
    live = asyncio.run(
        replay_live(recorded, resolve_profile("fast-750", ["decode_tps=3000", "ttft_s=0"]))
    )
    assert live.divergences == []
    assert len(live.trace.model_calls()) == len(recorded.model_calls())
    assert live.trace.end is not None and live.trace.end.success
    assert [c.name for c in live.trace.tool_calls()] == [c.name for c in recorded.tool_calls()]


def test_divergence_is_reported_with_its_step(small_config: dict[str, Any]) -> None:
    """A test run that flips from passing to failing is a divergence at its step."""
    small_config["backends"] = small_config["backends"][1:]
    recorded = _record(small_config)[0]
    calls = recorded.tool_calls()
    last_test = max(i for i, c in enumerate(calls) if c.name == "run_tests")
    flipped = calls[last_test].model_copy(update={"output": "FAILED: 1 failed"})
    events = [flipped if e is calls[last_test] else e for e in recorded.events]
    mutated = Trace(header=recorded.header, events=events)
    divergences = find_divergences(recorded, mutated)
    assert [(d.step, d.tool) for d in divergences] == [(calls[last_test].step, "run_tests")]
    assert divergences[0].recorded == "tests pass"


def test_sweep_speedup_is_monotonic_and_bounded_by_amdahl() -> None:
    """Faster decode never slows a task, and the speedup stays under 1/(1-f)."""
    traces = [synthetic_trace(30, "a"), synthetic_trace(60, "b")]
    rates = [20.0, 80.0, 750.0, 5000.0]
    rows, summary = run_sweep(traces, rates, [0.3], resolve_profile("slow-80"))
    assert len(rows) == 2 * len(rates)
    speedups = [s.speedup for s in summary]
    assert speedups == sorted(speedups) and speedups[0] == 1.0
    assert all(s.speedup < s.amdahl_ceiling for s in summary)
    shares = summary[-1]
    assert shares.decode_share + shares.ttft_share + shares.tool_share + shares.other_share == (
        pytest.approx(1.0, abs=0.01)
    )
