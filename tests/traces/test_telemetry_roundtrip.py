"""Every golden source (the CLIs' events and beta traces, Cline, Harbor, Gemini's JSON
stats) imported, exported as ATIF (`looplab export atif`) and imported back keeps every
timing and token field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from looplab.traces.collect.logs import decode_logs
from looplab.traces.collect.spans import decode_request
from looplab.traces.collect.telemetry.events import EventCollector
from looplab.traces.collect.telemetry.registry import build_events
from looplab.traces.collect.telemetry.traces import draft_trace
from looplab.traces.exporters.atif import export_atif
from looplab.traces.importers import ImportedRun, write_runs
from looplab.traces.importers.atif import import_atif
from looplab.traces.importers.build import build_run
from looplab.traces.importers.registry import import_runs
from looplab.traces.io import read_trace
from looplab.traces.schema import ModelCallEvent, ToolCallEvent, TraceEvent

from .conftest import FIXTURES

GOLDEN = FIXTURES / "telemetry"


def _events(name: str) -> ImportedRun:
    collector = EventCollector(settle_s=0.0)
    collector.add(decode_logs((GOLDEN / name).read_bytes(), "application/json"))
    (group,) = collector.drain()
    return build_events(group.source, group.key, group.records)


def _spans(name: str) -> ImportedRun:
    decoded = decode_request((GOLDEN / name).read_bytes(), "application/json")
    return build_run(draft_trace(decoded.spans[0].trace_id, decoded.spans))


def _file(name: str) -> ImportedRun:
    _, (run,) = import_runs("auto", GOLDEN / name)
    return run


SOURCES: dict[str, Callable[[], ImportedRun]] = {
    "claude-code-events": lambda: _events("claude-code-events.json"),
    "claude-code-traces": lambda: _spans("claude-code-traces.json"),
    "codex-events": lambda: _events("codex-events.json"),
    "gemini-cli-events": lambda: _events("gemini-cli-events.json"),
    "cline": lambda: _file("cline-task/ui_messages.json"),
    "harbor": lambda: _file("harbor-trial/result.json"),
    "gemini-cli-json": lambda: _file("gemini-cli-headless.json"),
}

_CALL = ("start", "end", "sent", "first_token", "prompt_tokens", "cached_tokens")
_CALL += ("completion_tokens", "reasoning_tokens")


def _fields(events: list[TraceEvent]) -> tuple[list[tuple[object, ...]], list[tuple[float, ...]]]:
    """Every call's times and tokens and every tool's times, in time order (to 1 ms)."""

    def rounded(value: object) -> object:
        return round(value, 3) if isinstance(value, float) else value

    calls = sorted(
        tuple(rounded(getattr(e, k)) for k in _CALL)
        for e in events
        if isinstance(e, ModelCallEvent)
    )
    tools = sorted(
        (round(e.start, 3), round(e.end, 3)) for e in events if isinstance(e, ToolCallEvent)
    )
    return calls, tools


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_import_export_atif_import_keeps_times_and_tokens(source: str, tmp_path: Path) -> None:
    """import -> trace file -> export atif -> import atif: the same calls (times, sent,
    first token, prompt / cached / completion / reasoning tokens) and tool times."""
    run = SOURCES[source]()
    (path,) = write_runs([run], tmp_path)
    atif = tmp_path / "run.atif.json"
    atif.write_text(json.dumps(export_atif(read_trace(path))))
    (back,) = import_atif(atif)
    assert _fields(back.events) == _fields(run.events)
    assert back.header.model == run.header.model
    assert back.report.success == run.report.success  # the verdict (Harbor's reward)
