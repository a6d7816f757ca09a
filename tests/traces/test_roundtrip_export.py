"""Imported traces round-trip through read_trace; OTLP export; the import/export commands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.cli.app import app
from looplab.errors import ConfigError
from looplab.traces.commands import write_runs
from looplab.traces.exporters.otel import export_otel
from looplab.traces.importers import import_runs
from looplab.traces.io import read_trace
from looplab.traces.scrub import Scrubber

FIXTURES = [
    ("mini-swe-agent", "mini-swe-agent/sqlfluff__sqlfluff-2419.traj.json", 1),
    ("openhands", "openhands/multi_swe_bench_output.jsonl", 3),
    ("inspect", "inspect/browser.json", 1),
    ("tracelab", "tracelab/round_trace.jsonl", 2),
]


@pytest.mark.parametrize(("fmt", "name", "count"), FIXTURES)
def test_imported_traces_round_trip(
    external: Path, tmp_path: Path, fmt: str, name: str, count: int
) -> None:
    """Every imported run is written and read back equal (after scrubbing), ending in run_end."""
    used, runs = import_runs("auto", external / name)
    assert used == fmt and len(runs) == count
    paths = write_runs(runs, tmp_path)
    scrubber = Scrubber(environ={})
    for run, path in zip(runs, paths, strict=True):
        trace = read_trace(path)
        assert trace.complete and trace.header == run.header
        assert [e.model_dump(mode="json") for e in trace.events] == [
            scrubber.scrub(e.model_dump(mode="json")) for e in run.events
        ]


def test_otlp_export_structure(external: Path) -> None:
    """One span per run, step, model call and tool call, parented run > step > call."""
    _, runs = import_runs("openhands", external / "openhands" / "multi_swe_bench_output.jsonl")
    run = runs[0]
    from looplab.traces.io import Trace

    payload = export_otel(Trace(header=run.header, events=run.events))
    [resource] = payload["resourceSpans"]
    spans = resource["scopeSpans"][0]["spans"]
    assert len(spans) == 1 + 23 + 23 + 23
    assert all(len(s["traceId"]) == 32 and len(s["spanId"]) == 16 for s in spans)
    assert len({s["spanId"] for s in spans}) == len(spans)
    by_id = {s["spanId"]: s for s in spans}
    root = spans[0]
    assert "parentSpanId" not in root and root["name"].startswith("invoke_agent")

    def attrs(span: dict[str, object]) -> dict[str, object]:
        return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}  # type: ignore[attr-defined, index]

    chats = [s for s in spans if attrs(s).get("gen_ai.operation.name") == "chat"]
    tools = [s for s in spans if attrs(s).get("gen_ai.operation.name") == "execute_tool"]
    assert len(chats) == 23 and len(tools) == 23
    first = chats[0]
    assert by_id[first["parentSpanId"]]["name"] == "step 0"
    assert by_id[by_id[first["parentSpanId"]]["parentSpanId"]] is root
    a = attrs(first)
    assert a["gen_ai.usage.input_tokens"] == "5920" and a["gen_ai.usage.output_tokens"] == "128"
    assert a["gen_ai.request.model"] == "meta-llama/llama-4-maverick"
    t = attrs(tools[0])
    assert t["gen_ai.tool.name"] == "execute_bash" and t["gen_ai.tool.call.id"] == "toolu_01"
    # 2025-04-30T08:32:54.764683Z (action at 08:32:57.821635 minus the 3.057 s latency)
    start = int(first["startTimeUnixNano"])
    end = int(first["endTimeUnixNano"])
    assert start == pytest.approx(1746001974_764683000, abs=2000)
    assert (end - start) / 1e9 == pytest.approx(3.0569519996643066, abs=1e-6)
    json.dumps(payload)  # serializable as is


def test_import_and_export_commands(external: Path, tmp_path: Path) -> None:
    """`import auto PATH -o DIR` writes <source id>.<digest>.jsonl per run; `export otel`."""
    runner = CliRunner()
    out = tmp_path / "traces"
    result = runner.invoke(
        app, ["import", "auto", str(external / "tracelab" / "round_trace.jsonl"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.glob("*.jsonl"))
    assert [re.sub(r"\.[0-9a-f]{8}\.jsonl$", "", n) for n in names] == [
        "claude_92ee5b8a-429c-e80b-5db6-5381512f4697",
        "codex_a611041f-625d-6fad-5e59-845850dc6543",
    ]
    assert "model time" in result.output and "measured" in result.output
    otlp = tmp_path / "otel.json"
    result = runner.invoke(app, ["export", "otel", str(out), "-o", str(otlp)])
    assert result.exit_code == 0, result.output
    assert len(json.loads(otlp.read_text())["resourceSpans"]) == 2


def test_import_command_bad_format(tmp_path: Path) -> None:
    """A bad FORMAT raises ConfigError (the CLI prints it without a traceback)."""
    result = CliRunner().invoke(app, ["import", "swe", str(tmp_path / "x"), "-o", str(tmp_path)])
    assert isinstance(result.exception, ConfigError)
    assert "allowed: auto" in str(result.exception)


def test_otlp_export_names_provider_and_server() -> None:
    """Run and chat spans carry gen_ai.provider.name (looplab for the simulator, openai for
    an endpoint reached through the openai client) and server.address / server.port."""
    from datetime import UTC, datetime

    from looplab.traces.io import Trace
    from looplab.traces.schema import ModelCallEvent, TraceHeader

    def exported(source: str, backend: dict[str, object]) -> list[dict[str, object]]:
        header = TraceHeader(
            run_id="r", created=datetime(2026, 1, 1, tzinfo=UTC), source=source, backend=backend
        )
        call = ModelCallEvent(run_id="r", step=0, start=0.0, end=1.0, sent=0.0, model="m")
        spans = export_otel(Trace(header=header, events=[call]))["resourceSpans"][0]
        return [
            {a["key"]: next(iter(a["value"].values())) for a in s["attributes"]}
            for s in spans["scopeSpans"][0]["spans"]
        ]

    for attrs in exported("looplab", {"kind": "simulated", "base_url": "http://127.0.0.1:8750/v1"}):
        assert attrs["gen_ai.provider.name"] == "looplab"
        assert attrs["server.address"] == "127.0.0.1" and attrs["server.port"] == "8750"
    run, chat = exported("wrap", {"kind": "proxy", "upstream": "https://api.openai.com/v1"})
    assert run["gen_ai.provider.name"] == chat["gen_ai.provider.name"] == "openai"
    assert chat["server.address"] == "api.openai.com" and chat["server.port"] == "443"
    (imported, _) = exported("import:openhands", {})
    assert "gen_ai.provider.name" not in imported  # not recorded: not invented
