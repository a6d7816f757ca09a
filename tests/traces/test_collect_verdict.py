"""`looplab collect`: a run's verdict and task id from its spans (issue 44), and OSWorld's
`result.txt` verdict on import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from looplab.traces.collect.runs import draft_run
from looplab.traces.collect.spans import STATUS_ERROR, STATUS_OK, Span
from looplab.traces.importers.build import build_run
from looplab.traces.importers.osworld import import_osworld


def _spans(
    root: dict[str, Any], status: int = 0, resource: dict[str, Any] | None = None
) -> list[Span]:
    """An agent span around one chat span, as an instrumented agent sends them."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a", **root}
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "small-fast"}
    return [
        Span("t1", "s1", None, "invoke_agent a", 100.0, 103.0, agent, dict(resource or {}),
             status_code=status),
        Span("t1", "s2", "s1", "chat", 100.5, 101.0, chat, dict(resource or {})),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("root", "status", "solved"),
    [
        ({"looplab.success": True}, 0, True),
        ({"looplab.success": False}, STATUS_OK, False),
        ({}, STATUS_ERROR, False),
        ({}, STATUS_OK, True),
        ({}, 0, None),
    ],
)
def test_collect_reads_the_verdict(root: dict[str, Any], status: int, solved: bool | None) -> None:
    """`looplab.success` on the agent span wins; else its status (ERROR failed, OK solved,
    UNSET unknown); the trace names the span as the verdict's source and the request model."""
    run = build_run(draft_run("t1", _spans(root, status)))
    end = run.events[-1]
    assert getattr(end, "success", "?") is solved
    assert getattr(end, "verdict_by", "?") == ("span" if solved is not None else None)
    assert run.header.model == "small-fast"
    assert run.header.identity is not None and run.header.identity.model == "small-fast"


def test_collect_reads_the_task_from_a_span_or_the_resource() -> None:
    """`looplab.task` on the agent span, else on the resource
    (`OTEL_RESOURCE_ATTRIBUTES=looplab.task=...`); without it the task is unknown."""
    assert draft_run("t1", _spans({"looplab.task": "fix-1"})).task == "fix-1"
    assert draft_run("t1", _spans({}, resource={"looplab.task": "fix-2"})).task == "fix-2"
    assert draft_run("t1", _spans({})).task is None


@pytest.mark.parametrize(("score", "solved"), [("1.0", True), ("0", False), ("0.5", None)])
def test_osworld_keeps_the_runners_score(tmp_path: Path, score: str, solved: bool | None) -> None:
    """OSWorld's `result.txt` beside `traj.jsonl`: 1 solved, 0 failed, partial unknown."""
    rows = [
        {"step_num": 1, "action_timestamp": "20260101@120000", "action": "click", "response": "r"},
        {"step_num": 2, "action_timestamp": "20260101@120005", "action": "done", "done": True},
    ]
    (tmp_path / "traj.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "result.txt").write_text(score + "\n")
    (run,) = import_osworld(tmp_path / "traj.jsonl")
    end = run.events[-1]
    assert getattr(end, "success", "?") is solved
    assert getattr(end, "verdict_by", "?") == ("harness" if solved is not None else None)
