""" "Two minutes for a click?": what an action is (live computer-use and workload traces),
and the claim rows' time per action at 80 and 750 tok/s, computed from real runs."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.report.build import build_model_for
from looplab.report.claims.click_views import click_json, click_rows
from looplab.report.data.actions import PARTS, actions
from looplab.report.data.records import load_runs, record_from_trace
from looplab.report.views.observations import observation_rows
from looplab.stats.intervals import median
from looplab.tasks.references import parse_reference
from looplab.traces.io import Trace
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)
from looplab.workloads.model import load_workload
from looplab.workloads.sample import draw_shape

PLAIN, PLANNING = "workload/browser-use-gpt-4o", "workload/browser-use-gpt-4o-planning"
Call = tuple[str | None, float]
"""(purpose, seconds) of one model call: TTFT 0.1 s, the rest decode."""
Step = tuple[list[Call], list[str]]
"""A step's model calls and tool names (each tool 0.5 s after the calls; `plan` and
`reflect`, a workload's stand-ins, 0 s)."""


def _trace(agent: str, task: str, steps: list[Step]) -> Trace:
    """A trace of back-to-back steps with 0.05 s of harness time after each."""
    run = f"{agent}-run"
    events: list[TraceEvent] = [RunStartEvent(run_id=run, start=0.0, end=0.0, task=task)]
    t = 0.0
    for index, (calls, tools) in enumerate(steps):
        start = t
        for purpose, seconds in calls:
            call = ModelCallEvent(
                run_id=run,
                step=index,
                start=t,
                end=t + seconds,
                sent=t,
                first_token=t + 0.1,
                last_token=t + seconds,
                purpose=purpose,
            )
            events.append(call)
            t += seconds
        model_s = t - start
        tool_s = 0.0
        for name in tools:
            took = 0.0 if name in ("plan", "reflect") else 0.5
            events.append(ToolCallEvent(run_id=run, step=index, start=t, end=t + took, name=name))
            t += took
            tool_s += took
        t += 0.05
        step = StepEvent(
            run_id=run,
            step=index,
            start=start,
            end=t,
            model_s=model_s,
            tool_s=tool_s,
            overhead_s=0.05,
        )
        events.append(step)
    end = RunEndEvent(
        run_id=run, start=0.0, end=t, end_reason="finish", success=True, steps=len(steps)
    )
    header = TraceHeader(
        run_id=run,
        created=datetime(2026, 1, 1, tzinfo=UTC),
        task=task,
        agent=agent,
        cell={"backend": "b", "task": task, "repetition": 0},
    )
    return Trace(header=header, events=[*events, end])


def test_live_agent_actions_hold_their_planner_reflection_and_snapshot_steps() -> None:
    """Live computer-use trace: a snapshot-only step joins the next action, planner and
    reflection calls inside a step are its action's planning, finish is an action, and the
    actions' times add up to the run's."""
    steps: list[Step] = [
        ([(None, 1.0)], ["goto"]),
        ([(None, 0.6)], ["snapshot"]),
        ([("planner", 2.0), ("actor", 1.0), ("reflection", 1.5)], ["click", "screenshot"]),
        ([("planner", 2.0), ("actor", 0.4)], ["finish"]),
    ]
    trace = _trace("computer_use", "web/known", steps)
    record = record_from_trace(trace, "known")
    found = actions(record)
    assert [a.steps for a in found] == [[0], [1, 2], [3]]
    assert [a.tools for a in found] == [("goto",), ("click", "screenshot"), ("finish",)]
    assert [a.seconds for a in found] == pytest.approx([1.55, 1.15 + 5.55, 2.95])
    assert found[1].parts["planning"] == pytest.approx(3.5)
    assert found[1].parts["browser"] == pytest.approx(0.5 + 1.0)
    assert found[2].parts["planning"] == pytest.approx(2.0)
    assert sum(a.seconds for a in found) == pytest.approx(record.task_s)
    for action in found:
        assert sum(action.parts.values()) == pytest.approx(action.seconds)


def test_workload_actions_take_the_plan_step_before_and_the_reflect_step_after() -> None:
    """Workload trace: planner and reflection calls are steps of their own (tools `plan` /
    `reflect`); each action is plan + act + reflect, their model time its planning, and
    the closing reply without a tool joins the last action (as its model time)."""
    steps: list[Step] = [
        ([(None, 3.0)], ["plan"]),
        ([(None, 1.0)], ["click_element"]),
        ([(None, 2.0)], ["reflect"]),
        ([(None, 3.0)], ["plan"]),
        ([(None, 1.0)], ["done"]),
        ([(None, 2.0)], []),
    ]
    trace = _trace("workload", PLANNING, steps)
    found = actions(record_from_trace(trace, "known"))
    assert [a.steps for a in found] == [[0, 1, 2], [3, 4, 5]]
    assert [a.tools for a in found] == [("click_element",), ("done",)]
    assert [a.parts["planning"] for a in found] == pytest.approx([5.0, 3.0])
    assert [a.parts["ttft"] + a.parts["decode"] for a in found] == pytest.approx([1.0, 3.0])
    for action in found:
        assert action.parts["browser"] == pytest.approx(0.5)
        assert action.seconds == pytest.approx(6.0 + 0.5 + 3 * 0.05)


def _run(tmp_path: Path, tasks: list[str], agent: dict[str, Any] | None = None) -> Path:
    """A tiny real experiment at slow-80 and fast-750 on the virtual clock."""
    config: dict[str, Any] = {
        "name": "click",
        "backends": [
            {"name": "slow-80", "profile": "slow-80"},
            {"name": "fast-750", "profile": "fast-750"},
        ],
        "tasks": tasks,
        "agent": agent or {},
        "clock": "virtual",
        "workload": {"clock": "virtual", "tool_scale": 0.02, "concurrency": 4},
        "concurrency": 2,
        "output_dir": str(tmp_path / "out"),
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    asyncio.run(runner.run())
    return tmp_path / "out"


def test_claim_rows_give_time_per_action_of_real_workload_runs(tmp_path: Path) -> None:
    """Both computer-use workloads played live: each run's actions are its drawn shape's
    acting steps, and the "two minutes for a click" rows (report model, JSON) are the
    medians of those actions' times at 80 and 750 tok/s, with sentences naming the part
    that dominates at 750 from the traces; every action call prefills a new screenshot."""
    out = _run(tmp_path, [PLAIN, PLANNING])
    runs = load_runs([out])
    for run in runs:
        reference = parse_reference(run.task)
        assert reference is not None
        shape = draw_shape(load_workload(reference.path), 0)
        assert len(actions(run)) == shape.actions, run.run_id
    model, _ = build_model_for([out], title=None, group_by="profile", transcripts=0)
    assert model.claim is not None
    rows = {r.key: r for r in model.claim.click}
    assert set(rows) == {f"click:{PLAIN}", f"click:{PLANNING}"}
    for task in (PLAIN, PLANNING):
        row = rows[f"click:{task}"]
        for side, profile in ((row.slow, "slow-80"), (row.fast, "fast-750")):
            (run,) = [r for r in runs if r.task == task and r.profile == profile]
            times = [a.seconds for a in actions(run)]
            assert side.median_s == pytest.approx(median(times))
            assert side.actions == len(times) and side.ci is None
        assert row.verdict == "too few runs"
        key, share = row.fast.dominant
        assert f"at 750 tok/s {PARTS[key]} {share:.0%}" in row.sentence
    planning = rows[f"click:{PLANNING}"]
    assert planning.slow.dominant[0] == "planning"
    assert planning.slow.median_s > 2 * planning.fast.median_s
    for observed in model.claim.observations:
        assert observed.observation == "drawn" and observed.image_tokens == 1105
        assert observed.uncached_tokens is not None and observed.uncached_tokens >= 1105
    data = json.loads(json.dumps(click_json(planning)))
    assert data["slow"]["median_s"] == pytest.approx(planning.slow.median_s)
    assert data["interval"] is None and data["verdict"] == "too few runs"


@pytest.mark.browser
def test_live_computer_use_run_counts_each_acting_step_as_an_action(tmp_path: Path) -> None:
    """A real web task with screenshots and planner + reflection calls: one action per step
    (no look-only steps in its solution), planner and reflection time in its actions, and
    the web row and the observation table computed from the run."""
    agent = {
        "observation": "screenshot",
        "planner": {"max_tokens": 40},
        "reflection": {"max_tokens": 20},
    }
    out = _run(tmp_path, ["web/signup-wizard"], agent)
    runs = load_runs([out])
    for run in runs:
        assert run.success
        found = actions(run)
        assert len(found) == run.steps
        planned = sum(
            c.end - c.start
            for c in (run.trace.model_calls() if run.trace else [])
            if c.purpose in ("planner", "reflection")
        )
        assert sum(a.parts["planning"] for a in found) == pytest.approx(planned)
    by_group = {"slow-80": [r for r in runs if r.profile == "slow-80"]}
    by_group["fast-750"] = [r for r in runs if r.profile == "fast-750"]
    (row,) = click_rows(by_group, "slow-80", "fast-750", (80.0, 750.0))
    assert row.key == "click:web" and "screenshot" in row.label
    assert row.slow.actions == by_group["slow-80"][0].steps
    (observed,) = observation_rows(by_group["slow-80"], {"web": row.label})
    assert observed.observation == "screenshot" and observed.image_tokens == 1105
    assert observed.observations >= row.slow.actions - 1
