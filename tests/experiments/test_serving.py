"""The serving model end to end: late steps of a long task slow down under a
context-dependent profile (and not under a flat one), and virtual re-timing predicts a
wall-clock run under such a profile."""

from __future__ import annotations

import asyncio
import statistics
from pathlib import Path
from typing import Any

import pytest

from looplab.analysis.replay import replay_virtual
from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.latency.presets import resolve_profile
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace

CONTEXT = {"decode_context_slowdown": 20, "reasoning_tokens": 0}


def _record(config: dict[str, Any]) -> list[Trace]:
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    result = asyncio.run(runner.run())
    return load_traces([result.directory])


def _per_token_ms(trace: Trace) -> list[float]:
    """Visible decode time per token of each step's model call, in ms."""
    out = []
    for call in trace.model_calls():
        tokens = (call.completion_tokens or 0) - (call.reasoning_tokens or 0)
        assert call.decode_s is not None and tokens > 1
        out.append(call.decode_s / (tokens - 1) * 1000)
    return out


def test_late_steps_slow_down_only_under_a_context_profile(tmp_path: Path) -> None:
    """nbugs-8 on the virtual clock: the last third of the steps decode >= 40% slower per
    token than the first third with a context slope, and exactly as fast without one."""
    traces = _record(
        {
            "name": "context",
            "backends": [
                {"name": "context", "profile": "fast-750", "overrides": CONTEXT},
                {"name": "flat", "profile": "fast-750", "overrides": {"reasoning_tokens": 0}},
            ],
            "tasks": ["coding/nbugs-8"],
            "clock": "virtual",
            "concurrency": 2,
            "output_dir": str(tmp_path),
        }
    )
    by_backend = {t.header.cell.backend: _per_token_ms(t) for t in traces}
    for name, per_token in by_backend.items():
        third = len(per_token) // 3
        early = statistics.mean(per_token[:third])
        late = statistics.mean(per_token[-third:])
        if name == "context":
            assert late > 1.4 * early
        else:
            assert late == pytest.approx(early, rel=1e-6)


@pytest.mark.timing
def test_virtual_retiming_predicts_a_wall_clock_run_under_a_context_profile(
    tmp_path: Path,
) -> None:
    """A wall-clock run with context-dependent decode is re-timed at its own profile to
    within 3% of its task time."""
    overrides = {"decode_tps": 2000, "ttft_s": 0.05, "decode_context_slowdown": 100}
    (trace,) = _record(
        {
            "name": "context-live",
            "backends": [{"name": "context", "profile": "fast-750", "overrides": overrides}],
            "tasks": ["coding/nbugs-4"],
            "output_dir": str(tmp_path),
        }
    )
    per_token = _per_token_ms(trace)
    assert per_token[-1] > per_token[0]
    profile = resolve_profile(
        "fast-750", ["decode_tps=2000", "ttft_s=0.05", "decode_context_slowdown=100"]
    )
    again = replay_virtual(trace, profile)
    assert again.end is not None and trace.end is not None
    assert again.end.end == pytest.approx(trace.end.end, rel=0.03)
