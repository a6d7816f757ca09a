"""Trace files: exact round trip, torn lines, refusals, and secret scrubbing."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from looplab.errors import TraceError
from looplab.traces.inputs import load_traces
from looplab.traces.io import TraceWriter, read_trace, write_trace
from looplab.traces.schema import (
    Attempt,
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    SandboxOpEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)
from looplab.traces.scrub import REDACTED, Scrubber

HEADER = TraceHeader(run_id="r1", created=datetime(2026, 11, 30, 6, 0, tzinfo=UTC), task="t")


def _events() -> list[TraceEvent]:
    return [
        RunStartEvent(run_id="r1", start=0.0, end=0.0, task="t"),
        ModelCallEvent(
            run_id="r1", step=0, start=0.0, end=1.234567891, sent=0.000123, first_token=0.31,
            last_token=1.2, prompt_tokens=1000, cached_tokens=900, completion_tokens=214,
            reasoning_tokens=12, finish_reason="tool_calls",
            message={"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
            attempts=[Attempt(start=0.0, end=0.1, error="HTTP 429", status=429, wait_s=0.5)],
            estimated={"ttft_s": "because"},
        ),
        ToolCallEvent(run_id="r1", step=0, start=1.3, end=2.5, name="run_tests", arguments="{}",
                      ok=True, output="PASSED: 3 passed", output_chars=16),
        SandboxOpEvent(run_id="r1", step=0, start=1.31, end=2.49, op="exec", detail="pytest"),
        StepEvent(run_id="r1", step=0, start=0.0, end=2.5, model_s=1.23, tool_s=1.2,
                  overhead_s=0.07),
        RunEndEvent(run_id="r1", start=0.0, end=2.5, end_reason="finish", success=True, steps=1),
    ]  # fmt: skip


def test_round_trip_is_exact(tmp_path: Path) -> None:
    """Every event and float comes back exactly as written."""
    path = tmp_path / "r1.jsonl"
    write_trace(path, HEADER, _events(), Scrubber(environ={}))
    trace = read_trace(path)
    assert trace.header == HEADER
    assert trace.events == _events()
    assert trace.complete


def test_killed_run_is_incomplete_and_torn_line_dropped(tmp_path: Path) -> None:
    """A trace without run_end is incomplete; a torn last line is ignored."""
    path = tmp_path / "r1.jsonl"
    writer = TraceWriter(path, HEADER, Scrubber(environ={}))
    for event in _events()[:3]:
        writer.write(event)
    writer.close()
    with path.open("a") as handle:
        handle.write('{"kind": "step", "run_id": "r1", "sta')
    trace = read_trace(path)
    assert not trace.complete
    assert len(trace.events) == 3


def test_refusals_name_the_problem(tmp_path: Path) -> None:
    """Other formats, corrupt middle lines and double writers are refused clearly."""
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1"}) + "\n")
    with pytest.raises(TraceError, match="looplab import"):
        read_trace(other)
    path = tmp_path / "r1.jsonl"
    write_trace(path, HEADER, _events(), Scrubber(environ={}))
    lines = path.read_text().splitlines()
    lines[2] = '{"kind": "model_call", "run_id": "r1"}'
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match="line 3"):
        read_trace(path)
    with pytest.raises(TraceError, match="already exists"):
        TraceWriter(path, HEADER)


def test_a_new_trace_appears_with_its_header(tmp_path: Path) -> None:
    """The file appears already holding its header (no empty trace), no temporary remains."""
    path = tmp_path / "traces" / "r1.jsonl"
    with TraceWriter(path, HEADER, Scrubber(environ={})) as writer:
        assert read_trace(path).header.run_id == HEADER.run_id
        assert not read_trace(path).complete
        writer.write_all(_events())
    assert read_trace(path).complete
    assert sorted(p.name for p in path.parent.iterdir()) == ["r1.jsonl"]
    with pytest.raises(TraceError, match="already exists"):
        TraceWriter(path, HEADER)
    assert sorted(p.name for p in path.parent.iterdir()) == ["r1.jsonl"]


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    """API keys (from the environment and by shape) and auth headers are redacted."""
    secret = "live-key-0123456789abcdef"
    scrubber = Scrubber(patterns=[r"corp-[0-9]{6}"], environ={"MY_API_KEY": secret})
    events = _events()
    events[2] = events[2].model_copy(
        update={
            "arguments": json.dumps({"cmd": f"curl -H 'Authorization: Bearer {secret}' x"}),
            "output": "token sk-proj-abcdefghijklmnop1234 and corp-123456 "
            "and gsk_abcdefghijklmnopq",
        }
    )
    header = HEADER.model_copy(update={"backend": {"base_url": "http://x", "api_key": "abc"}})
    path = tmp_path / "r1.jsonl"
    write_trace(path, header, events, scrubber)
    text = path.read_text()
    for leaked in (secret, "sk-proj-abcdefghijklmnop1234", "corp-123456", "gsk_abcdefghijklmnopq"):
        assert leaked not in text
    assert text.count(REDACTED) >= 5
    assert read_trace(path).header.backend["api_key"] == REDACTED


def test_published_json_schema_is_current() -> None:
    """docs/trace-schema.json matches the schema (regenerate: looplab schema -o docs/...)."""
    from looplab.traces.jsonschema import trace_json_schema

    published = Path(__file__).resolve().parents[2] / "docs" / "trace-schema.json"
    assert json.loads(published.read_text()) == json.loads(json.dumps(trace_json_schema()))


def test_published_schema_validates_every_line_and_refuses_garbage(tmp_path: Path) -> None:
    """A generic 2020-12 validator accepts every line of a real trace and refuses junk."""
    from jsonschema import Draft202012Validator

    published = Path(__file__).resolve().parents[2] / "docs" / "trace-schema.json"
    schema = json.loads(published.read_text())
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    path = tmp_path / "t.jsonl"
    write_trace(path, HEADER, _events())
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 1 + len(_events())
    assert [list(validator.iter_errors(line)) for line in lines] == [[]] * len(lines)
    assert not validator.is_valid({"garbage": True})
    assert not validator.is_valid({**lines[1], "kind": "no_such_event"})


def test_schema_branches_on_kind_and_names_the_field() -> None:
    """An invalid event is checked against its own kind's definition (the missing or bad
    field named), an unknown kind lists the kinds, a line without kind is a header."""
    from looplab.traces.jsonschema import trace_line_errors

    assert trace_line_errors({"kind": "tool_call", "run_id": "r", "start": 0, "end": 1}) == [
        "(root): 'name' is a required property"
    ]
    bad_start = trace_line_errors(
        {"kind": "step", "run_id": "r", "start": "soon", "end": 1, "model_s": 0, "tool_s": 0}
    )
    assert any(error.startswith("start: 'soon'") for error in bad_start), bad_start
    (unknown,) = trace_line_errors({"kind": "tool_cal", "run_id": "r", "start": 0, "end": 1})
    assert unknown.startswith("kind: 'tool_cal' is not one of") and "'tool_call'" in unknown
    assert trace_line_errors({"trace_format": "looplab-1", "run_id": "r"}) == [
        "(root): 'created' is a required property"
    ]


def test_gzip_traces_read_and_damage_is_named(tmp_path: Path) -> None:
    """`*.jsonl.gz` reads like the plain file; a cut-off gzip is a TraceError, and a
    directory listing finds compressed traces too."""
    plain = tmp_path / "t.jsonl"
    write_trace(plain, HEADER, _events())
    packed = tmp_path / "traces" / "t.jsonl.gz"
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_trace(packed).events == read_trace(plain).events
    assert [t.path for t in load_traces([packed.parent])] == [packed]
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(packed.read_bytes()[:40])
    with pytest.raises(TraceError, match="cut-off or damaged gzip"):
        read_trace(broken)


def test_run_events_follow_the_events_list() -> None:
    """`Trace.run_events` files each run's events by kind; appending an event, or assigning
    a new list of the same length, is seen at the next call (never a stale index)."""
    from tests.analysis.subrun_traces import fan

    trace = fan(2)
    top, sub = trace.run_events(None), trace.run_events("s0")
    assert len(sub.model_calls) == 2 and all(c.subrun == "s0" for c in sub.model_calls)
    assert [e for e in trace.events if e.subrun is None] == top.events
    assert trace.run_events("nobody").events == []
    trace.events.append(sub.model_calls[0].model_copy(update={"subrun": "s1"}))
    assert len(trace.run_events("s1").model_calls) == 3
    trace.events = [e.model_copy(update={"subrun": "s0"}) for e in trace.events]
    assert trace.run_events("s1").events == [] and trace.run_events(None).events == []
