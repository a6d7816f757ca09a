"""Browser-agent records: browser-use history, open-operator-evals results, AgentLab step
info and summaries, OSWorld traj.jsonl (synthetic fixtures, tests/fixtures/browser-records/
PROVENANCE.md): detection, what is measured, what is estimated and how."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from looplab.errors import TraceError
from looplab.traces.importers import ImportedRun, detect_format, import_runs
from looplab.traces.importers.browser import estimate_model_s
from looplab.traces.schema import ModelCallEvent, StepEvent, ToolCallEvent

RECORDS = Path(__file__).resolve().parents[1] / "fixtures" / "browser-records"

DETECTED = {
    "open-operator-evals/results_no_screenshot.json": "open-operator-evals",
    "browser-use/agent_history.json": "browser-use",
    "browser-use/pentest-agent.agent_history.json": "browser-use",
    "agentlab/steps_info.jsonl": "agentlab",
    "agentlab/summary_info.json": "agentlab",
    "osworld/traj.jsonl": "osworld",
}


def _one(name: str) -> ImportedRun:
    _, [run] = import_runs("auto", RECORDS / name)
    return run


def _of(run: ImportedRun, kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in run.events if isinstance(e, kind)]


@pytest.mark.parametrize(("name", "fmt"), sorted(DETECTED.items()))
def test_auto_detects_each_browser_record(name: str, fmt: str) -> None:
    """`import auto` names each browser-agent format from the file's head."""
    assert detect_format(RECORDS / name) == fmt


def test_open_operator_evals_steps_measured_split_estimated_from_tokens() -> None:
    """Each step keeps its measured duration; the model call is the token rule, the rest
    is the browser's, named by the reply's first action; tokens are as recorded."""
    run = _one("open-operator-evals/results_no_screenshot.json")
    steps, models = _of(run, StepEvent), _of(run, ModelCallEvent)
    assert [round(s.end - s.start, 3) for s in steps] == [6.5, 8.8, 11.6, 4.1]
    assert [m.prompt_tokens for m in models] == [2900, 4300, 4700, 5100]
    assert models[1].end - models[1].start == pytest.approx(estimate_model_s(4300, 85))
    assert "tokens" in models[1].estimated["end"]
    assert [t.name for t in _of(run, ToolCallEvent)] == [
        "go_to_url",
        "input_text",
        "click_element",
        "done",
    ]
    assert run.report.success is True and "wall_time" in run.report.absent
    assert run.events[-1].end == pytest.approx(33.0)  # the task's time beyond its steps is kept


def test_open_operator_evals_run_without_steps_is_refused_by_name(tmp_path: Path) -> None:
    """A result whose harness failed before its first step says so, naming the file."""
    data = json.loads((RECORDS / "open-operator-evals/results_no_screenshot.json").read_text())
    data.update(steps=[], duration_in_s=-1.0)
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TraceError, match="no steps recorded"):
        import_runs("open-operator-evals", path)


def test_browser_use_history_times_measured_tokens_estimated() -> None:
    """Step times come from metadata (epoch s); input tokens are browser-use's own estimate,
    output tokens the reply's characters / 4; a failed action is not ok; done -> success."""
    run = _one("browser-use/agent_history.json")
    steps, models = _of(run, StepEvent), _of(run, ModelCallEvent)
    tools = _of(run, ToolCallEvent)
    assert [round(s.end - s.start, 2) for s in steps] == [7.1, 8.7, 13.7, 3.9]
    assert [m.prompt_tokens for m in models] == [2890, 4350, 4810, 5230]
    assert "estimate" in models[0].estimated["prompt_tokens"]
    assert "characters" in models[0].estimated["completion_tokens"]
    assert [t.ok for t in tools] == [True, True, False, True]
    assert (
        run.header.wall_time
        if hasattr(run.header, "wall_time")
        else run.header.created.year == 2025
    )
    assert (run.report.end_reason, run.report.success) == ("done", True)


def test_agentlab_step_info_measures_agent_and_env_step() -> None:
    """StepInfo k's agent call and StepInfo k+1's env step are one step, both measured;
    the env step's parts (page-load wait ...) are summed in the notes."""
    run = _one("agentlab/steps_info.jsonl")
    models, tools = _of(run, ModelCallEvent), _of(run, ToolCallEvent)
    assert [round(m.end - m.start, 2) for m in models] == [3.1, 2.9, 2.4]
    assert [round(t.end - t.start, 2) for t in tools] == [2.6, 3.3, 1.6]
    assert [t.name for t in tools] == ["goto", "fill", "click"]
    assert not models[0].estimated and not tools[0].estimated
    assert run.report.model_timing.startswith("measured")
    assert any("wait_for_page_loading 3.90" in n for n in run.report.notes)
    assert (run.report.end_reason, run.report.success) == ("terminated", True)


def test_agentlab_summary_gives_equal_estimated_shares() -> None:
    """summary_info.json: n_steps steps, each an equal, estimated share of the totals."""
    run = _one("agentlab/summary_info.json")
    models = _of(run, ModelCallEvent)
    assert len(models) == 3 and run.report.model_s == pytest.approx(8.4)
    assert run.report.tool_s == pytest.approx(9.9)
    assert all("equal share" in m.estimated["end"] for m in models)
    assert run.report.model_timing.startswith("estimated")


def test_osworld_stamps_group_actions_by_step() -> None:
    """Actions sharing a step_num are one step's tools; each call ends at its action stamp
    (1 s) and lasts the token rule; the last actions' end is absent."""
    run = _one("osworld/traj.jsonl")
    models, tools = _of(run, ModelCallEvent), _of(run, ToolCallEvent)
    assert len(models) == 4 and [t.step for t in tools] == [0, 1, 1, 2, 3]
    assert models[1].end - models[0].end == pytest.approx(13.0)
    assert models[1].end - models[1].start == pytest.approx(
        estimate_model_s(None, models[1].completion_tokens)
    )
    assert "tool_call.end" in run.report.absent and "model_call.prompt_tokens" in run.report.absent


def test_osworld_bad_stamp_is_named(tmp_path: Path) -> None:
    """A stamp that is not %Y%m%d@%H%M%S is refused with the field named."""
    path = tmp_path / "traj.jsonl"
    path.write_text(json.dumps({"step_num": 1, "action_timestamp": "yesterday", "action": "x"}))
    with pytest.raises(TraceError, match="action_timestamp"):
        import_runs("osworld", path)


def test_real_browser_use_history_with_initial_actions() -> None:
    """A real browser-use history (MIT, PROVENANCE.md): step 0 is the initial actions
    (a tool step, no model call); a step without model output keeps its measured time."""
    run = _one("browser-use/pentest-agent.agent_history.json")
    models, tools = _of(run, ModelCallEvent), _of(run, ToolCallEvent)
    assert run.report.steps == 2 and len(models) == 1
    assert [t.name for t in tools] == ["go_to_url", "browser"]
    assert [t.ok for t in tools] == [False, False]  # a navigation timeout, then a shutdown
    assert _of(run, StepEvent)[-1].end - models[0].start == pytest.approx(9.907, abs=1e-3)
    assert any("initial actions" in n for n in run.report.notes)
