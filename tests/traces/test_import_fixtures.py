"""Each importer on the real file its harness wrote (see tests/fixtures/PROVENANCE.md)."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime
from pathlib import Path

import pytest

from looplab.traces.importers import ImportedRun
from looplab.traces.importers.inspect import import_inspect
from looplab.traces.importers.mini_swe_agent import import_mini_swe_agent
from looplab.traces.importers.openhands import import_openhands
from looplab.traces.importers.tracelab import import_tracelab
from looplab.traces.schema import ModelCallEvent, SandboxOpEvent, StepEvent, ToolCallEvent


def _models(run: ImportedRun) -> list[ModelCallEvent]:
    return [e for e in run.events if isinstance(e, ModelCallEvent)]


def _tools(run: ImportedRun) -> list[ToolCallEvent]:
    return [e for e in run.events if isinstance(e, ToolCallEvent)]


def _steps(run: ImportedRun) -> list[StepEvent]:
    return [e for e in run.events if isinstance(e, StepEvent)]


def test_mini_swe_agent_fixture_counts_and_tokens(external: Path) -> None:
    """The 41-call DeepSeek run: 41 steps, model and tool calls, and its usage totals."""
    [run] = import_mini_swe_agent(external / "mini-swe-agent" / "sqlfluff__sqlfluff-2419.traj.json")
    r = run.report
    assert (r.steps, r.model_calls, r.tool_calls) == (41, 41, 41)
    assert (r.prompt_tokens, r.cached_tokens, r.completion_tokens) == (332906, 322176, 5196)
    assert r.end_reason == "Submitted"
    assert run.header.source == "import:mini-swe-agent" and run.header.clock == "recorded"
    assert run.header.task == "sqlfluff__sqlfluff-2419"


def test_mini_swe_agent_model_time_from_consecutive_timestamps(external: Path) -> None:
    """Model time = previous message stamp -> assistant stamp, marked estimated; medians match."""
    [run] = import_mini_swe_agent(external / "mini-swe-agent" / "sqlfluff__sqlfluff-2419.traj.json")
    models, tools = _models(run), _tools(run)
    # step 1: tool result stamped 1775890959.089275, next assistant 1775890963.2628732
    assert models[1].duration_s == pytest.approx(1775890963.2628732 - 1775890959.089275)
    assert "previous message" in models[1].estimated["start"]
    assert "response.created" in models[0].estimated["start"]
    assert models[0].duration_s == pytest.approx(1775890958.6460054 - 1775890955)
    # background.md: median 3.9 s LLM vs 0.31 s execution per step
    assert statistics.median(m.duration_s for m in models) == pytest.approx(3.89, abs=0.01)
    timed = [t.duration_s for t in tools[:-1]]
    assert statistics.median(timed) == pytest.approx(0.31, abs=0.01)
    assert tools[0].exit_code == 0 and tools[0].ok is True and tools[0].name == "bash"


def test_mini_swe_agent_marks_absent_fields(external: Path) -> None:
    """No streaming times in mini-swe-agent; the exit message has no stamp for the last tool."""
    [run] = import_mini_swe_agent(external / "mini-swe-agent" / "sqlfluff__sqlfluff-2419.traj.json")
    absent = set(run.header.absent)
    assert {"model_call.sent", "model_call.first_token", "model_call.last_token"} <= absent
    assert "run_end.success" in absent
    last = _tools(run)[-1]
    assert last.duration_s == 0.0 and last.estimated["end"].startswith("not in the source")
    assert all(m.sent is None and m.first_token is None for m in _models(run))
    assert any("1 of 41 tool calls have no times" in n for n in run.header.notes)


def test_openhands_fixture_three_instances(external: Path) -> None:
    """Three instances: steps per response, tool calls, usage from metrics.token_usages."""
    runs = import_openhands(external / "openhands" / "multi_swe_bench_output.jsonl")
    assert [r.header.run_id.rsplit(".", 1)[0] for r in runs] == [
        "ponylang__ponyc-4595",
        "ponylang__ponyc-4593",
        "ponylang__ponyc-4588",
    ]
    assert [(r.report.steps, r.report.tool_calls) for r in runs] == [(23, 23), (34, 33), (50, 49)]
    assert (runs[0].report.prompt_tokens, runs[0].report.completion_tokens) == (565158, 2558)
    assert [r.report.end_reason for r in runs] == ["finish", "finish", "step_limit"]
    assert "maximum iteration" in (runs[2].events[-1].error or "")  # type: ignore[union-attr]
    assert runs[0].header.agent == "CodeActAgent"


def test_openhands_model_time_is_measured_latency(external: Path) -> None:
    """Model time = metrics.response_latencies (measured); only its placement is estimated."""
    [first, second, _] = import_openhands(external / "openhands" / "multi_swe_bench_output.jsonl")
    call = _models(first)[0]
    assert call.duration_s == pytest.approx(3.0569519996643066)
    assert set(call.estimated) == {"start"}
    assert "model_s" not in _steps(first)[0].estimated
    tool = _tools(first)[0]
    assert tool.duration_s == pytest.approx(58.441272 - 57.821635)
    assert tool.estimated == {} and tool.exit_code == 0 and tool.call_id == "toolu_01"
    # the rejected malformed call is still a (measured) model call without tool calls
    assert any("rejected" in n for n in second.header.notes)


def test_openhands_zoneless_timestamps_shifted_by_created(external: Path) -> None:
    """Naive local timestamps are moved to UTC by the offset to model_response.created."""
    [run, *_] = import_openhands(external / "openhands" / "multi_swe_bench_output.jsonl")
    tool = _tools(run)[0]
    assert tool.wall_time == datetime(2025, 4, 30, 8, 32, 57, 821635, tzinfo=UTC)
    assert any("-8.00 h" in n for n in run.header.notes)


def test_inspect_fixture_measured_times_and_verdict(external: Path) -> None:
    """Inspect browser sample: 5 model calls, 4 tools, 10 sandbox execs, the `C` score."""
    [run] = import_inspect(external / "inspect" / "browser.json")
    r = run.report
    assert (r.steps, r.model_calls, r.tool_calls, r.sandbox_ops) == (5, 5, 4, 10)
    assert (r.prompt_tokens, r.cached_tokens, r.completion_tokens) == (15235, 9088, 281)
    assert r.success is True and r.end_reason == "finish"
    call = _models(run)[0]
    assert call.duration_s == pytest.approx(1.234979, abs=1e-5)
    assert call.sent == pytest.approx(call.end - 1.1010224996134639)
    assert "working_time" in call.estimated["sent"] and "start" not in call.estimated
    assert _tools(run)[0].duration_s == pytest.approx(4.317574, abs=1e-5)
    assert all(isinstance(e, SandboxOpEvent) for e in run.events if e.kind == "sandbox")
    assert run.events[0].sandbox_start_s == pytest.approx(1.455145, abs=1e-5)  # type: ignore[union-attr]


def test_tracelab_fixture_sessions(external: Path) -> None:
    """Two sessions (Claude Code, Codex): rounds as steps, token accounting, content absent."""
    claude, codex = import_tracelab(external / "tracelab" / "round_trace.jsonl")
    assert (claude.report.steps, claude.report.tool_calls) == (10, 9)
    assert (codex.report.steps, codex.report.tool_calls) == (9, 10)
    assert (claude.report.prompt_tokens, claude.report.cached_tokens) == (418193, 394068)
    assert codex.report.completion_tokens == 1912
    assert {"tool_call.arguments", "tool_call.output", "run_start.prompt"} <= set(
        claude.header.absent
    )
    assert claude.report.end_reason == "unknown" and "run_end.end_reason" in claude.header.absent


def test_tracelab_round_timing(external: Path) -> None:
    """Round 0: request at the user message, end at the last output; tool = wall latency."""
    claude, _ = import_tracelab(external / "tracelab" / "round_trace.jsonl")
    call = _models(claude)[0]
    assert call.duration_s == pytest.approx(11.496, abs=1e-3)  # 05:40:20.151 -> 05:40:31.647
    assert call.first_token == pytest.approx(9.269, abs=1e-3)
    assert "upper bound" in call.estimated["first_token"]
    bash, search = _tools(claude)[:2]
    assert (bash.duration_s, search.duration_s) == (pytest.approx(0.860), pytest.approx(19.291))
    assert bash.arguments == "" and bash.output is None and bash.output_chars == 231
