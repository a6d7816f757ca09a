"""The corpus formats: SWE-agent, Claude Code and Codex sessions, OpenHands event lists,
Inspect references; detection of every fixture (see tests/fixtures/PROVENANCE.md)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from looplab.traces.importers import ImportedRun, detect_format, import_runs, write_runs
from looplab.traces.importers.claude_code import import_claude_code
from looplab.traces.importers.codex import import_codex
from looplab.traces.importers.inspect import import_inspect
from looplab.traces.importers.openhands import import_openhands
from looplab.traces.importers.swe_agent import import_swe_agent
from looplab.traces.importers.tracelab import import_tracelab
from looplab.traces.schema import ModelCallEvent, ToolCallEvent


def _models(run: ImportedRun) -> list[ModelCallEvent]:
    return [e for e in run.events if isinstance(e, ModelCallEvent)]


def _tools(run: ImportedRun) -> list[ToolCallEvent]:
    return [e for e in run.events if isinstance(e, ToolCallEvent)]


DETECTED = {
    "external-traces/mini-swe-agent/sqlfluff__sqlfluff-2419.traj.json": "mini-swe-agent",
    "external-traces/openhands/multi_swe_bench_output.jsonl": "openhands",
    "external-traces/inspect/browser.json": "inspect",
    "external-traces/tracelab/round_trace.jsonl": "tracelab",
    "corpus/swe-agent/function_calling_simple.traj": "swe-agent",
    "corpus/swe-agent/ctf--misc--networking_1.traj": "swe-agent",
    "corpus/tracelab/claude-session.trace.json": "claude-code",
    "corpus/tracelab/codex-session.trace.json": "codex",
    "corpus/tracelab/sanitized-round_trace.expanded.json": "tracelab",
    "corpus/openhands/basic_interactions.json": "openhands",
    "corpus/openhands/wrong_initial_state.json": "openhands",
    "corpus/inspect/log_message_deduplication.eval": "inspect",
    "corpus/inspect/log_images_tc.json": "inspect",
}


@pytest.mark.parametrize(("name", "fmt"), sorted(DETECTED.items()))
def test_auto_detects_every_fixture_from_its_head(fixtures: Path, name: str, fmt: str) -> None:
    """`import auto` names each real file's format from its first 64 KiB."""
    assert detect_format(fixtures / name) == fmt


def test_swe_agent_demonstration_has_steps_and_no_times(fixtures: Path) -> None:
    """A hand-written .traj: one step per action, tool = the command; times and tokens absent."""
    [run] = import_swe_agent(fixtures / "corpus/swe-agent/ctf--misc--networking_1.traj")
    assert (run.report.steps, run.report.tool_calls) == (4, 4)
    assert [t.name for t in _tools(run)] == ["tshark", "tshark", "tshark", "submit"]
    assert run.report.model_s is None and run.report.tool_s is None
    assert run.report.end_reason == "submitted"
    assert {"model_call.completion_tokens", "tool_call.end", "wall_time"} <= set(run.header.absent)
    assert _tools(run)[0].output and _tools(run)[0].output_chars == len(_tools(run)[0].output)


def test_swe_agent_history_only_trajectory(fixtures: Path) -> None:
    """Function-calling demonstrations have only `history`: actions and their observations."""
    [run] = import_swe_agent(fixtures / "corpus/swe-agent/function_calling_simple.traj")
    tools = _tools(run)
    assert [t.name for t in tools] == ["find_file", "open", "edit", "python", "submit"]
    assert tools[3].arguments == "python tests/missing_colon.py"
    assert (tools[3].output or "").startswith("8.2")


def test_swe_agent_execution_time_and_model_stats(tmp_path: Path) -> None:
    """1.x: execution_time is measured tool time laid end to end; run token totals are
    spread over the calls, marked estimated; the model name comes from replay_config."""
    steps = [
        {"thought": "look", "action": "ls -la\n", "observation": "a b", "execution_time": 1.5},
        {"thought": "run", "action": "pytest", "observation": "ok", "execution_time": 4.0},
    ]
    data = {
        "trajectory": steps,
        "history": [],
        "info": {
            "exit_status": "submitted",
            "model_stats": {"tokens_sent": 3000, "tokens_received": 400, "api_calls": 2},
        },
        "replay_config": json.dumps({"agent": {"model": {"name": "gpt-4o"}}}),
    }
    path = tmp_path / "django__django-1.traj"
    path.write_text(json.dumps(data))
    [run] = import_swe_agent(path)
    first, second = _tools(run)
    assert (first.name, first.start, first.end) == ("ls", 0.0, 1.5)
    assert (second.start, second.end) == (1.5, 5.5)
    assert run.report.tool_s == 5.5 and run.report.model_s is None
    assert [m.completion_tokens for m in _models(run)] == [200, 200]
    assert "spread evenly" in _models(run)[0].estimated["completion_tokens"]
    assert run.header.model == "gpt-4o" and run.header.task == "django__django-1"


def _per_step(run: ImportedRun) -> list[tuple[float, int | None, int | None]]:
    return [(round(m.duration_s, 3), m.prompt_tokens, m.completion_tokens) for m in _models(run)]


def test_claude_code_session_matches_tracelab_rounds(fixtures: Path) -> None:
    """The raw Claude Code session times exactly as TraceLab's round trace of it, and keeps
    the content TraceLab's sanitizer removed (tool arguments, outputs, the prompt)."""
    [raw] = import_claude_code(fixtures / "corpus/tracelab/claude-session.trace.json")
    rounds, _ = import_tracelab(fixtures / "external-traces/tracelab/round_trace.jsonl")
    assert _per_step(raw) == _per_step(rounds)
    assert [round(t.duration_s, 3) for t in _tools(raw)] == [
        round(t.duration_s, 3) for t in _tools(rounds)
    ]
    assert raw.header.agent == "Claude Code 2.1.157" and raw.header.model == "claude-opus-4-8"
    bash = _tools(raw)[0]
    assert bash.name == "Bash" and "ls -la" in bash.arguments and bash.ok is True
    assert bash.output and "tool_call.arguments" not in raw.header.absent
    assert raw.events[0].prompt.startswith("i want to write a script")  # type: ignore[union-attr]


def test_codex_session_matches_tracelab_rounds_and_reads_exit_codes(fixtures: Path) -> None:
    """The raw Codex rollout times as TraceLab's rounds; exit codes come from the outputs."""
    [raw] = import_codex(fixtures / "corpus/tracelab/codex-session.trace.json")
    _, rounds = import_tracelab(fixtures / "external-traces/tracelab/round_trace.jsonl")
    assert _per_step(raw) == _per_step(rounds)
    assert [m.reasoning_tokens for m in _models(raw)] == [
        m.reasoning_tokens for m in _models(rounds)
    ]
    codes = [t.exit_code for t in _tools(raw)]
    assert codes[:2] == [0, 1] and _tools(raw)[1].ok is False
    assert raw.header.agent == "Codex 0.114.0" and raw.header.model == "gpt-5.4"


def test_tracelab_readable_rendering_equals_jsonl(fixtures: Path) -> None:
    """TraceLab's `===== round` rendering imports exactly like the JSON lines it renders."""
    expanded = import_tracelab(fixtures / "corpus/tracelab/sanitized-round_trace.expanded.json")
    lines = import_tracelab(fixtures / "external-traces/tracelab/round_trace.jsonl")
    assert [_per_step(r) for r in expanded] == [_per_step(r) for r in lines]


def test_openhands_runtime_event_lists(fixtures: Path) -> None:
    """Runtime trajectories (plain event lists): agent messages are model calls without
    tools; a tool runs from its action to its observation (`cause`)."""
    [chat] = import_openhands(fixtures / "corpus/openhands/basic_interactions.json")
    assert (chat.report.steps, chat.report.tool_calls) == (3, 1)
    assert chat.report.end_reason == "finish"
    [run] = import_openhands(fixtures / "corpus/openhands/wrong_initial_state.json")
    tools = _tools(run)
    assert [t.name for t in tools] == [
        "str_replace_editor",
        "execute_bash",
        "str_replace_editor",
        "finish",
    ]
    assert tools[1].exit_code == 0 and tools[1].duration_s == pytest.approx(0.649, abs=1e-3)
    assert tools[1].estimated == {}


def test_inspect_message_pool_and_eval_zip(fixtures: Path, tmp_path: Path) -> None:
    """A de-duplicated .eval: model inputs are `input_refs` into `message_pool`; the first
    call's user message is found through them when the sample has no `input`."""
    source = fixtures / "corpus/inspect/log_message_deduplication.eval"
    [run] = import_inspect(source)
    assert (run.report.steps, run.report.tool_calls) == (6, 5)
    assert run.report.tool_s == pytest.approx(0.3388, abs=1e-4)
    copy = tmp_path / "no-input.eval"
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(copy, "w") as target:
        for name in original.namelist():
            data = original.read(name)
            if name.startswith("samples/"):
                sample: dict[str, Any] = json.loads(data)
                del sample["input"]
                data = json.dumps(sample).encode()
            target.writestr(name, data)
    [again] = import_inspect(copy)
    assert again.events[0].prompt == "Guess the number"  # type: ignore[union-attr]


def test_inspect_transcript_content_refs_and_end_stamped_model(fixtures: Path) -> None:
    """0.3.41 logs: `tc://` refs resolve to `transcript.content`; a model event without an
    end was stamped when it ended, so the call began at the previous event (12.6 s)."""
    [run] = import_inspect(fixtures / "corpus/inspect/log_images_tc.json")
    [call] = _models(run)
    assert call.duration_s == pytest.approx(12.614, abs=1e-3)
    assert "stamped it when it ended" in call.estimated["start"]
    text = json.dumps([e.model_dump(mode="json") for e in run.events])
    assert "tc://" not in text and "hedgehog" in text


def test_same_instance_from_two_sources_both_survive(external: Path, tmp_path: Path) -> None:
    """Two different files with one instance id give two traces; importing a file again
    rewrites its own traces (idempotent), never another run's."""
    first = external / "mini-swe-agent/sqlfluff__sqlfluff-2419.traj.json"
    other = tmp_path / "src" / "sqlfluff__sqlfluff-2419.traj.json"
    other.parent.mkdir()
    other.write_text(first.read_text().replace('"Submitted"', '"LimitsExceeded"', 1))
    out = tmp_path / "out"
    for source in (first, other, first, other):
        write_runs(import_runs("auto", source)[1], out)
    names = sorted(p.name for p in out.glob("*.jsonl"))
    assert len(names) == 2 and all(n.startswith("sqlfluff__sqlfluff-2419.") for n in names)


def test_a_file_holding_another_run_is_never_replaced(external: Path, tmp_path: Path) -> None:
    """A trace file of another run under the new trace's name is kept; the new one gets -2."""
    source = external / "mini-swe-agent/sqlfluff__sqlfluff-2419.traj.json"
    out = tmp_path / "out"
    [target] = write_runs(import_runs("auto", source)[1], out)
    run_id = target.name.removesuffix(".jsonl")
    target.write_text(target.read_text().replace(run_id, "someone-else"))
    [again] = write_runs(import_runs("auto", source)[1], out)
    assert again.name == f"{run_id}-2.jsonl"
    assert "someone-else" in target.read_text()
