"""Older and alternative shapes of each format, as small synthetic files."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from looplab.traces.importers.inspect import import_inspect
from looplab.traces.importers.mini_swe_agent import import_mini_swe_agent
from looplab.traces.importers.openhands import import_openhands
from looplab.traces.schema import ModelCallEvent, ToolCallEvent


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _kinds(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def test_mini_v1_text_actions_without_timestamps(tmp_path: Path) -> None:
    """mini-swe-agent-1: bash blocks, template observations, format errors; times absent."""
    response = {"usage": {"prompt_tokens": 100, "completion_tokens": 10}, "created": 1700000000}
    traj = {
        "trajectory_format": "mini-swe-agent-1",
        "info": {"exit_status": "Submitted", "mini_version": "1.14.2"},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "```bash\nls\n```", "extra": {"response": response}},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>a.py</output>"},
            {"role": "assistant", "content": "```bash\na\n```\n```bash\nb\n```"},
            {"role": "user", "content": "Please always provide EXACTLY ONE action"},
            {"role": "assistant", "content": "```bash\npytest\n```"},
            {"role": "user", "content": "<returncode>1</returncode>\n<output>FAILED</output>"},
        ],
    }
    [run] = import_mini_swe_agent(_write(tmp_path / "x.traj.json", traj))
    tools = _kinds(run.events, ToolCallEvent)
    assert run.report.steps == 3 and [t.arguments for t in tools] == ["ls", "pytest"]
    assert [t.exit_code for t in tools] == [0, 1] and tools[1].ok is False
    assert run.report.model_s is None and run.report.tool_s is None
    assert {"model_call.end", "tool_call.start"} <= set(run.header.absent)
    assert run.report.prompt_tokens == 100 and run.report.end_reason == "Submitted"
    assert run.report.model_timing.startswith("absent")


def test_mini_plain_message_list_with_iso_timestamps(tmp_path: Path) -> None:
    """A bare message list with top-level ISO stamps: times derived from consecutive stamps."""
    messages = [
        {"role": "user", "content": "go", "timestamp": "2026-01-01T00:00:00Z"},
        {"role": "assistant", "content": "```bash\nls\n```", "timestamp": "2026-01-01T00:00:02Z"},
        {
            "role": "user",
            "content": "<returncode>0</returncode>",
            "timestamp": "2026-01-01T00:00:03Z",
        },
    ]
    [run] = import_mini_swe_agent(_write(tmp_path / "m.json", messages))
    [model] = _kinds(run.events, ModelCallEvent)
    [tool] = _kinds(run.events, ToolCallEvent)
    assert (model.duration_s, tool.duration_s) == (2.0, 1.0)
    assert run.report.prompt_tokens is None and "model_call.prompt_tokens" in run.header.absent


def test_mini_v2_text_actions_skip_format_errors(tmp_path: Path) -> None:
    """v2 text-based model: extra.actions; a user message with interrupt_type is no result."""
    traj = {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {},
        "messages": [
            {"role": "user", "content": "task", "extra": {"timestamp": 10.0}},
            {
                "role": "assistant",
                "content": "x",
                "extra": {"actions": [{"command": "ls"}], "timestamp": 12.0},
            },
            {
                "role": "user",
                "content": "bad format",
                "extra": {"interrupt_type": "FormatError", "timestamp": 12.5},
            },
            {
                "role": "user",
                "content": "out",
                "extra": {"returncode": 2, "raw_output": "out", "timestamp": 13.0},
            },
            {"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded"}},
        ],
    }
    [run] = import_mini_swe_agent(_write(tmp_path / "v2.traj.json", traj))
    [tool] = _kinds(run.events, ToolCallEvent)
    assert tool.exit_code == 2 and tool.output == "out"
    assert run.report.end_reason == "LimitsExceeded"


def _oh_action(i: int, ts: str, command: str) -> dict[str, Any]:
    return {
        "id": i,
        "timestamp": ts,
        "source": "agent",
        "action": "run",
        "args": {"command": command, "thought": "t"},
    }


def _oh_obs(i: int, cause: int, ts: str, code: int) -> dict[str, Any]:
    return {
        "id": i,
        "timestamp": ts,
        "source": "agent",
        "observation": "run",
        "cause": cause,
        "content": "ok",
        "extras": {"command": "x", "exit_code": code},
    }


def test_openhands_legacy_history_pairs_without_metrics(tmp_path: Path) -> None:
    """Pre-0.9 eval output: history as [action, observation] pairs, no metrics."""
    record = {
        "instance_id": "demo-1",
        "instruction": "do it",
        "metadata": {"agent_class": "CodeActAgent", "model_name": "gpt-4"},
        "history": [
            [
                {
                    "id": 1,
                    "timestamp": "2024-06-01T10:00:00",
                    "source": "user",
                    "action": "message",
                    "args": {"content": "do it"},
                },
                {},
            ],
            [
                _oh_action(2, "2024-06-01T10:00:04", "ls"),
                _oh_obs(3, 2, "2024-06-01T10:00:05.500", 0),
            ],
            [
                _oh_action(4, "2024-06-01T10:00:09", "pytest"),
                _oh_obs(5, 4, "2024-06-01T10:00:19", 1),
            ],
        ],
        "error": None,
    }
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(record) + "\n")
    [run] = import_openhands(path)
    models = _kinds(run.events, ModelCallEvent)
    tools = _kinds(run.events, ToolCallEvent)
    assert [m.duration_s for m in models] == [4.0, 3.5]
    assert all("previous event" in m.estimated["start"] for m in models)
    assert [t.duration_s for t in tools] == [1.5, 10.0] and [t.exit_code for t in tools] == [0, 1]
    assert run.report.model_timing.startswith("estimated")
    assert any("read as UTC" in n for n in run.header.notes)


def test_openhands_trajectory_event_list(tmp_path: Path) -> None:
    """A saved trajectory: a plain JSON list of events is one run."""
    events = [
        {
            "id": 0,
            "timestamp": "2025-01-01T00:00:00",
            "source": "user",
            "action": "message",
            "args": {},
        },
        _oh_action(1, "2025-01-01T00:00:03", "ls"),
        _oh_obs(2, 1, "2025-01-01T00:00:04", 0),
        {
            "id": 3,
            "timestamp": "2025-01-01T00:00:06",
            "source": "agent",
            "action": "finish",
            "args": {},
        },
    ]
    [run] = import_openhands(_write(tmp_path / "trajectory.json", events))
    assert run.report.steps == 2 and run.report.end_reason == "finish"
    assert run.header.run_id.startswith("trajectory.")


def _inspect_log(events: list[dict[str, Any]], key: str = "events") -> dict[str, Any]:
    sample: dict[str, Any] = {
        "id": 7,
        "epoch": 1,
        "input": "q",
        "scores": {"match": {"value": "I"}},
    }
    sample["transcript" if key == "transcript" else "events"] = (
        {"events": events} if key == "transcript" else events
    )
    return {"version": 2, "eval": {"task": "t", "model": "openai/m"}, "samples": [sample]}


_OLD_EVENTS = [
    {
        "event": "model",
        "timestamp": "2024-09-01T10:00:00+00:00",
        "model": "openai/m",
        "output": {
            "time": 2.5,
            "usage": {"input_tokens": 50, "output_tokens": 5},
            "choices": [
                {"message": {"role": "assistant", "content": ""}, "stop_reason": "tool_calls"}
            ],
        },
    },
    {
        "event": "tool",
        "timestamp": "2024-09-01T10:00:03+00:00",
        "function": "bash",
        "id": "c1",
        "arguments": {"cmd": "ls"},
        "result": "a",
    },
    {
        "event": "model",
        "timestamp": "2024-09-01T10:00:07+00:00",
        "model": "openai/m",
        "output": {"usage": {"input_tokens": 60, "output_tokens": 6}},
    },
    {"event": "score", "timestamp": "2024-09-01T10:00:09+00:00"},
]


@pytest.mark.parametrize("key", ["events", "transcript"])
def test_inspect_older_events_without_completed(tmp_path: Path, key: str) -> None:
    """Older logs: output.time (measured), or no end at all: stamped when the event ended."""
    [run] = import_inspect(_write(tmp_path / "old.json", _inspect_log(_OLD_EVENTS, key)))
    first, second = _kinds(run.events, ModelCallEvent)
    [tool] = _kinds(run.events, ToolCallEvent)
    assert first.duration_s == 2.5 and first.estimated["end"] == "timestamp plus output.time"
    # the tool (stamped 10:00:03) began when the first call ended (10:00:02.5)
    assert tool.duration_s == 0.5 and "previous event" in tool.estimated["start"]
    # the second call (stamped 10:00:07) began at the tool's stamp (10:00:03)
    assert second.duration_s == 4.0 and "stamped it when it ended" in second.estimated["start"]
    assert second.end == 7.0 and "end" not in second.estimated
    assert run.report.success is False and run.report.prompt_tokens == 110


def test_inspect_eval_zip(tmp_path: Path) -> None:
    """The zipped .eval format: header.json plus samples/<id>_epoch_<n>.json."""
    log = _inspect_log(_OLD_EVENTS)
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "header.json", json.dumps({k: v for k, v in log.items() if k != "samples"})
        )
        archive.writestr("samples/7_epoch_1.json", json.dumps(log["samples"][0]))
        archive.writestr("samples/7_epoch_2.json", json.dumps({**log["samples"][0], "epoch": 2}))
    runs = import_inspect(path)
    assert [r.header.run_id.rsplit(".", 1)[0] for r in runs] == ["t-7-epoch1", "t-7-epoch2"]
    assert runs[0].report.model_calls == 2


def test_inspect_messages_only_sample(tmp_path: Path) -> None:
    """The oldest logs have no events: steps from messages, every time absent."""
    log = _inspect_log([])
    log["samples"][0]["messages"] = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c", "function": "bash", "arguments": {}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "out"},
        {"role": "assistant", "content": "done"},
    ]
    [run] = import_inspect(_write(tmp_path / "m.json", log))
    assert (run.report.steps, run.report.tool_calls) == (2, 1)
    assert run.report.model_s is None and "model_call.start" in run.header.absent
    assert _kinds(run.events, ToolCallEvent)[0].output == "out"
