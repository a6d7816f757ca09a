"""`looplab collect` at its door (issue 36, findings 3 and 4): one bad value never stops it,
building a run is linear in its spans, and buffered spans are capped.

Every test drives a real `looplab collect` subprocess over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from looplab.traces.collect.journal import Journal
from looplab.traces.io import read_trace

from .collect_cli import JSON, Collect, export, reap, run_of, span, wait_for

pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

PROTOBUF = {"content-type": "application/x-protobuf"}


@pytest.fixture(autouse=True)
def _reaped() -> Iterator[None]:
    """No collector outlives its test."""
    yield
    reap()


def _infinite_tokens_protobuf(trace: str) -> bytes:
    """A protobuf export: a root and a chat span whose input tokens are double +inf."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add()
    now = int(datetime.now(UTC).timestamp() * 1e9)
    for number, (op, parent) in enumerate((("invoke_agent", b""), ("chat", b"\0" * 7 + b"\1"))):
        item = spans.spans.add(
            trace_id=bytes.fromhex(trace),
            span_id=b"\0" * 7 + bytes([number + 1]),
            parent_span_id=parent,
            name=op,
            start_time_unix_nano=now,
            end_time_unix_nano=now + 1000,
        )
        item.attributes.add(key="gen_ai.operation.name").value.string_value = op
        if op == "chat":
            item.attributes.add(key="gen_ai.usage.input_tokens").value.double_value = float("inf")
    body: bytes = request.SerializeToString()
    return body


def _hostile_bodies() -> list[tuple[str, bytes, dict[str, str]]]:
    """The campaign's named bad values, one body each (each its own trace)."""
    agent = span("a1" * 16, 1, op="invoke_agent", parent=None)
    agent["attributes"].append(
        {"key": "gen_ai.agent.name", "value": {"stringValue": "fix\ud800er"}}
    )
    digits = span("a2" * 16, 2, gen_ai__usage__input_tokens={"intValue": "9" * 400})
    late = span("a3" * 16, 2)
    late["startTimeUnixNano"] = "9" * 400
    infinite = json.dumps(export(span("a4" * 16, 2))).replace(
        '"startTimeUnixNano": "', '"startTimeUnixNano": Infinity, "x": "'
    )
    huge_number = json.dumps(export(span("a5" * 16, 2))).replace(
        '"endTimeUnixNano": "', '"endTimeUnixNano": 1e400, "y": "'
    )
    nan_double = span("a6" * 16, 2, gen_ai__usage__output_tokens={"doubleValue": "NaN"})
    odd_double = span("a8" * 16, 2, gen_ai__usage__output_tokens={"doubleValue": "\u00e9\udfff"})
    status = span("a7" * 16, 2)
    status["status"] = {"code": "9" * 400, "message": "bad\udc80"}
    return [
        ("double +inf tokens (protobuf)", _infinite_tokens_protobuf("a0" * 16), PROTOBUF),
        ("lone surrogate agent name", json.dumps(export(agent)).encode(), JSON),
        ("400-digit intValue", json.dumps(export(digits)).encode(), JSON),
        ("400-digit startTimeUnixNano", json.dumps(export(late)).encode(), JSON),
        ("Infinity startTimeUnixNano", infinite.encode(), JSON),
        ("1e400 endTimeUnixNano", huge_number.encode(), JSON),
        ("NaN doubleValue", json.dumps(export(nan_double)).encode(), JSON),
        ("400-digit status code, surrogate message", json.dumps(export(status)).encode(), JSON),
        ("surrogate doubleValue", json.dumps(export(odd_double)).encode(), JSON),
    ]


def test_one_bad_value_never_stops_collect(tmp_path: Path, campaign: Any) -> None:
    """Each named bad value is answered 200 (dropped or repaired, said in the run's notes),
    never a 500; the collector keeps serving and writes every run, all readable."""
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "0.2")
    cases = _hostile_bodies()
    for name, body, headers in cases:
        campaign.add("collect cases")
        response = collect.post(body, headers)
        if response.status_code != 200:
            campaign.add("collect failures")
        assert response.status_code == 200, (name, response.status_code, response.text)
        assert collect.process.poll() is None, name
    assert collect.post(run_of("b0" * 16)).status_code == 200
    code, errors = collect.stop()
    assert code == 130, errors
    traces = [read_trace(p) for p in sorted(out.glob("*.jsonl"))]
    assert len(traces) == len(cases) + 1, errors
    notes = " ".join(n for t in traces for n in t.header.notes)
    for repaired in ("input_tokens", "UTF-8", "startTimeUnixNano", "endTimeUnixNano"):
        assert repaired in notes
    assert all(
        c.prompt_tokens is None or c.prompt_tokens < 10**12 for t in traces for c in t.model_calls()
    )


_BAD_VALUES: list[Any] = [
    "9" * 400,
    -1,
    1e308,
    "Infinity",
    "NaN",
    "\ud800",
    "",
    None,
    [],
    {},
    True,
    "0x10",
    2**64,
    -(2**63) - 1,
    "é\udfff",
]
_FIELDS = ["startTimeUnixNano", "endTimeUnixNano", "name", "parentSpanId", "status", "events"]
_VALUE_KINDS = ["intValue", "doubleValue", "stringValue", "boolValue", "arrayValue"]


def _fuzz_body(rng: random.Random, n: int) -> bytes:
    """A run whose spans carry random hostile values in random places."""
    trace = f"{n + 1:032x}"
    spans = [span(trace, 1, op="invoke_agent", parent=None)] + [
        span(trace, 2 + i, op=rng.choice(["chat", "execute_tool", "x"])) for i in range(3)
    ]
    for item in spans[1:]:
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.5:
                item[rng.choice(_FIELDS)] = rng.choice(_BAD_VALUES)
            else:
                key = rng.choice(
                    [
                        "gen_ai.usage.input_tokens",
                        "gen_ai.agent.name",
                        "looplab.ttft_s",
                        "gen_ai.tool.name",
                        "looplab.exit_code",
                        "gen_ai.operation.name",
                    ]
                )
                value = {rng.choice(_VALUE_KINDS): rng.choice(_BAD_VALUES)}
                item["attributes"].append({"key": key, "value": value})
    return json.dumps(export(*spans), allow_nan=True).encode()


def test_fuzzed_bodies_get_no_500_and_no_crash(tmp_path: Path, campaign: Any) -> None:
    """120 bodies with hostile values in random fields: every answer 200 or 400 (with a
    reason), the collector alive throughout, and every run it writes readable."""
    rng = random.Random(36)
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "0.1")
    answers: dict[int, int] = {}
    for n in range(120):
        campaign.add("collect cases")
        response = collect.post(_fuzz_body(rng, n))
        answers[response.status_code] = answers.get(response.status_code, 0) + 1
        if response.status_code not in (200, 400):
            campaign.add("collect failures")
        assert response.status_code in (200, 400), response.text
        assert response.status_code == 200 or response.json()["message"]
        assert collect.process.poll() is None, n
    code, errors = collect.stop()
    campaign.notes.append(f"collect fuzz: 120 bodies, answers {sorted(answers.items())}")
    print(f"collect fuzz answers: {sorted(answers.items())}")
    assert code == 130 and "Traceback" not in errors, errors
    written = sorted(out.glob("*.jsonl"))
    assert len(written) == answers.get(200, 0), (answers, errors[-3000:])
    for path in written:
        read_trace(path)


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _write_trace(collect: Collect, out: Path, number: int, total: int) -> float:
    """Post a `total`-span trace (model and tool calls alternating, then its root) and
    wait for its file; the CPU seconds the collector spent on it."""
    trace = f"c{number}" * 16
    spans = [span(trace, 2 + i, op="chat" if i % 2 else "execute_tool") for i in range(total - 1)]
    before = _cpu_s(collect.process.pid)
    for i in range(0, len(spans), 10_000):
        assert collect.post(export(*spans[i : i + 10_000])).status_code == 200
    assert collect.post(export(span(trace, 1, op="invoke_agent", parent=None))).status_code == 200
    assert wait_for(lambda: len(list(out.glob("*.jsonl"))) > number, 60), collect.stop()
    return _cpu_s(collect.process.pid) - before


def test_a_large_trace_is_written_in_linear_time(tmp_path: Path) -> None:
    """A 4x larger trace (5,000 then 20,000 spans) costs the collector under 7x the CPU
    (linear: 4x; the quadratic step building this pins, 86 s for 40k spans, made it about
    12x), each written within 60 s, and both marked in the journal before stop returns (a
    quadratic mark left them "not yet written")."""
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "0.2")
    started = time.monotonic()
    small = _write_trace(collect, out, 0, 5_000)
    large = _write_trace(collect, out, 1, 20_000)
    took = time.monotonic() - started
    stopping = time.monotonic()
    collect.stop()
    stopped = time.monotonic() - stopping
    calls = sorted(len(read_trace(path).model_calls()) for path in out.glob("*.jsonl"))
    assert calls == [5_000 // 2 - 1, 20_000 // 2 - 1]
    assert large < 7 * small, f"5,000 spans: {small:.2f} CPU-s; 20,000 spans: {large:.2f}"
    assert took < 120
    # the journal marks the written runs in linear time too (a quadratic mark took minutes)
    assert [s.pending for s in Journal(out).recover().values()] == [[], []] and stopped < 60


def test_buffered_spans_are_capped_with_a_clear_refusal(tmp_path: Path) -> None:
    """Past `--max-trace-spans` a request is refused 413, past `--max-spans` 503, each
    naming its flag on the answer and on stderr; what was accepted is still written."""
    out = tmp_path / "out"
    collect = Collect(out, "--max-trace-spans", "100", "--max-spans", "150", "--settle-s", "60")
    one = "d1" * 16
    too_many = collect.post(export(*[span(one, 2 + i) for i in range(101)]))
    assert too_many.status_code == 413 and "--max-trace-spans" in too_many.json()["message"]
    assert collect.post(export(*[span(one, 2 + i) for i in range(90)])).status_code == 200
    full = collect.post(export(*[span("d2" * 16, 2 + i) for i in range(90)]))
    assert full.status_code == 503 and "--max-spans" in full.json()["message"]
    code, errors = collect.stop()
    assert code == 130 and "--max-trace-spans" in errors and "--max-spans" in errors
    (path,) = out.glob("*.jsonl")
    assert len(read_trace(path).model_calls()) == 90
