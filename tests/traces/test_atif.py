"""ATIF (Harbor RFC 0001): export of traces, import of trajectories, the round trip."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from looplab.traces.exporters.atif import ATIF_VERSION, export_atif
from looplab.traces.importers import import_runs, write_runs
from looplab.traces.io import Trace, read_trace

SOURCES = [
    ("openhands/multi_swe_bench_output.jsonl", 0),
    ("mini-swe-agent/sqlfluff__sqlfluff-2419.traj.json", 0),
]
AGENT_ONLY = ("model_name", "reasoning_content", "tool_calls", "metrics", "reasoning_effort")


def _original(external: Path, name: str, index: int, tmp_path: Path) -> Trace:
    _, runs = import_runs("auto", external / name)
    return read_trace(write_runs([runs[index]], tmp_path / "original")[0])


def _check_rfc(document: dict[str, Any]) -> None:
    """The RFC's structural rules: required root fields, step ids 1..n, sources, agent-only
    fields on agent steps only, observation results naming a tool call of their step."""
    assert document["schema_version"] == ATIF_VERSION
    assert isinstance(document["agent"]["name"], str)
    assert isinstance(document["agent"]["version"], str)
    steps = document["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    for step in steps:
        assert step["source"] in ("system", "user", "agent")
        assert isinstance(step["message"], str)
        if step["source"] != "agent":
            assert not any(key in step for key in AGENT_ONLY)
        ids = {c["tool_call_id"] for c in step.get("tool_calls") or []}
        assert all(isinstance(c["arguments"], dict) for c in step.get("tool_calls") or [])
        for result in (step.get("observation") or {}).get("results", []):
            assert result["source_call_id"] in ids
    totals = document["final_metrics"]
    calls = [s.get("metrics", {}) for s in steps]
    assert totals["total_prompt_tokens"] == sum(m.get("prompt_tokens", 0) for m in calls)
    assert totals["total_steps"] == len(steps)


@pytest.mark.parametrize(("name", "index"), SOURCES)
def test_round_trip_keeps_steps_tokens_and_times(
    external: Path, tmp_path: Path, name: str, index: int
) -> None:
    """trace -> ATIF -> `import auto` -> trace: same model calls (tokens, message), tool calls
    (names, ids, arguments, outputs) and every time (run axis and wall clock) to 10 us."""
    original = _original(external, name, index, tmp_path)
    document = export_atif(original)
    _check_rfc(document)
    path = tmp_path / "run.atif.json"
    path.write_text(json.dumps(document))
    used, runs = import_runs("auto", path)
    assert used == "atif" and len(runs) == 1
    back = read_trace(write_runs(runs, tmp_path / "back")[0])
    a_calls, b_calls = original.model_calls(), back.model_calls()
    assert len(b_calls) == len(a_calls) > 3
    assert len(back.steps()) == len(original.steps())
    a0, b0 = a_calls[0].start, b_calls[0].start
    for a, b in zip(a_calls, b_calls, strict=True):
        for field in ("prompt_tokens", "cached_tokens", "completion_tokens", "reasoning_tokens"):
            assert getattr(b, field) == getattr(a, field), field
        for field in ("start", "end", "sent", "first_token", "last_token"):
            x, y = getattr(a, field), getattr(b, field)
            assert (x is None) == (y is None), field
            if x is not None:
                assert y - b0 == pytest.approx(x - a0, abs=1e-5), field
        assert a.wall_time is not None and b.wall_time is not None
        assert abs((b.wall_time - a.wall_time).total_seconds()) < 1e-5
        assert (b.message or {}).get("content") == (a.message or {}).get("content")
        assert b.model == a.model and b.estimated == a.estimated
    a_tools, b_tools = original.tool_calls(), back.tool_calls()
    assert len(b_tools) == len(a_tools) > 0
    for x, y in zip(a_tools, b_tools, strict=True):
        assert (y.name, y.call_id, y.arguments, y.output) == (
            x.name,
            x.call_id,
            x.arguments,
            x.output,
        )
        assert y.start - b0 == pytest.approx(x.start - a0, abs=1e-5)
        assert y.end - b0 == pytest.approx(x.end - a0, abs=1e-5)
        assert y.exit_code == x.exit_code and y.estimated == x.estimated
    assert back.end is not None and original.end is not None
    assert back.end.end_reason == original.end.end_reason


def test_foreign_trajectory_imports_from_step_timestamps(tmp_path: Path) -> None:
    """An ATIF file from another producer: a model call spans the previous step's timestamp
    to its own, its tools sit at its timestamp (no tool times in ATIF); tokens, tool results
    and the prompt kept."""
    document = {
        "schema_version": "ATIF-v1.4",
        "session_id": "s-1",
        "agent": {"name": "terminus-2", "version": "2.0", "model_name": "gpt-x"},
        "steps": [
            {
                "step_id": 1,
                "timestamp": "2026-01-02T10:00:00Z",
                "source": "user",
                "message": "Fix the bug",
            },
            {
                "step_id": 2,
                "timestamp": "2026-01-02T10:00:03.5Z",
                "source": "agent",
                "message": "Looking.",
                "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": "ls"}}
                ],
                "observation": {"results": [{"source_call_id": "c1", "content": "a.py"}]},
                "metrics": {"prompt_tokens": 900, "completion_tokens": 40, "cached_tokens": 512},
            },
            {
                "step_id": 3,
                "timestamp": "2026-01-02T10:00:05Z",
                "source": "agent",
                "message": "Done.",
                "metrics": {"prompt_tokens": 960, "completion_tokens": 8},
            },
        ],
    }
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(document))
    used, (run,) = import_runs("auto", path)
    trace = Trace(header=run.header, events=run.events)
    first, second = trace.model_calls()
    assert used == "atif" and run.header.agent == "terminus-2 2.0"
    assert (first.end - first.start, second.end - second.start) == pytest.approx((3.5, 1.5))
    assert (first.prompt_tokens, first.cached_tokens, first.completion_tokens) == (900, 512, 40)
    (tool,) = trace.tool_calls()
    assert (tool.name, tool.output, json.loads(tool.arguments)) == ("bash", "a.py", {"cmd": "ls"})
    assert tool.start == pytest.approx(first.end) and tool.end == pytest.approx(first.end)
    assert "tool_call.duration" in run.header.absent
    assert "start" in first.estimated and "end" in tool.estimated
    assert run.events[0].prompt == "Fix the bug"  # type: ignore[union-attr]


def test_export_command_and_harbor_validation(external: Path, tmp_path: Path) -> None:
    """`looplab export atif` writes JSON that `import atif` reads; with LOOPLAB_HARBOR_PYTHON
    (an interpreter with `harbor` installed) Harbor's own Trajectory model accepts it."""
    from typer.testing import CliRunner

    from looplab.cli.app import app

    original = tmp_path / "t"
    _, runs = import_runs("auto", external / "openhands" / "multi_swe_bench_output.jsonl")
    write_runs(runs[:1], original)
    out = tmp_path / "run.atif.json"
    done = CliRunner().invoke(
        app, ["--no-log-file", "export", "atif", str(original), "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    _check_rfc(json.loads(out.read_text()))
    again = CliRunner().invoke(
        app, ["--no-log-file", "import", "atif", str(out), "-o", str(tmp_path / "b")]
    )
    assert again.exit_code == 0, again.output
    harbor = os.environ.get("LOOPLAB_HARBOR_PYTHON")
    if not harbor:
        pytest.skip("LOOPLAB_HARBOR_PYTHON not set (harbor needs Python >= 3.12): RFC checks only")
    check = (
        "import json,sys; from harbor.models.trajectories import Trajectory; "
        "t = Trajectory.model_validate(json.load(open(sys.argv[1]))); print(len(t.steps))"
    )
    validated = subprocess.run(
        [harbor, "-c", check, str(out)], capture_output=True, text=True, timeout=120
    )
    assert validated.returncode == 0, validated.stderr[-2000:]
    assert int(validated.stdout) == len(json.loads(out.read_text())["steps"])
