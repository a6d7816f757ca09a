"""`looplab collect` keeps every run it answers 200 for (issue 47, finding 3): every member
of a multi-member gzip body is decoded, and one over-nested span is rejected alone (OTLP
`partial_success`), never the whole batch.

Every test drives a real `looplab collect` subprocess over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from looplab.traces.io import read_trace

from .collect_cli import JSON, Collect, export, reap, span

pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

PROTOBUF = {"content-type": "application/x-protobuf"}


@pytest.fixture(autouse=True)
def _reaped() -> Iterator[None]:
    """No collector outlives its test."""
    yield
    reap()


def _protobuf_run(trace: str, deep: int = 0) -> bytes:
    """A protobuf export of one run (root + a chat span); the chat span carries an
    attribute nested `deep` kvlist levels when `deep`."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add()
    now = time.time_ns()
    for number, op in ((1, "invoke_agent"), (2, "chat")):
        item = spans.spans.add(
            trace_id=bytes.fromhex(trace),
            span_id=bytes(7) + bytes([number]),
            parent_span_id=b"" if number == 1 else bytes(7) + b"\1",
            name=op,
            start_time_unix_nano=now + number,
            end_time_unix_nano=now + 1000,
        )
        item.attributes.add(key="gen_ai.operation.name").value.string_value = op
        if number == 2 and deep:
            value = item.attributes.add(key="deep").value
            for _ in range(deep):
                value = value.kvlist_value.values.add(key="k").value
            value.string_value = "bottom"
    body: bytes = request.SerializeToString()
    return body


def _runs(collect: Collect, out: Path) -> set[str]:
    """Stop the collector; the trace ids of the runs it wrote."""
    code, errors = collect.stop()
    assert code == 130, errors
    return {read_trace(p).header.run_id for p in out.glob("*.jsonl")}


def test_every_member_of_a_multi_member_gzip_body_is_kept(tmp_path: Path, campaign: Any) -> None:
    """Two runs in two gzip members of one protobuf body: 200 and both runs written (the
    second member was dropped after a 200 before)."""
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "0.2")
    body = gzip.compress(_protobuf_run("a1" * 16)) + gzip.compress(_protobuf_run("b2" * 16))
    answer = collect.post(body, {**PROTOBUF, "content-encoding": "gzip"})
    runs = _runs(collect, out)
    campaign.add("collect cases")
    campaign.add("collect lost", 2 - len(runs))
    assert answer.status_code == 200, answer.text
    assert len(runs) == 2, runs


def test_a_gzip_body_cut_short_or_with_trailing_bytes_is_refused(
    tmp_path: Path, campaign: Any
) -> None:
    """A gzip body cut inside its stream, or followed by bytes that are not another
    member, is a 400 naming why (not a 200 for what happened to decode)."""
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "0.2")
    whole = gzip.compress(_protobuf_run("c3" * 16))
    headers = {**PROTOBUF, "content-encoding": "gzip"}
    cut = collect.post(whole[:-12], headers)
    trailing = collect.post(whole + b"not gzip", headers)
    campaign.add("collect cases", 2)
    assert cut.status_code == 400 and b"cut short" in cut.content, cut.content
    assert trailing.status_code == 400, trailing.content
    assert _runs(collect, out) == set()


@pytest.mark.parametrize("deep", [32, 40])
def test_one_deeply_nested_protobuf_span_costs_only_itself(
    tmp_path: Path, campaign: Any, deep: int
) -> None:
    """A batch of two runs, one chat span with an attribute nested 32 (or 40) deep: 200 and
    the other run written whole; past protobuf's own nesting limit (40) the one span is
    rejected in `partial_success`, within it (32) it is kept (the whole batch was a 400)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "0.2")
    body = _protobuf_run("d4" * 16) + _protobuf_run("e5" * 16, deep=deep)
    answer = collect.post(body, PROTOBUF)
    runs = _runs(collect, out)
    campaign.add("collect cases")
    campaign.add("collect lost", max(0, 2 - len(runs)))
    assert answer.status_code == 200, answer.content
    response = ExportTraceServiceResponse.FromString(answer.content)
    assert len(runs) == 2, runs
    calls = sorted(len(read_trace(p).model_calls()) for p in out.glob("*.jsonl"))
    if deep == 40:
        assert calls == [0, 1]
        assert response.partial_success.rejected_spans == 1
        assert "spans[1]" in response.partial_success.error_message
    else:
        assert calls == [1, 1]
        assert response.partial_success.rejected_spans == 0


def test_one_deeply_nested_json_span_is_rejected_alone(tmp_path: Path, campaign: Any) -> None:
    """An OTLP/JSON batch where one span's attribute nests 250 deep (past the JSON parser's
    recursion limit): 200, that span in `partialSuccess`, the other run written."""
    out = tmp_path / "out"
    collect = Collect(out, "--settle-s", "0.2")
    deep = span("f6" * 16, 2)
    deep["attributes"].append({"key": "deep", "value": "@"})
    level = '{"kvlistValue": {"values": [{"key": "k", "value": '
    nested = level * 250 + '{"stringValue": "bottom"}' + "}]}}" * 250
    root = span("a7" * 16, 1, op="invoke_agent", parent=None)
    text = json.dumps(export(root, span("a7" * 16, 2), deep)).replace('"@"', nested)
    answer = collect.post(text.encode(), JSON)
    runs = _runs(collect, out)
    campaign.add("collect cases")
    assert answer.status_code == 200, answer.text
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1" and "spans[2]" in partial["errorMessage"], partial
    assert len(runs) == 1, runs
