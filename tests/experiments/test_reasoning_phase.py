"""Reasoning is decode, everywhere: one convention for a call's phases in the trace, the
store, the report and the sweep (TTFT + prefill, hidden reasoning, visible decode)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from looplab.analysis.retime import sweep_trace
from looplab.analysis.sweep import run_sweep
from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.latency.presets import resolve_profile
from looplab.report.data.records import load_runs
from looplab.report.views.report_model import components
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace
from looplab.traces.store import ResultStore

OVERRIDES = {"decode_tps": 1000, "ttft_s": 0.05, "prefill_tps": None}


def _run(tmp_path: Path, clock: str) -> Trace:
    config: dict[str, Any] = {
        "name": f"reasoning-{clock}",
        "backends": [{"name": "b", "profile": "fast-750", "overrides": OVERRIDES}],
        "tasks": ["coding/fix-pager"],
        "clock": clock,
        "output_dir": str(tmp_path / clock),
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    asyncio.run(runner.run())
    (trace,) = load_traces([tmp_path / clock])
    return trace


@pytest.mark.timing
@pytest.mark.parametrize("clock", ["virtual", "wall"])
def test_trace_splits_ttft_reasoning_and_decode(tmp_path: Path, clock: str) -> None:
    """fix-pager's first steps reason (60, 120 tokens at 1000 tok/s): the trace carries that
    as `reasoning_s`, TTFT stops at the first token of any kind, and TTFT + reasoning is the
    time to the first visible token."""
    trace = _run(tmp_path, clock)
    calls = trace.model_calls()
    reasoning = [c for c in calls if c.reasoning_tokens]
    assert [c.reasoning_tokens for c in reasoning] == [60, 120]
    for call in reasoning:
        assert call.reasoning_s == pytest.approx(call.reasoning_tokens / 1000)
        assert call.ttft_s is not None and call.first_visible_s is not None
        assert call.ttft_s + call.reasoning_s == pytest.approx(call.first_visible_s)
        if clock == "virtual":  # exactly the profile's TTFT + prefill, no reasoning inside
            assert call.ttft_s == pytest.approx(0.05, abs=0.005)
    assert all(c.reasoning_s is None for c in calls if not c.reasoning_tokens)


def test_store_report_and_sweep_use_the_same_split(tmp_path: Path) -> None:
    """The store's columns, the report's components and bars, and the sweep's shares all
    show reasoning apart from TTFT + prefill and from visible decode."""
    trace = _run(tmp_path, "virtual")
    with ResultStore(tmp_path / "index.duckdb") as store:
        store.index(trace)
        rows = store.query(
            "SELECT ttft_s, reasoning_s, first_visible_s FROM model_calls "
            "WHERE reasoning_tokens > 0 ORDER BY step"
        )
    assert [round(r[1], 6) for r in rows] == [0.06, 0.12]
    assert all(r[0] + r[1] == pytest.approx(r[2]) for r in rows)
    (record,) = load_runs([tmp_path / "virtual"])
    parts = components(record)
    assert parts["reasoning"] == pytest.approx(0.18)
    assert {b.kind for b in record.bars} >= {"ttft", "reasoning", "decode"}
    base = resolve_profile("fast-750", ["decode_tps=1000", "ttft_s=0.05", "prefill_tps=null"])
    (point,) = sweep_trace(trace, [1000.0], [0.05], base)
    assert point.reasoning_s == pytest.approx(0.18)
    assert point.rate_scaled_s == pytest.approx(point.decode_s + 0.18)
    _, summaries = run_sweep([trace], [100.0, 1000.0], [0.05], base)
    assert all(s.reasoning_share > 0 for s in summaries)
    slow = summaries[0]
    assert slow.amdahl_ceiling == pytest.approx(
        1 / (1 - (slow.decode_share + slow.reasoning_share)), rel=0.01
    )
