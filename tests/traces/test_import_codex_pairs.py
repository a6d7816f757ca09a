"""The Codex rollout importer pairs function calls with their outputs by `call_id` and keeps
each response's own token counts (`token_count.info.last_token_usage`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from looplab.traces.importers.codex import import_codex


def _line(at: str, kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": f"2026-12-01T10:00:{at}Z", "type": kind, "payload": payload})


def _usage(inp: int, cached: int, out: int, total_in: int) -> dict[str, object]:
    last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out}
    total = {"input_tokens": total_in, "cached_input_tokens": 0, "output_tokens": 0}
    return {"type": "token_count", "info": {"last_token_usage": last, "total_token_usage": total}}


def test_parallel_calls_pair_by_call_id_and_tokens_stay_per_response(tmp_path: Path) -> None:
    """Two calls whose outputs come back in the other order: each tool spans its own call
    record -> its own output record; each response keeps its last_token_usage, not the
    cumulative totals."""
    call = {"type": "function_call", "name": "shell", "arguments": "{}"}
    rollout = tmp_path / "rollout-2026-12-01T10-00-00-x.jsonl"
    lines = [
        _line("00.000", "session_meta", {"id": "s1", "cli_version": "0.154.0", "cwd": "/w"}),
        _line("00.100", "turn_context", {"turn_id": "t1", "model": "gpt-5.1-codex"}),
        _line("00.200", "event_msg", {"type": "user_message", "message": "go"}),
        _line("02.000", "response_item", {**call, "call_id": "call_a"}),
        _line("02.100", "response_item", {**call, "call_id": "call_b"}),
        _line("02.200", "event_msg", _usage(1000, 200, 50, 1000)),
        _line(
            "03.100",
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_b",
                "output": "Process exited with code 0",
            },
        ),
        _line(
            "07.000",
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_a",
                "output": "Process exited with code 1",
            },
        ),
        _line("09.000", "response_item", {"type": "message", "role": "assistant", "content": []}),
        _line("09.100", "event_msg", _usage(1300, 1000, 20, 2300)),
    ]
    rollout.write_text("\n".join(lines) + "\n")
    (run,) = import_codex(rollout)
    tools = {t.call_id: t for t in run.events if t.kind == "tool_call"}
    assert tools["call_a"].duration_s == pytest.approx(5.0)
    assert tools["call_b"].duration_s == pytest.approx(1.0)
    assert (tools["call_a"].exit_code, tools["call_b"].exit_code) == (1, 0)
    calls = [e for e in run.events if e.kind == "model_call"]
    assert [(c.prompt_tokens, c.cached_tokens, c.completion_tokens) for c in calls] == [
        (1000, 200, 50),
        (1300, 1000, 20),
    ]
    assert run.report.concurrent_calls == 3  # both tools, and the response still streaming
