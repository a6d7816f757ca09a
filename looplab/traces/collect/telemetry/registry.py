"""The registry of telemetry sources: source name -> `TelemetrySource`.

A CLI joins by one line in `SOURCES` (its module defines a small class with `name`,
`prefix`, `services`, `run_key` and `draft`). A record belongs to the first source whose
prefix starts its event name, else whose `service.name` is the record's resource's.
"""

from __future__ import annotations

from looplab.traces.collect.logs import LogRecord
from looplab.traces.collect.telemetry.claude_code import ClaudeCodeEvents
from looplab.traces.collect.telemetry.codex import CodexEvents
from looplab.traces.collect.telemetry.gemini_cli import GeminiCliEvents
from looplab.traces.collect.telemetry.source import TelemetrySource
from looplab.traces.importers.build import build_run
from looplab.traces.importers.imported import ImportedRun

__all__ = ["SOURCES", "build_events", "source_of"]


def _registry(*sources: TelemetrySource) -> dict[str, TelemetrySource]:
    return {source.name: source for source in sources}


SOURCES: dict[str, TelemetrySource] = _registry(
    ClaudeCodeEvents(),
    CodexEvents(),
    GeminiCliEvents(),
)
"""Source name -> source, in matching order."""


def source_of(record: LogRecord) -> TelemetrySource | None:
    """The source a record belongs to (None: no known CLI's event)."""
    for source in SOURCES.values():
        if record.name.startswith(source.prefix):
            return source
    service = record.resource.get("service.name")
    for source in SOURCES.values():
        if service in source.services:
            return source
    return None


def build_events(source: str, key: str, records: list[LogRecord], part: int = 1) -> ImportedRun:
    """The run of one key's events (its draft through the one trace builder).

    Raises:
        KeyError: an unknown source name.
        BadValue: a value the trace format refuses.
    """
    return build_run(SOURCES[source].draft(key, records, part))
