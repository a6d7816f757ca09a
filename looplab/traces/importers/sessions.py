"""What the Claude Code and Codex session importers share: rounds in TraceLab's shape.

A raw session log is cut into LLM rounds the way TraceLab does it (its round trace is
derived from these same logs): a round's inputs are the user messages and tool results
since the previous round, its outputs the content blocks (reasoning, text, tool calls)
and usage report of one model response. Each round becomes a TraceLab round row and then
a step through `tracelab.round_step`, so raw sessions and TraceLab's round traces are
timed by one definition. Unlike TraceLab's sanitized rows, raw logs keep the content, so
tool arguments, outputs and (for Codex) exit codes are filled in afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from looplab.traces.importers.drafts import RunDraft
from looplab.traces.importers.source import safe_run_id
from looplab.traces.importers.tracelab import add_rounds

__all__ = ["Round", "SessionInfo", "ToolContent", "session_draft"]

MODEL_TIMING = (
    "estimated: last input event (tool result / user message) -> last output event "
    "(content blocks are logged as they complete; TraceLab's round definition)"
)


@dataclass
class ToolContent:
    """What a raw log keeps about one tool call beyond its timing."""

    arguments: str = ""
    output: str | None = None
    exit_code: int | None = None


@dataclass
class Round:
    """One LLM round being assembled from session records."""

    round_id: str
    model: str | None = None
    turn_id: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    """TraceLab timing events: `{"event_type", "timestamp"}`, inputs first."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """TraceLab tool rows: `tool_call_id`, `tool_name`, `emitted_at`, `result_at`, ..."""
    tokens: dict[str, Any] = field(default_factory=dict)
    """TraceLab token fields: `input_tokens_total`, `prefix_tokens`, `output_tokens`, ..."""

    def output(self, kind: str, timestamp: Any) -> None:
        """Record an output event (`reasoning`, `text`, `tool_call`, `usage_report`)."""
        if timestamp is not None:
            self.events.append({"event_type": kind, "timestamp": timestamp})

    def row(self) -> dict[str, Any]:
        """The round as a TraceLab round-trace row."""
        return {
            "round_id": self.round_id,
            "turn_id": self.turn_id,
            "model": self.model,
            "timing_events": self.events,
            "tools": self.tools,
            **self.tokens,
        }


@dataclass
class SessionInfo:
    """A session's identity and what it says about itself."""

    fmt: str
    session_id: str
    agent: str
    task: str | None = None
    model: str | None = None
    prompt: str | None = None
    skipped: list[str] = field(default_factory=list)
    """Notes on records left out (sidechains, unknown types)."""


def session_draft(
    path: Path, info: SessionInfo, rounds: list[Round], content: dict[str, ToolContent]
) -> RunDraft:
    """The run of one session: a step per round, tool content filled in by call id."""
    draft = RunDraft(
        fmt=info.fmt,
        run_id=safe_run_id(info.session_id),
        source_path=path,
        source_key=info.session_id,
        task=info.task or info.session_id,
        agent=info.agent,
        model=info.model or next((r.model for r in rounds if r.model), None),
        prompt=info.prompt,
    )
    add_rounds(draft, [(f"round {i}", r.row()) for i, r in enumerate(rounds)], path)
    for step in draft.steps:
        for tool in step.tools:
            found = content.get(tool.call_id or "")
            if found is not None:
                tool.arguments = found.arguments
                tool.output = found.output
                tool.exit_code = found.exit_code
                if found.exit_code is not None:
                    tool.ok = found.exit_code == 0
    draft.model_timing = MODEL_TIMING
    draft.tool_timing = "measured: tool call record timestamp -> tool result record timestamp"
    draft.notes.extend(info.skipped)
    if not any(t.exit_code is not None for s in draft.steps for t in s.tools):
        draft.absent.add("tool_call.exit_code")
    draft.notes.append("model_call.message not imported (the log has it; timing is the point)")
    return draft
