"""The Cline, Harbor and Gemini CLI headless-JSON importers on their golden files
(tests/fixtures/telemetry/, PROVENANCE.md there): what is read, what is estimated, and the
way to a bottom line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.cli.app import app
from looplab.report.build import build_report
from looplab.traces.importers import ImportedRun, write_runs
from looplab.traces.importers.registry import detect_format, import_runs
from looplab.traces.inputs import load_traces
from looplab.traces.io import read_trace
from looplab.traces.schema import ModelCallEvent, SandboxOpEvent, ToolCallEvent

from .conftest import FIXTURES

CLINE = FIXTURES / "telemetry" / "cline-task" / "ui_messages.json"
HARBOR = FIXTURES / "telemetry" / "harbor-trial" / "result.json"
GEMINI = FIXTURES / "telemetry" / "gemini-cli-headless.json"


def _one(path: Path) -> ImportedRun:
    _, (run,) = import_runs("auto", path)
    return run


def _calls(run: ImportedRun) -> list[ModelCallEvent]:
    return [e for e in run.events if isinstance(e, ModelCallEvent)]


def _tools(run: ImportedRun) -> list[ToolCallEvent]:
    return [e for e in run.events if isinstance(e, ToolCallEvent)]


def test_both_are_detected_from_their_heads() -> None:
    """`import auto` names each format from the file's start."""
    assert [detect_format(p) for p in (CLINE, HARBOR, GEMINI)] == [
        "cline",
        "harbor",
        "gemini-cli-json",
    ]


def test_cline_requests_are_calls_with_estimated_ends() -> None:
    """Cline: one call per api_req_started (its start measured, its end and first token the
    response's messages, estimated); tokens by Anthropic's accounting; the model from
    task_metadata.json; tools end at the next request; no verdict."""
    run = _one(CLINE)
    calls = _calls(run)
    assert [round(c.duration_s, 3) for c in calls] == [3.8, 3.7, 5.7, 2.6]
    assert [(c.prompt_tokens, c.cached_tokens, c.completion_tokens) for c in calls][:2] == [
        (8212, 0, 310),
        (9108, 8200, 240),
    ]
    assert all("start of the response's last message" in c.estimated["end"] for c in calls)
    assert calls[0].ttft_s == pytest.approx(2.5) and "first_token" in calls[0].estimated
    assert [(t.name, round(t.duration_s, 3)) for t in _tools(run)] == [
        ("readFile", 0.6),
        ("execute_command", 12.2),
        ("editedExistingFile", 4.9),
    ]
    assert run.header.model == "claude-sonnet-4-5" and run.report.success is None
    assert run.report.end_reason == "completion_result"
    assert any("ESTIMATED" in n for n in run.header.notes)


def test_cline_without_metadata_says_the_model_is_absent(tmp_path: Path) -> None:
    """A ui_messages.json alone: the run imports and says the model is absent."""
    lone = tmp_path / "task" / "ui_messages.json"
    lone.parent.mkdir()
    shutil.copy(CLINE, lone)
    run = _one(lone)
    assert run.header.model is None and "model_call.model" in run.header.absent


def test_harbor_trial_phases_verdict_and_trajectory() -> None:
    """Harbor: the ATIF-v1.7 trajectory's 3 calls and 2 tools, the four phases as sandbox
    operations (measured), the verifier's reward as the verdict, the trial's model."""
    run = _one(HARBOR)
    ops = [e for e in run.events if isinstance(e, SandboxOpEvent)]
    assert [(o.op, round(o.end - o.start, 3)) for o in ops] == [
        ("env_setup", 14.2),
        ("agent_setup", 16.8),
        ("verifier", 8.5),
    ]
    assert [c.prompt_tokens for c in _calls(run)] == [4800, 5100, 5500]
    assert [t.call_id for t in _tools(run)] == ["call_1", "call_2"]
    assert (run.report.success, run.report.model, run.header.task) == (
        True,
        "gpt-5.1",
        "hello-world",
    )
    assert dict(run.report.rows())["verdict"] == "passed"
    assert run.header.agent == "terminus-2 2.0.0"


def test_harbor_reward_file_and_exception(tmp_path: Path) -> None:
    """No verifier_result: verifier/reward.txt gives the verdict (0 = failed); an exception
    is the run's error and end reason; no trajectory: the phases alone."""
    trial = tmp_path / "trial"
    shutil.copytree(HARBOR.parent, trial)
    shutil.rmtree(trial / "agent")
    data = json.loads((trial / "result.json").read_text())
    data["verifier_result"] = None
    data["exception_info"] = {
        "exception_type": "AgentTimeoutError",
        "exception_message": "agent timed out after 900 s",
        "exception_traceback": "",
        "occurred_at": data["finished_at"],
    }
    (trial / "result.json").write_text(json.dumps(data))
    (trial / "verifier" / "reward.txt").write_text("0\n")
    run = _one(trial / "result.json")
    assert run.report.success is False and run.report.end_reason == "AgentTimeoutError"
    assert "timed out" in (run.events[-1].error or "")
    assert run.report.model_calls == 0 and run.report.sandbox_ops == 3


def test_gemini_headless_totals_become_equal_shares() -> None:
    """Gemini CLI's JSON stats: 4 + 1 calls with equal shares of their model's latency and
    tokens (totals kept exactly), 3 tools dealt to the calls that did not answer; every
    call says it is estimated; no wall time."""
    run = _one(GEMINI)
    calls = _calls(run)
    assert [c.model for c in calls] == ["gemini-2.5-pro"] * 4 + ["gemini-2.5-flash-lite"]
    assert [round(c.duration_s, 3) for c in calls] == [4.6] * 4 + [0.3]
    assert sum(c.prompt_tokens or 0 for c in calls[:4]) == 31000
    assert sum(c.completion_tokens or 0 for c in calls[:4]) == 1500  # candidates + thoughts
    assert all("equal share" in c.estimated["prompt_tokens"] for c in calls)
    assert [(t.name, t.step) for t in _tools(run)] == [
        ("read_file", 0),
        ("read_file", 1),
        ("run_shell_command", 2),
    ]
    assert "wall_time" in run.header.absent and run.report.success is None


@pytest.mark.parametrize("source", [CLINE, HARBOR], ids=["cline", "harbor"])
def test_export_then_import_keeps_every_timing_and_token(source: Path, tmp_path: Path) -> None:
    """Written and read back, the run keeps every call's times and tokens."""
    run = _one(source)
    (path,) = write_runs([run], tmp_path)
    again = read_trace(path)
    keys = ["start", "end", "first_token", "prompt_tokens", "cached_tokens"]
    keys += ["completion_tokens"]
    assert [[getattr(c, k) for k in keys] for c in again.model_calls()] == [
        [getattr(c, k) for k in keys] for c in _calls(run)
    ]
    assert [(t.start, t.end) for t in again.tool_calls()] == [(t.start, t.end) for t in _tools(run)]


@pytest.mark.parametrize("source", [CLINE, HARBOR, GEMINI], ids=["cline", "harbor", "gemini"])
def test_import_replay_report(source: Path, tmp_path: Path) -> None:
    """`looplab import` prints the model and verdict; `looplab replay` at slow-80 ends later
    than at fast-750; `looplab report` takes the imported and the replayed runs, its bottom
    line written and Harbor's verdict counted as solved in every group."""
    runner = CliRunner()
    imported = tmp_path / "imported"
    done = runner.invoke(app, ["import", "auto", str(source), "-o", str(imported)])
    assert done.exit_code == 0, done.output
    model = {CLINE: "claude-sonnet-4-5", HARBOR: "gpt-5.1", GEMINI: "gemini-2.5-pro"}[source]
    assert model in done.output and "verdict" in done.output
    ends = {}
    for profile in ("slow-80", "fast-750"):
        out = tmp_path / profile
        args = ["replay", str(imported), "-p", profile, "--mode", "virtual", "-o", str(out)]
        replayed = runner.invoke(app, args)
        assert replayed.exit_code == 0, replayed.output
        (trace,) = load_traces([out])
        assert trace.end is not None
        ends[profile] = trace.end.end
    assert ends["slow-80"] > ends["fast-750"] > 0
    _, report = build_report([imported, tmp_path / "slow-80", tmp_path / "fast-750"])
    assert report.runs == 3 and report.sentence
    verdicts = [(g.solved, g.checked) for g in report.groups]
    assert verdicts == ([(1, 1)] * 3 if source == HARBOR else [(0, 0)] * 3)  # the verifier's
