"""OTLP metrics (GenAI agent metrics, Gemini CLI's) -> a workload model's observations:
histograms as distributions, never runs (golden bodies in tests/fixtures/telemetry/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from looplab.traces.collect.metrics import Histogram, MetricsCollector, decode_metrics
from looplab.workloads.metrics import histogram_distribution, metric_workloads
from looplab.workloads.model import dump_workload, load_workload

from .conftest import FIXTURES

GOLDEN = FIXTURES / "telemetry"


def _collected(*names: str, times: int = 1) -> MetricsCollector:
    collector = MetricsCollector()
    for name in names:
        for _ in range(times):
            collector.add(decode_metrics((GOLDEN / name).read_bytes(), "application/json"), 0.0)
    return collector


def test_histograms_are_kept_and_other_points_counted() -> None:
    """Six GenAI histograms and one sum; the protobuf encoding decodes the same."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    text = (GOLDEN / "genai-metrics.json").read_text()
    decoded = decode_metrics(text.encode(), "application/json")
    assert (len(decoded.histograms), decoded.other_points) == (6, 1)
    binary = json_format.Parse(text, ExportMetricsServiceRequest()).SerializeToString()
    again = decode_metrics(binary, "application/x-protobuf")
    assert [(h.name, h.counts, h.bounds) for h in again.histograms] == [
        (h.name, h.counts, h.bounds) for h in decoded.histograms
    ]


def test_delta_points_add_up_and_cumulative_ones_replace() -> None:
    """The same export twice: a delta metric's counts double, a cumulative one's stay."""
    once = {h.name: h.total for h in _collected("genai-metrics.json").histograms()}
    twice = {h.name: h.total for h in _collected("genai-metrics.json", times=2).histograms()}
    assert twice["gen_ai.execute_tool.duration"] == 2 * once["gen_ai.execute_tool.duration"]
    gemini = _collected("gemini-cli-metrics.json", times=2).histograms()
    assert {h.name: h.total for h in gemini}["gemini_cli.tool.call.latency"] == 30


def test_genai_metrics_become_steps_and_tool_time() -> None:
    """Model calls per run -> `steps`, tool durations -> `tool_s` (estimated, from buckets);
    the rest absent; model call time and TTFT as quantiles in the notes."""
    (model,) = metric_workloads(_collected("genai-metrics.json").histograms())
    steps, tool_s = model.parameters.steps, model.parameters.tool_s
    assert steps.distribution is not None and tool_s.distribution is not None
    assert steps.distribution.quantile(0.5) == pytest.approx(8.0)  # 10 of 20 runs <= 8 calls
    assert steps.provenance.status == "estimated" and steps.provenance.observations == 20
    assert tool_s.distribution.quantile(1.0) == pytest.approx(19.0)  # the point's max
    assert model.parameters.output_tokens.provenance.status == "absent"
    assert any(n.startswith("gen_ai.client.operation.duration") for n in model.notes)
    assert any("TTFT (client)" in n for n in model.notes)


def test_gemini_metrics_in_seconds_with_the_overflow_capped(tmp_path: Path) -> None:
    """Gemini CLI's milliseconds become seconds; its tool latency, with no max, caps the
    overflow bucket at the last bound and says so; the model file reads back."""
    (model,) = metric_workloads(_collected("gemini-cli-metrics.json").histograms())
    tool_s = model.parameters.tool_s
    assert tool_s.distribution is not None
    assert tool_s.distribution.quantile(1.0) == pytest.approx(10.0)
    assert any("capped" in how for how in tool_s.provenance.how)
    path = tmp_path / f"{model.name}.workload.yaml"
    path.write_text(dump_workload(model))
    assert load_workload(path).parameters.tool_s == tool_s


def test_a_one_bucket_histogram_is_a_point() -> None:
    """All values in one bucket with min = max: a distribution of that one value."""
    histogram = Histogram("s", "m", "s", [1.0, 2.0], [0, 4, 0], 4, min=1.5, max=1.5)
    distribution, capped = histogram_distribution(histogram)
    assert distribution.quantile(0.3) == 1.5 and not capped


def test_damaged_points_are_dropped() -> None:
    """Bucket counts that do not add up to the count, or a bound past any float (10**400,
    which raised OverflowError before): the point is not a distribution, the rest stay."""
    body = json.loads((GOLDEN / "genai-metrics.json").read_text())
    metrics = body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
    metrics[0]["histogram"]["dataPoints"][0]["count"] = "999"
    metrics[1]["histogram"]["dataPoints"][0]["explicitBounds"][0] = 10**400
    decoded = decode_metrics(json.dumps(body).encode(), "application/json")
    names = {h.name for h in decoded.histograms}
    assert not names & {"gen_ai.invoke_agent.inference_calls", "gen_ai.invoke_agent.tool_calls"}
    assert "gen_ai.execute_tool.duration" in names
