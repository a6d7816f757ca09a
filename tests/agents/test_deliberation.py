"""Planning and reflection calls: real model calls of each step, budgeted, in the trace.

It sits in tests/agents/ without importing looplab.agents: the agent's deliberation
(`agents/deliberation.py`) is observed end to end, through a run, its trace, the store and
the report; it has no piece to call on its own.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.report.data.records import load_runs
from looplab.report.views.time_split import planning_share
from looplab.traces.inputs import load_traces
from looplab.traces.store import ResultStore

OVERRIDES = {"decode_tps": 1000, "ttft_s": 0.05, "prefill_tps": None}


def test_planner_and_reflection_are_model_calls_of_each_step(tmp_path: Path) -> None:
    """With both on, every step has planner + actor (+ reflection unless it finished) calls
    of the budgeted sizes, and the report gives the share of task time they took."""
    agent: dict[str, Any] = {
        "planner": {"max_tokens": 120, "reasoning_tokens": 200},
        "reflection": {"max_tokens": 60},
    }
    config: dict[str, Any] = {
        "name": "deliberation",
        "backends": [{"name": "b", "profile": "fast-750", "overrides": OVERRIDES}],
        "tasks": ["coding/fix-pager"],
        "agent": agent,
        "clock": "virtual",
        "output_dir": str(tmp_path / "out"),
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    asyncio.run(runner.run())
    (trace,) = load_traces([tmp_path / "out"])
    assert trace.end is not None and trace.end.success
    steps = trace.steps()
    by_step: dict[int, list[str | None]] = {}
    for call in sorted(trace.model_calls(), key=lambda c: c.start):
        by_step.setdefault(call.step or 0, []).append(call.purpose)
    last = len(steps) - 1
    for index in range(len(steps)):
        wanted = ["planner", "actor"] + ([] if index == last else ["reflection"])
        assert by_step[index] == wanted
    planners = [c for c in trace.model_calls() if c.purpose == "planner"]
    assert all(c.completion_tokens == 320 and c.reasoning_tokens == 200 for c in planners)
    reflections = [c for c in trace.model_calls() if c.purpose == "reflection"]
    assert all(c.output_tokens == 60 for c in reflections)
    assert all(c.finish_reason == "stop" for c in planners + reflections)
    # the step's model time holds the reflection after its tools
    for step in steps[:-1]:
        calls = [c for c in trace.model_calls() if c.step == step.step]
        assert step.model_s >= sum(c.end - c.start for c in calls) - 1e-6
    with ResultStore(tmp_path / "out" / "results.duckdb") as store:
        counted = store.db.execute(
            "SELECT purpose, count(*) FROM model_calls GROUP BY purpose ORDER BY purpose"
        ).fetchall()
    assert counted == [("actor", len(steps)), ("planner", len(steps)), ("reflection", last)]
    (record,) = load_runs([tmp_path / "out"])
    share = planning_share([record])
    spent = sum(c.end - c.start for c in planners + reflections)
    assert share["planner"] + share["reflection"] == pytest.approx(spent / record.task_s)
    assert 0.1 < share["planner"] + share["reflection"] < 1
    assert share["planner"] > share["reflection"] > 0
