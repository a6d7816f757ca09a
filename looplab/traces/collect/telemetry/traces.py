"""The registry of span sources: CLIs whose traces need their own reading.

`draft_trace(trace_id, spans, part)` gives a finished trace to the first span source that
claims it (Claude Code's beta traces: spans named `claude_code.*`, whose roles are in
their names, and whose approval waits are taken out), else to the generic reader of the
GenAI / OpenInference / OpenLLMetry conventions (`collect/runs.py`). A source joins by one
line in `SPAN_SOURCES`.
"""

from __future__ import annotations

from typing import Protocol

from looplab.traces.collect.runs import draft_run
from looplab.traces.collect.spans import Span
from looplab.traces.collect.telemetry.claude_code_spans import ClaudeCodeSpans
from looplab.traces.importers.drafts import RunDraft

__all__ = ["SPAN_SOURCES", "SpanSource", "draft_trace"]


class SpanSource(Protocol):
    """One CLI's own span vocabulary."""

    name: str

    def claims(self, spans: list[Span]) -> bool:
        """True when these spans are this CLI's."""
        ...

    def draft(self, trace_id: str, spans: list[Span], part: int) -> RunDraft:
        """The trace's run."""
        ...


SPAN_SOURCES: dict[str, SpanSource] = {source.name: source for source in (ClaudeCodeSpans(),)}
"""Span source name -> source, in matching order."""


def draft_trace(trace_id: str, spans: list[Span], part: int = 1) -> RunDraft:
    """The run of one finished trace: a claiming span source's, else `draft_run`'s."""
    for source in SPAN_SOURCES.values():
        if source.claims(spans):
            return source.draft(trace_id, spans, part)
    return draft_run(trace_id, spans, part)
