"""`looplab collect`: real OTLP/HTTP exporters on loopback -> looplab traces that re-time.

The apps (`collect_apps.py`) export with the real opentelemetry-exporter-otlp-proto-http
(protobuf, gzip) to the receiver on 127.0.0.1; the simulator answers their model calls.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import pytest

from looplab.analysis.replay import replay_virtual
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.bench.synthetic import write_synthetic_experiment
from looplab.latency.presets import resolve_profile
from looplab.report.build import build_report
from looplab.serving.appserver import AppServer
from looplab.traces.collect.receiver import Collector, receiver_app
from looplab.traces.collect.runs import draft_run
from looplab.traces.exporters.otel import export_otel
from looplab.traces.importers import write_runs
from looplab.traces.importers.build import build_run
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace, read_trace

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="needs the dev extra")
from .collect_apps import (
    agents_sdk_app,
    exporting,
    genai_spans,
    langchain_app,
    openinference_openai_app,
)

FAST = ["ttft_s=0.005", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]


@pytest.fixture
def receiver() -> Iterator[tuple[Collector, str]]:
    """The receiver app on loopback (in-process), and its /v1/traces URL."""
    collector = Collector(settle_s=0.0)
    with AppServer(receiver_app(collector), name="test-collect", max_body_bytes=1 << 20) as s:
        yield collector, f"http://127.0.0.1:{s.port}/v1/traces"


@pytest.fixture
def simulator() -> Iterator[SimulatorServer]:
    """The simulator on loopback at a high token rate."""
    with SimulatorServer(resolve_profile("fast-750", FAST)) as server:
        yield server


def _runs(collector: Collector, out: Path) -> list[Trace]:
    """Every buffered trace built and written by the import path, read back."""
    runs = [build_run(draft_run(t.trace_id, t.spans, t.part)) for t in collector.drain()]
    return [read_trace(p) for p in write_runs(runs, out)]


def test_genai_spans_from_the_plain_sdk(receiver: tuple[Collector, str], tmp_path: Path) -> None:
    """GenAI-convention spans: one run, 2 model calls with their tokens, 1 tool; TTFT absent."""
    collector, url = receiver
    with exporting(url, "genai-app") as provider:
        genai_spans(provider)
    (trace,) = _runs(collector, tmp_path)
    calls = trace.model_calls()
    assert [(c.prompt_tokens, c.completion_tokens) for c in calls] == [(120, 30), (180, 12)]
    assert [t.name for t in trace.tool_calls()] == ["run"]
    assert trace.tool_calls()[0].call_id == "call_1"
    assert trace.header.agent == "fixer" and trace.header.source == "import:otlp"
    assert "model_call.first_token" in trace.header.absent
    assert calls[0].finish_reason == "tool_calls" and calls[0].model == "gpt-test"


def test_openinference_openai_app_through_the_cli(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    """(b) An openai-client loop instrumented by OpenInference, exported to `looplab collect`
    (the command): every call and tool lands, tokens equal the simulator's usage, TTFT is
    measured (streamed), and the trace re-times and reports."""
    pytest.importorskip("openinference.instrumentation.openai", reason="needs the dev extra")
    out = tmp_path / "collected"
    with CollectCli(tmp_path, out, "--max-runs", "1") as (process, url):
        with exporting(url, "oi-app") as provider:
            tools = openinference_openai_app(provider, simulator.base_url, steps=4)
        printed, errors = process.communicate(timeout=30)
        assert process.returncode == 0, errors
    (path,) = sorted(out.glob("*.jsonl"))
    trace = read_trace(path)
    assert tools >= 1 and len(trace.tool_calls()) == tools
    assert len(trace.model_calls()) == tools + 1  # the last call answers in text
    usage = _simulator_usage(simulator)
    assert [(c.prompt_tokens, c.completion_tokens) for c in trace.model_calls()] == usage
    assert all(c.ttft_s is not None and c.ttft_s > 0 for c in trace.model_calls())
    assert any(n.startswith("TTFT measured on") for n in trace.header.notes)
    assert "oi-agent" in path.name and "model calls" in printed
    slow = replay_virtual(trace, resolve_profile("slow-80", []))
    assert slow.end is not None and trace.end is not None and slow.end.end > trace.end.end
    html, model = build_report([out])
    assert model.runs == 1 and "oi-agent" in html


AGENTS_TRACING = {
    "openinference": "openinference.instrumentation.openai_agents",
    "genai": "opentelemetry.instrumentation.openai_agents",
}


@pytest.mark.parametrize("tracing", sorted(AGENTS_TRACING))
def test_agents_sdk_app(
    receiver: tuple[Collector, str], simulator: SimulatorServer, tmp_path: Path, tracing: str
) -> None:
    """(a) An OpenAI Agents SDK agent traced through OpenTelemetry (OpenInference or GenAI
    spans): one run, the SDK's model calls and its function tool, tokens as the simulator
    counted them, no first-token time, and it re-times."""
    pytest.importorskip(AGENTS_TRACING[tracing], reason=f"{tracing} tracing is not installed")
    collector, url = receiver
    with exporting(url, "sdk-app") as provider:
        final = asyncio.run(agents_sdk_app(provider, simulator.base_url, tracing))
    (trace,) = _runs(collector, tmp_path)
    assert final and trace.header.run_id.startswith("sdk-fixer-")
    assert [t.name for t in trace.tool_calls()] == ["run"]
    assert [(c.prompt_tokens, c.completion_tokens) for c in trace.model_calls()] == (
        _simulator_usage(simulator)
    )
    assert "model_call.first_token" in trace.header.absent  # the SDK's spans carry none
    assert replay_virtual(trace, resolve_profile("slow-80", [])).end is not None


def test_langchain_app(
    receiver: tuple[Collector, str], simulator: SimulatorServer, tmp_path: Path
) -> None:
    """A LangChain tool-calling loop traced by OpenInference's LangChain instrumentation:
    one run, every ChatOpenAI call and tool run, tokens as the simulator counted them, and
    it re-times slower at 80 tok/s."""
    pytest.importorskip("openinference.instrumentation.langchain", reason="needs the dev extra")
    collector, url = receiver
    with exporting(url, "lc-app") as provider:
        tools = langchain_app(provider, simulator.base_url, steps=4)
    (trace,) = _runs(collector, tmp_path)
    assert trace.header.run_id.startswith("lc-agent")
    assert tools >= 1 and [t.name for t in trace.tool_calls()] == ["run"] * tools
    assert len(trace.model_calls()) == tools + 1  # the last call answers in text
    assert [(c.prompt_tokens, c.completion_tokens) for c in trace.model_calls()] == (
        _simulator_usage(simulator)
    )
    slow = replay_virtual(trace, resolve_profile("slow-80", []))
    assert slow.end is not None and trace.end is not None and slow.end.end > trace.end.end


def test_looplab_export_round_trips(receiver: tuple[Collector, str], tmp_path: Path) -> None:
    """`looplab export otel` posted as JSON comes back call for call: tokens, tool calls,
    TTFT (from `looplab.ttft_s`), end reason and success."""
    collector, url = receiver
    (original,) = load_traces([write_synthetic_experiment(tmp_path / "syn", 1)])
    body = json.dumps(export_otel(original)).encode()
    response = httpx2.post(url, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200
    (trace,) = _runs(collector, tmp_path / "out")
    pairs = list(zip(trace.model_calls(), original.model_calls(), strict=True))
    assert all(a.prompt_tokens == b.prompt_tokens for a, b in pairs)
    assert all(a.cached_tokens == b.cached_tokens for a, b in pairs)
    assert all(abs((a.ttft_s or 0) - (b.ttft_s or 1)) < 1e-3 for a, b in pairs)
    assert len(trace.tool_calls()) == len(original.tool_calls())
    assert trace.end is not None and original.end is not None
    assert (trace.end.end_reason, trace.end.success) == (original.end.end_reason, True)


def test_malformed_bodies_get_400_and_the_receiver_keeps_serving(
    receiver: tuple[Collector, str], tmp_path: Path
) -> None:
    """Bad protobuf, bad JSON, bad gzip, a wrong type and an oversized body are refused
    with a reason; a good JSON body after them still lands."""
    collector, url = receiver
    cases = [
        (b"\xff\xff\xff", {"content-type": "application/x-protobuf"}, 400, "protobuf"),
        (b"{nope", {"content-type": "application/json"}, 400, "not JSON"),
        (b'{"resourceSpans": 3}', {"content-type": "application/json"}, 400, "resourceSpans"),
        (b"abc", {"content-type": "application/json", "content-encoding": "gzip"}, 400, "gzip"),
        (b"{}", {"content-type": "text/plain"}, 415, "application/json"),
    ]
    with httpx2.Client(timeout=10) as client:
        for body, headers, status, reason in cases:
            response = client.post(url, content=body, headers=headers)
            assert response.status_code == status and reason in response.text, body
        bomb = gzip.compress(b"\0" * (65 << 20))  # 64 KiB that inflate past 64 MiB
        headers = {"content-type": "application/json", "content-encoding": "gzip"}
        response = client.post(url, content=bomb, headers=headers)
        assert response.status_code == 413 and "inflates" in response.text
        big = client.post(
            url, content=b"x" * (2 << 20), headers={"content-type": "application/json"}
        )
        assert big.status_code == 413
        good = gzip.compress(json.dumps(_json_request()).encode())
        headers = {"content-type": "application/json", "content-encoding": "gzip"}
        response = client.post(url, content=good, headers=headers)
    assert response.status_code == 200 and response.json() == {}
    (trace,) = _runs(collector, tmp_path)
    assert trace.model_calls()[0].prompt_tokens == 7


def test_until_idle_stops_the_command(tmp_path: Path) -> None:
    """`--until-idle 0.5` with nothing received: exit 0, no trace, the port closed."""
    with CollectCli(tmp_path, tmp_path / "out", "--until-idle", "0.5") as (process, url):
        _, errors = process.communicate(timeout=30)
        assert process.returncode == 0 and "0 run(s)" in errors
    with pytest.raises(httpx2.ConnectError):
        httpx2.post(url, content=b"{}", headers={"content-type": "application/json"})


def test_ctrl_c_writes_buffered_runs_and_frees_the_port(tmp_path: Path) -> None:
    """SIGINT: exit 130, the buffered run written (its root never came), the port closed."""
    out = tmp_path / "out"
    with CollectCli(tmp_path, out) as (process, url):
        request = json.dumps(_json_request(root=False)).encode()
        headers = {"content-type": "application/json"}
        assert httpx2.post(url, content=request, headers=headers).status_code == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
    assert len(list(out.glob("*.jsonl"))) == 1
    with pytest.raises(httpx2.ConnectError):
        httpx2.post(url, content=request, headers=headers)


def test_a_foreign_host_header_is_refused(tmp_path: Path) -> None:
    """`collect` answers only requests naming its address (DNS rebinding guard): a foreign
    Host gets 400 and nothing is buffered; its own address is served."""
    out = tmp_path / "out"
    with CollectCli(tmp_path, out) as (process, url):
        request = json.dumps(_json_request()).encode()
        headers = {"content-type": "application/json"}
        foreign = httpx2.post(url, content=request, headers={**headers, "host": "evil.example"})
        assert foreign.status_code == 400 and "DNS rebinding" in foreign.text
        assert httpx2.post(url, content=request, headers=headers).status_code == 200
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=30)
    assert "1 run(s) from 1 request(s)" in " ".join(errors.split())


def _json_request(root: bool = True) -> dict[str, object]:
    """An OTLP/JSON request: one chat span (and its root span)."""
    trace_id, start = "ab" * 16, round(datetime.now(UTC).timestamp() * 1e9)
    chat = {
        "traceId": trace_id,
        "spanId": "01" * 8,
        "parentSpanId": "02" * 8,
        "name": "chat",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 50_000_000),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "7"}},
        ],
    }
    parent = {**chat, "spanId": "02" * 8, "name": "agent", "attributes": []}
    parent.pop("parentSpanId")
    spans = [chat, parent] if root else [chat]
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def _simulator_usage(simulator: SimulatorServer) -> list[tuple[int, int]]:
    """(prompt, completion) tokens of every request the simulator served, in order."""
    return [
        (t["prompt_tokens"], t["visible_tokens"] + t["reasoning_tokens"])
        for t in simulator.simulator.timings.values()
    ]


class CollectCli:
    """`looplab collect --port 0` as a subprocess; killed on exit if still running."""

    def __init__(self, tmp_path: Path, out: Path, *args: str) -> None:
        self.port_file = tmp_path / f"port-{len(list(tmp_path.iterdir()))}"
        command = [sys.executable, "-m", "looplab", "collect", "-o", str(out), "--port", "0"]
        command += ["--port-file", str(self.port_file), "--settle-s", "0.2", *args]
        self.command = command

    def __enter__(self) -> tuple[subprocess.Popen[str], str]:
        env = {**os.environ, "LOOPLAB_LOG_FILE": os.devnull}
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        deadline = time.monotonic() + 30
        while not self.port_file.exists() or not self.port_file.read_text():
            assert self.process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        return self.process, f"http://127.0.0.1:{self.port_file.read_text()}/v1/traces"

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=10)
