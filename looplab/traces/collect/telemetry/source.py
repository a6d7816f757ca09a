"""The telemetry source protocol and what its drafts share.

A source is one CLI's OpenTelemetry events: a name, the event-name prefix and the
`service.name`s that mark its records, how records group into runs (`run_key`: a prompt
id, a session id), and how one group becomes a `RunDraft` (`draft`). The registry of
sources is `registry.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from looplab.traces.collect.logs import LogRecord
from looplab.traces.importers.drafts import RunDraft
from looplab.traces.importers.source import safe_run_id

__all__ = ["TelemetrySource", "new_draft"]


class TelemetrySource(Protocol):
    """One coding CLI's OpenTelemetry events."""

    name: str
    """The source's name (`claude-code`); collected runs' format is `otlp-<name>`."""
    prefix: str
    """The qualified event names' prefix (`claude_code.`)."""
    services: frozenset[str]
    """`service.name` values whose events are this source's even when unprefixed."""
    kept: frozenset[str]
    """The attributes `run_key` and `draft` read: a buffered event keeps only these (a
    tool's output, a prompt's text stay out of memory)."""

    def run_key(self, record: LogRecord) -> str | None:
        """The run this record belongs to (None: the record is not part of a run)."""
        ...

    def draft(self, key: str, records: list[LogRecord], part: int) -> RunDraft:
        """One run from the records of `key` (any order).

        Raises:
            BadValue: a value the trace format refuses.
        """
        ...


def new_draft(source: TelemetrySource, key: str, part: int, agent: str) -> RunDraft:
    """The draft of a collected run: `<agent>-<key prefix>`, its identity the source and key
    (a later part of the same key is another run, never replacing the first)."""
    draft = RunDraft(
        fmt=f"otlp-{source.name}",
        run_id=safe_run_id(agent, key[:12]),
        source_path=Path(f"otlp:{source.name}:{key}"),
        source_key=str(part),
        source_digest=f"{source.name}:{key}",
        agent=agent,
    )
    if part > 1:
        draft.notes.append(f"events that arrived after the run was written (part {part})")
    return draft
