"""The coding CLIs' OpenTelemetry events (Claude Code, Codex, Gemini CLI) -> runs, from
the golden OTLP bodies in tests/fixtures/telemetry/ (PROVENANCE.md there)."""

from __future__ import annotations

import gzip
import json
import signal
from pathlib import Path

import httpx2
import pytest

from looplab.analysis.replay import replay_virtual
from looplab.latency.presets import resolve_profile
from looplab.report.build import build_report
from looplab.traces.collect.logs import LogRecord, decode_logs
from looplab.traces.collect.spans import decode_request
from looplab.traces.collect.telemetry.assemble import excise_waits
from looplab.traces.collect.telemetry.events import EventCollector
from looplab.traces.collect.telemetry.registry import build_events
from looplab.traces.collect.telemetry.traces import draft_trace
from looplab.traces.importers import ImportedRun, write_runs
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.io import read_trace
from looplab.traces.schema import ModelCallEvent, SubRunEvent, ToolCallEvent
from looplab.workloads.model import load_workload

from .conftest import FIXTURES
from .test_collect import CollectCli

GOLDEN = FIXTURES / "telemetry"
T0 = 1_796_119_200.0


def _records(name: str) -> list[LogRecord]:
    return decode_logs((GOLDEN / name).read_bytes(), "application/json")


def _runs(name: str) -> list[ImportedRun]:
    events = EventCollector(settle_s=0.0)
    events.add(_records(name))
    return [build_events(g.source, g.key, g.records, g.part) for g in events.drain()]


def _calls(run: ImportedRun) -> list[ModelCallEvent]:
    return [e for e in run.events if isinstance(e, ModelCallEvent)]


def _tools(run: ImportedRun) -> list[ToolCallEvent]:
    return [e for e in run.events if isinstance(e, ToolCallEvent)]


def _bottom_line(path: Path) -> tuple[float, float]:
    """The run's end at slow-80 and at fast-750 (virtual replay)."""
    trace = read_trace(path)
    slow = replay_virtual(trace, resolve_profile("slow-80", []))
    fast = replay_virtual(trace, resolve_profile("fast-750", []))
    assert slow.end is not None and fast.end is not None
    return slow.end.end, fast.end.end


def test_claude_code_events_make_one_run_per_prompt_with_subruns() -> None:
    """Claude Code: 3 main calls, the sub-agent's 2 calls and its Read in a sub-run, the
    auxiliary call in its own; tokens as Claude's accounting; fast mode in the header."""
    (run,) = _runs("claude-code-events.json")
    calls = _calls(run)
    main = [c for c in calls if c.subrun is None]
    assert [c.model for c in main] == ["claude-opus-4-6"] * 3
    assert [(c.prompt_tokens, c.cached_tokens, c.completion_tokens) for c in main] == [
        (10212, 9000, 350),
        (10220, 9000, 600),
        (10230, 9000, 420),
    ]
    assert [round(c.duration_s, 3) for c in main] == [3.5, 4.8, 5.5]
    subruns = {e.subrun: e for e in run.events if isinstance(e, SubRunEvent)}
    assert set(subruns) == {"agent-a1", "auxiliary"}
    assert subruns["agent-a1"].spawn_call_id == "toolu_2"  # the Task tool around it
    assert [t.name for t in _tools(run) if t.subrun == "agent-a1"] == ["Read"]
    assert run.header.model == "claude-opus-4-6" and run.report.model == "claude-opus-4-6"
    assert run.header.backend["speed"] == "fast"
    bash = next(t for t in _tools(run) if t.name == "Bash")
    assert "approval wait" in bash.estimated["end"] and bash.duration_s == pytest.approx(4.5)
    assert "model_call.first_token" in run.header.absent
    assert (run.report.subruns, run.report.concurrent_calls) == (2, 6)


def _span_run(name: str) -> ImportedRun:
    decoded = decode_request((GOLDEN / name).read_bytes(), "application/json")
    return build_run(draft_trace(decoded.spans[0].trace_id, decoded.spans))


def test_claude_code_beta_traces_take_out_approval_waits() -> None:
    """Claude Code's beta spans: the 8 s permission prompt is out of the Bash tool's time and
    of every later time (the run ends 8 s earlier than its interaction span); the
    sub-agent's calls are a sub-run below the Task tool; TTFT from ttft_ms."""
    run = _span_run("claude-code-traces.json")
    calls, tools = _calls(run), _tools(run)
    bash = next(t for t in tools if t.name == "Bash")
    assert bash.duration_s == pytest.approx(16.0 - 4.2 - 8.0)
    assert bash.phases["execution"] == pytest.approx(3.5, abs=1e-3)
    assert run.events[-1].end == pytest.approx(50.8 - 0.5 - 8.0, abs=1e-3)
    main = [c for c in calls if c.subrun is None]
    assert [round(c.ttft_s or 0, 3) for c in main] == [0.9, 1.1, 0.8]
    assert main[1].start == pytest.approx(16.2 - 0.5 - 8.0, abs=1e-3)
    (sub,) = [e for e in run.events if isinstance(e, SubRunEvent)]
    assert (sub.subrun, sub.spawn_call_id) == ("agent-a1", "toolu_2")
    assert [t.name for t in tools if t.subrun == "agent-a1"] == ["Read"]
    assert run.header.backend["speed"] == "fast" and run.report.model == "claude-opus-4-6"
    assert any(
        n.startswith("a person's waits (blocked_on_user, the next prompt): 1 (8.000 s)")
        for n in run.header.notes
    )


def test_two_interactions_in_one_trace_leave_out_the_gap() -> None:
    """A trace with two interactions 20 s apart: one run, the gap (the person writing the
    next prompt) taken out, so the second call starts 5 s after the first's start."""
    from looplab.traces.collect.spans import Span

    def span(ident: str, name: str, a: float, b: float, parent: str | None = None) -> Span:
        attrs = {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 5}
        return Span("t" * 32, ident, parent, f"claude_code.{name}", T0 + a, T0 + b, attrs)

    spans = [
        span("a" * 16, "interaction", 0.0, 4.0),
        span("b" * 16, "llm_request", 1.0, 4.0, "a" * 16),
        span("c" * 16, "interaction", 24.0, 30.0),
        span("d" * 16, "llm_request", 25.0, 30.0, "c" * 16),
    ]
    run = build_run(draft_trace("t" * 32, spans))
    assert [round(c.start, 3) for c in _calls(run)] == [0.0, 4.0]
    assert run.events[-1].end == pytest.approx(9.0)
    assert any(
        n.startswith("a person's waits (blocked_on_user, the next prompt): 1 (20.000 s)")
        for n in run.header.notes
    )


def test_codex_events_pair_requests_with_completions() -> None:
    """Codex: a call runs from its request's send to its response.completed; the turn's
    TTFT lands on the first call; tokens from the completion; tools by call id."""
    (run,) = _runs("codex-events.json")
    calls = _calls(run)
    assert [round(c.duration_s, 3) for c in calls] == [3.2, 2.9, 2.85]
    assert calls[0].ttft_s == pytest.approx(1.5) and calls[1].first_token is None
    assert [(c.prompt_tokens, c.cached_tokens, c.completion_tokens) for c in calls] == [
        (8000, 6000, 400),
        (8600, 7900, 220),
        (9000, 8500, 120),
    ]
    assert calls[0].reasoning_tokens == 150 and calls[0].model == "gpt-5.1-codex"
    tools = _tools(run)
    assert [(t.name, t.call_id, t.ok) for t in tools] == [
        ("shell", "call_1", True),
        ("apply_patch", "call_2", True),
    ]
    assert "approval wait" in tools[0].estimated["end"] and "end" not in tools[1].estimated


def _codex(at: float, name: str, **attrs: object) -> LogRecord:
    base = {"conversation.id": "c2", "model": "gpt-5.1-codex"}
    return LogRecord(name=f"codex.{name}", time=T0 + at, attributes={**base, **attrs})


def test_codex_turns_leave_out_the_persons_time() -> None:
    """Two turns 37 s apart: the wait before the second user_prompt is the person's, taken
    out of the run (its second call starts 3.5 s after the first's start, not 40.5 s)."""
    done = {"event.kind": "response.completed", "input_token_count": "10"}
    records = [
        _codex(0.0, "user_prompt"),
        _codex(1.0, "api_request", duration_ms="1000", **{"http.response.status_code": "200"}),
        _codex(3.0, "sse_event", **done),
        _codex(40.0, "user_prompt"),
        _codex(41.0, "api_request", duration_ms="500", **{"http.response.status_code": "200"}),
        _codex(43.0, "sse_event", **done),
    ]
    events = EventCollector(settle_s=0.0)
    events.add(records)
    (group,) = events.drain()
    run = build_events(group.source, group.key, group.records)
    assert [round(c.start, 3) for c in _calls(run)] == [0.0, 3.5]
    assert run.events[-1].end == pytest.approx(6.0)
    assert any(
        "between turns (-> the next user_prompt): 1 (37.000 s)" in n for n in run.header.notes
    )


def test_codex_websocket_requests_are_calls_too() -> None:
    """With the websocket transport a call starts at its websocket_request (transport
    websocket); a failed one (success false) is not a call."""
    done = {"event.kind": "response.completed", "output_token_count": "7"}
    records = [
        _codex(1.0, "websocket_request", duration_ms="800", success="false"),
        _codex(3.0, "websocket_request", duration_ms="1000", success="true"),
        _codex(5.0, "sse_event", **done),
    ]
    events = EventCollector(settle_s=0.0)
    events.add(records)
    (group,) = events.drain()
    run = build_events(group.source, group.key, group.records)
    (call,) = _calls(run)
    assert (call.transport, call.duration_s, call.completion_tokens) == ("websocket", 3.0, 7)
    assert any("1 failed" in n for n in run.header.notes)


def test_gemini_cli_events_count_thoughts_as_generated() -> None:
    """Gemini CLI: api_response durations, completion = output + thoughts, a failed write,
    a shell command a person accepted marked as holding their wait."""
    (run,) = _runs("gemini-cli-events.json")
    calls = _calls(run)
    assert [round(c.duration_s, 3) for c in calls] == [2.5, 3.0, 2.1]
    assert [(c.completion_tokens, c.reasoning_tokens) for c in calls] == [
        (800, 500),
        (350, 200),
        (80, 0),
    ]
    tools = _tools(run)
    assert [(t.name, t.ok) for t in tools] == [
        ("read_file", True),
        ("run_shell_command", True),
        ("write_file", False),
    ]
    assert "person's decision" in tools[1].estimated["end"]
    assert tools[2].error == "permission denied" and run.header.model == "gemini-2.5-pro"


def test_unknown_and_keyless_events_are_ignored() -> None:
    """Events of no known CLI, or of no run (no prompt/session id), are counted, not kept."""
    events = EventCollector(settle_s=0.0)
    stray = LogRecord(name="other.thing", time=T0, attributes={"session.id": "s"})
    keyless = LogRecord(name="claude_code.api_request", time=T0, attributes={})
    events.add([stray, keyless])
    assert (events.events, events.ignored, events.drain()) == (0, 2, [])


def test_buffered_events_keep_only_what_their_source_reads() -> None:
    """A Claude Code event's prompt text and tool parameters are dropped at the door; its
    ids, tokens and times stay."""
    attrs = {"prompt.id": "p", "prompt": "x" * 4000, "tool_parameters": "{}", "model": "m"}
    events = EventCollector(settle_s=0.0)
    events.add([LogRecord(name="claude_code.api_request", time=T0, attributes=attrs)])
    ((record,),) = [g.records for g in events.drain()]
    assert record.attributes == {"prompt.id": "p", "model": "m"}


def test_excise_waits_moves_later_times_earlier() -> None:
    """A person's 10 s wait before a tool: the tool and the next call move 10 s earlier,
    a time inside the wait moves to its start, and the run says so."""
    draft = RunDraft(fmt="t", run_id="r", source_path=Path("x"))
    first = ModelDraft(start=0.0, end=2.0)
    tool = ToolDraft(name="Bash", start=12.0, end=13.0)
    second = ModelDraft(start=14.0, end=16.0, first_token=15.0)
    draft.steps = [StepDraft(model=first, tools=[tool]), StepDraft(model=second)]
    assert excise_waits(draft, [(2.0, 12.0)]) == pytest.approx(10.0)
    assert (tool.start, tool.end, second.first_token) == (2.0, 3.0, 5.0)
    assert excise_waits(RunDraft(fmt="t", run_id="r", source_path=Path("x")), []) == 0.0
    inside = ModelDraft(start=5.0, end=6.0)
    other = RunDraft(fmt="t", run_id="r", source_path=Path("x"), steps=[StepDraft(model=inside)])
    excise_waits(other, [(4.0, 8.0)])
    assert (inside.start, inside.end) == (4.0, 4.0)
    assert other.notes[-1].startswith("a person's waits (approval prompts): 1 (4.000 s)")


GOLDENS = {
    "claude-code-events.json": "claude-opus-4-6",
    "codex-events.json": "gpt-5.1-codex",
    "gemini-cli-events.json": "gemini-2.5-pro",
}


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_export_then_import_keeps_every_timing_and_token(name: str, tmp_path: Path) -> None:
    """A collected run written, read back and written again keeps every call's times and
    tokens (the trace file is the round trip's contract)."""
    (run,) = _runs(name)
    (path,) = write_runs([run], tmp_path / "a")
    again = read_trace(path)
    fields = ["start", "end", "first_token", "prompt_tokens", "cached_tokens"]
    fields += ["completion_tokens", "reasoning_tokens"]
    original = [tuple(getattr(c, f) for f in fields) for c in _calls(run)]
    assert [tuple(getattr(c, f) for f in fields) for c in again.model_calls()] == original
    assert [(t.start, t.end) for t in again.tool_calls()] == [(t.start, t.end) for t in _tools(run)]
    assert again.header.model == GOLDENS[name]


def _post(url: str, body: bytes, **headers: str) -> int:
    """POST a body; the status code."""
    return httpx2.post(url, content=body, headers=headers).status_code


def test_collect_command_end_to_end(tmp_path: Path) -> None:
    """`looplab collect` takes each golden body on /v1/logs (gzip JSON, protobuf, plain
    JSON) and Claude Code's beta spans on /v1/traces, writes one run each and prints its
    model; each re-times slower at slow-80 than at fast-750, and the four report; the
    metrics on /v1/metrics become one workload model per service."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    out = tmp_path / "out"
    bodies = [(GOLDEN / name).read_bytes() for name in sorted(GOLDENS)]
    proto = json_format.Parse(bodies[1], ExportLogsServiceRequest()).SerializeToString()
    with CollectCli(tmp_path, out) as (process, url):
        logs = url.replace("/v1/traces", "/v1/logs")
        json_type = {"content-type": "application/json"}
        zipped = {**json_type, "content-encoding": "gzip"}
        assert _post(logs, gzip.compress(bodies[0]), **zipped) == 200
        assert _post(logs, proto, **{"content-type": "application/x-protobuf"}) == 200
        assert _post(logs, bodies[2], **json_type) == 200
        assert _post(url, (GOLDEN / "claude-code-traces.json").read_bytes(), **json_type) == 200
        metrics = url.replace("/v1/traces", "/v1/metrics")
        for name in ("genai-metrics.json", "gemini-cli-metrics.json"):
            assert _post(metrics, (GOLDEN / name).read_bytes(), **json_type) == 200
        process.send_signal(signal.SIGINT)  # every buffered run is written, then exit 130
        printed, errors = process.communicate(timeout=30)
        assert process.returncode == 130, errors
    paths = sorted(out.glob("*.jsonl"))
    assert len(paths) == 4 and "4 run(s)" in errors
    for model in GOLDENS.values():
        assert model in printed
    for path in paths:
        slow, fast = _bottom_line(path)
        assert slow > fast > 0
    workloads = sorted(out.glob("*.workload.yaml"))
    assert [p.name for p in workloads] == [
        "otlp-metrics-fixer-agent.workload.yaml",
        "otlp-metrics-gemini-cli.workload.yaml",
    ]
    assert load_workload(workloads[0]).parameters.steps.distribution is not None
    html, report = build_report([out])
    assert report.runs == 4 and all(read_trace(p).header.run_id in html for p in paths)


def test_logs_protobuf_body_is_read() -> None:
    """A protobuf ExportLogsServiceRequest decodes to the same records as its JSON."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    text = (GOLDEN / "codex-events.json").read_text()
    message = json_format.Parse(text, ExportLogsServiceRequest())
    records = decode_logs(message.SerializeToString(), "application/x-protobuf")
    assert [(r.name, r.time) for r in records] == [
        (r.name, r.time) for r in _records("codex-events.json")
    ]


def test_a_malformed_logs_body_is_refused_by_name() -> None:
    """A body that is not a logs export: BadRequest naming where."""
    from looplab.traces.collect.spans import BadRequest

    with pytest.raises(BadRequest, match="resourceLogs"):
        decode_logs(json.dumps({"resourceLogs": 3}).encode(), "application/json")
    with pytest.raises(BadRequest, match="content-type"):
        decode_logs(b"{}", "text/plain")


def test_the_logs_route_refuses_bad_bodies_and_keeps_serving(tmp_path: Path) -> None:
    """POST /v1/logs: a body that is not a logs export is a 400 naming `resourceLogs`, an
    unknown type a 415; the receiver then takes a good body, and other CLIs' events are
    counted as ignored."""
    from looplab.serving.appserver import AppServer
    from looplab.traces.collect.receiver import Collector, receiver_app

    events = EventCollector(settle_s=0.0)
    app = receiver_app(Collector(settle_s=0.0), events)
    with AppServer(app, name="test-logs", max_body_bytes=1 << 20) as server:
        url = f"http://127.0.0.1:{server.port}/v1/logs"
        bad = httpx2.post(url, content=b'{"resourceLogs": 3}', headers=JSON)
        assert bad.status_code == 400 and "resourceLogs" in bad.json()["message"]
        assert (
            httpx2.post(url, content=b"x", headers={"content-type": "text/plain"}).status_code
            == 415
        )
        good = (GOLDEN / "gemini-cli-events.json").read_bytes()
        assert httpx2.post(url, content=good, headers=JSON).status_code == 200
        other = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"eventName": "x.y"}]}]}]}
        assert httpx2.post(url, content=json.dumps(other).encode(), headers=JSON).status_code == 200
    assert (events.events, events.ignored, len(events.drain())) == (9, 1, 1)


JSON = {"content-type": "application/json"}
