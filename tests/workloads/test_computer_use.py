"""Computer-use workloads: actions with observation time and screenshot tokens, planner and
reflection calls, calibration from browser-agent records, and live runs at 80 and 750."""

from __future__ import annotations

import asyncio
import statistics
from pathlib import Path

import pytest

from looplab.analysis.retime import profile_model_timing, retime_events
from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.latency.presets import resolve_profile
from looplab.tasks.references import parse_reference
from looplab.traces.importers import import_runs, write_runs
from looplab.traces.inputs import load_traces
from looplab.traces.io import read_trace
from looplab.traces.schema import ModelCallEvent, ToolCallEvent
from looplab.workloads.fit import calibrate
from looplab.workloads.model import WorkloadModel, load_workload
from looplab.workloads.sample import draw_shape
from looplab.workloads.shape import PLAN_TOOL, REFLECT_TOOL, TaskShape, shape_trace

PLAIN, PLANNING = "workload/browser-use-gpt-4o", "workload/browser-use-gpt-4o-planning"
RECORDS = Path(__file__).resolve().parents[1] / "fixtures" / "browser-records"


def _model(name: str) -> WorkloadModel:
    reference = parse_reference(name)
    assert reference is not None
    return load_workload(reference.path)


def _per_action(shape: TaskShape, profile: str, tool_scale: float = 1.0) -> float:
    """Predicted task time per action of `shape` at `profile` (virtual re-timing)."""
    trace = shape_trace(shape.scaled(tool_scale=tool_scale))
    events = retime_events(trace.events, profile_model_timing(resolve_profile(profile)), "t")
    return events[-1].end / shape.actions


def test_planning_variant_plays_the_plain_actions_plus_its_calls() -> None:
    """`draws_as`: the planning workload's actor calls are the plain workload's actions
    (tools, action and observation times, visible tokens), each between a planner and a
    reflection call, with hidden reasoning added."""
    plain, planning = _model(PLAIN), _model(PLANNING)
    for seed in range(3):
        a, b = draw_shape(plain, seed), draw_shape(planning, seed)
        acts = [s for s in b.steps if s.role == "act"]
        assert [s.role for s in b.steps] == ["plan", "act", "reflect"] * len(a.steps)
        assert [(s.output_tokens, s.tools) for s in acts] == [
            (s.output_tokens, s.tools) for s in a.steps
        ]
        assert all(s.reasoning_tokens == 0 for s in a.steps)
        assert all((s.reasoning_tokens or 0) > 0 for s in b.steps)
        assert all(t.wait_s > 0 for s in a.steps for t in s.tools)
        assert b.steps[-1].tools == [] and b.steps[-2].tools[-1].name != PLAN_TOOL


def test_later_actions_take_longer_by_their_position_factor() -> None:
    """Position factors multiply an action's tool and observation time by its band's
    factor (no other draw changes): the records' later steps are slower."""
    model = _model(PLAIN)
    factors = model.parameters.position_factors
    assert factors is not None and factors.factors[0] < 1 < factors.factors[-1]
    flat = model.model_copy(
        update={"parameters": model.parameters.model_copy(update={"position_factors": None})}
    )
    shape, base = draw_shape(model, 2), draw_shape(flat, 2)
    assert len(shape.steps) >= 10
    for index, (step, plain) in enumerate(zip(shape.steps, base.steps, strict=True)):
        scale = factors.factor(index)
        assert step.tool_s == pytest.approx(plain.tool_s * scale)
        assert step.output_tokens == plain.output_tokens


def test_screenshot_tokens_are_never_served_from_cache() -> None:
    """Every call prefills at least the newest screenshot (1,105 GPT-4o tokens)."""
    shape = draw_shape(_model(PLANNING), 4)
    for step in shape.steps[1:]:
        assert step.prompt_tokens is not None and step.cached_tokens is not None
        assert step.prompt_tokens - step.cached_tokens >= 1105


def test_planning_is_75_to_94_percent_of_model_time_at_80() -> None:
    """The planner and reflection sizes give OSWorld-Human's 75-94% of model time at
    slow-80 (median over draws, virtual re-timing)."""
    model, timing = _model(PLANNING), profile_model_timing(resolve_profile("slow-80"))
    shares = []
    for seed in range(20):
        shape = draw_shape(model, seed)
        calls = [
            e
            for e in retime_events(shape_trace(shape).events, timing, "t")
            if isinstance(e, ModelCallEvent)
        ]
        planning = sum(c.end - c.start for c in calls if shape.steps[c.step or 0].role != "act")
        shares.append(planning / sum(c.end - c.start for c in calls))
    assert 0.75 <= statistics.median(shares) <= 0.94


def test_calibrate_fits_a_workload_from_imported_browser_records(tmp_path: Path) -> None:
    """`looplab calibrate` takes imported browser-agent records: steps, tokens and the
    browser's (estimated) time are fitted, and the model draws a playable shape."""
    for name in (
        "open-operator-evals/results_no_screenshot.json",
        "browser-use/agent_history.json",
        "agentlab/steps_info.jsonl",
        "osworld/traj.jsonl",
    ):
        _, runs = import_runs("auto", RECORDS / name)
        write_runs(runs, tmp_path / "traces")
    fit = calibrate(load_traces([tmp_path / "traces"]), "browsers").model
    p = fit.parameters
    assert p.steps.distribution is not None and p.steps.provenance.observations == 4
    assert p.tool_s.provenance.status == "estimated"
    assert set(p.tool_names.weights) >= {"click_element", "fill", "computer"}
    assert draw_shape(fit, 0).steps


def _run(tmp_path: Path) -> list[Path]:
    config = {
        "name": "cu",
        "backends": [
            {"name": "slow-80", "profile": "slow-80"},
            {"name": "fast-750", "profile": "fast-750"},
        ],
        "tasks": [PLAIN, PLANNING],
        "workload": {"clock": "virtual", "tool_scale": 0.02, "concurrency": 4},
        "concurrency": 4,
        "output_dir": str(tmp_path / "out"),
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    asyncio.run(runner.run())
    return sorted((tmp_path / "out" / "traces").glob("*.jsonl"))


# the synthetic tools do real work in a real sandbox, whose time joins the virtual clock's:
# beside six workers one run read 6.85 s per action for 6.51 s predicted (5.1%)
@pytest.mark.timing
def test_workloads_run_live_on_the_virtual_clock_at_80_and_750(tmp_path: Path) -> None:
    """Both workloads play through the real loop (synthetic tools with observation waits,
    planner and reflection calls): time per action at each rate is what the virtual
    re-timing of the drawn shape predicts, and the planning workload at 80 tok/s waits
    several times longer per action than at 750."""
    per_action: dict[tuple[str, str], float] = {}
    for path in _run(tmp_path):
        trace = read_trace(path)
        assert trace.end is not None and trace.end.success
        cell = trace.header.cell
        assert cell.task is not None and cell.backend is not None and cell.seed is not None
        task, backend = cell.task, cell.backend
        shape = draw_shape(_model(task), cell.seed)
        live = trace.end.end / shape.actions
        predicted = _per_action(shape, backend, tool_scale=0.02)
        assert live == pytest.approx(predicted, rel=0.05, abs=0.3), path.name
        names = [e.name for e in trace.events if isinstance(e, ToolCallEvent)]
        assert (PLAN_TOOL in names and REFLECT_TOOL in names) == (task == PLANNING)
        per_action[(task, backend)] = live
    assert per_action[(PLANNING, "slow-80")] > 2.5 * per_action[(PLANNING, "fast-750")]
    assert per_action[(PLANNING, "slow-80")] > 2 * per_action[(PLAIN, "slow-80")]
