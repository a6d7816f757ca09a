"""A web run's per-step split (AgentLab's StepTimestamps): browser phases in the trace, the
report's where-time-goes, timeline and step rows, and kept by re-timing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from looplab.analysis.retime import profile_model_timing, retime_events
from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.latency.presets import resolve_profile
from looplab.report.data.records import load_runs
from looplab.report.data.steps import step_rows
from looplab.report.views.observations import observation_rows
from looplab.report.views.time_split import components
from looplab.traces.inputs import load_traces
from looplab.traces.schema import StepEvent, ToolCallEvent
from looplab.traces.store import ResultStore

pytestmark = pytest.mark.browser


# a click's three phases against its wall time within 20 ms: CI read 56 ms of gap
# between them beside two other xdist workers
@pytest.mark.timing
def test_browser_phases_reach_trace_report_and_retiming(tmp_path: Path) -> None:
    """Each page action records act / page_wait / observe; steps sum them; the report
    splits tool time by them and prices the screenshots (gpt-4o: 1,105); re-timing at
    another speed keeps them."""
    config: dict[str, Any] = {
        "name": "phases",
        "backends": [{"name": "b", "profile": "fast-750"}],
        "tasks": ["web/signup-wizard"],
        "agent": {"observation": "screenshot"},
        "clock": "virtual",
        "output_dir": str(tmp_path / "out"),
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    asyncio.run(runner.run())
    (trace,) = load_traces([tmp_path / "out"])
    assert trace.end is not None and trace.end.success
    clicks = [t for t in trace.tool_calls() if t.name in ("goto", "click", "select")]
    for tool in clicks:
        assert set(tool.phases) == {"act", "page_wait", "observe"}
        assert sum(tool.phases.values()) == pytest.approx(tool.end - tool.start, abs=0.02)
        assert tool.observation is not None and tool.observation["kind"] == "screenshot"
    steps = trace.steps()
    first = steps[0]
    assert first.phases["observe"] == pytest.approx(clicks[0].phases["observe"])
    with ResultStore(tmp_path / "out" / "results.duckdb") as store:
        stored = store.db.execute("SELECT observe_s FROM steps ORDER BY step").fetchall()
    assert stored[0][0] == pytest.approx(first.phases["observe"])
    (record,) = load_runs([tmp_path / "out"])
    parts = components(record)
    assert parts["observe"] > 0 and parts["act"] > 0
    assert parts["tools"] + parts["act"] + parts["page_wait"] + parts["observe"] == pytest.approx(
        record.tool_s
    )
    assert {b.kind for b in record.bars} >= {"act", "page_wait", "observe"}
    (seen,) = observation_rows([record], {"web": "g"})
    observed = [t for t in trace.tool_calls() if t.observation]
    assert (seen.observation, seen.observations, seen.image_tokens, seen.rule) == (
        "screenshot",
        len(observed),
        1105,
        "gpt-4o",
    )
    assert seen.text_tokens is not None and seen.prompt_tokens is not None
    assert 0 < seen.text_tokens < seen.prompt_tokens
    rows = step_rows(record)
    assert rows[0].parts["observe"] == pytest.approx(first.phases["observe"])
    slow = retime_events(trace.events, profile_model_timing(resolve_profile("slow-80")), "test")
    retimed_steps = [e for e in slow if isinstance(e, StepEvent)]
    retimed_tools = [e for e in slow if isinstance(e, ToolCallEvent) and e.phases]
    assert [s.phases for s in retimed_steps] == [s.phases for s in steps]
    assert [t.phases for t in retimed_tools] == [t.phases for t in trace.tool_calls() if t.phases]
    assert max(s.end for s in retimed_steps) > max(s.end for s in steps)
