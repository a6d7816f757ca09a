"""OpenTelemetry metrics -> a workload model's observations (distributions, never runs).

A metric histogram says how values spread, not which run had which: it cannot be a
trace, but it can be a workload parameter's distribution. `METRIC_RULES` (a metric joins
by one line) maps a metric to the parameter it observes, or to none (a value the model
has no parameter for, kept in the model's notes as quantiles: model call time, TTFT, task
time). Names: the OpenTelemetry GenAI metrics (semantic-conventions `gen-ai-metrics.md`,
agent metrics `gen_ai.invoke_agent.*` and `gen_ai.execute_tool.duration`; read in
secondary sources, instrumentations and notes that emit them, 2026-12) and Gemini CLI's
(`packages/core/src/telemetry/metrics.ts`: `gemini_cli.api.request.latency`,
`gemini_cli.tool.call.latency`, `gemini_cli.agent.duration`, milliseconds).

A histogram becomes an `Empirical` distribution whose knots are its bucket edges at
their cumulative shares (values spread linearly inside a bucket): every such parameter is
ESTIMATED, said in its provenance. The lowest edge is the point's `min` (else 0), the
overflow bucket's top its `max` (else the last bound: capped, said). Units: `ms` and `s`
as the metric says (else the rule's), counts as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.clock import utc_now
from looplab.distributions import Empirical
from looplab.traces.collect.metrics import Histogram
from looplab.workloads.model import (
    FittedFrom,
    Parameter,
    Provenance,
    ToolNames,
    WorkloadModel,
    WorkloadParameters,
)
from looplab.workloads.observe import PARAMETERS

__all__ = [
    "METRIC_RULES",
    "MetricRule",
    "histogram_distribution",
    "metric_workloads",
    "workload_from_metrics",
]


@dataclass(frozen=True)
class MetricRule:
    """What one metric observes."""

    parameter: str | None
    """The workload parameter (None: kept in the notes only)."""
    meaning: str
    """What a value is, for the notes and the provenance."""
    unit: str = ""
    """The unit when the metric names none (`ms`, `s`; empty: a count)."""


METRIC_RULES: dict[str, MetricRule] = {
    "gen_ai.invoke_agent.inference_calls": MetricRule("steps", "model calls per agent run"),
    "gen_ai.execute_tool.duration": MetricRule("tool_s", "a tool call's time", "s"),
    "gemini_cli.tool.call.latency": MetricRule("tool_s", "a tool call's time", "ms"),
    "gen_ai.invoke_agent.tool_calls": MetricRule(None, "tool calls per agent run"),
    "gen_ai.invoke_agent.duration": MetricRule(None, "an agent run's time", "s"),
    "gemini_cli.agent.duration": MetricRule(None, "an agent run's time", "ms"),
    "gen_ai.client.operation.duration": MetricRule(None, "a model call's time", "s"),
    "gemini_cli.api.request.latency": MetricRule(None, "a model call's time", "ms"),
    "gen_ai.client.operation.time_to_first_chunk": MetricRule(None, "TTFT (client)", "s"),
    "gen_ai.client.time_to_first_chunk": MetricRule(None, "TTFT (client)", "s"),
    "gen_ai.server.time_to_first_token": MetricRule(None, "TTFT (server)", "s"),
}
"""Metric name -> what it observes."""

_SCALE = {"ms": 1e-3, "s": 1.0}
_NAME = re.compile(r"[^A-Za-z0-9_.+-]+")


def histogram_distribution(histogram: Histogram, scale: float = 1.0) -> tuple[Empirical, bool]:
    """The histogram as quantile knots (module docstring), and whether its overflow bucket
    was capped at the last bound (no `max` given).

    Raises:
        ValueError: an empty histogram.
    """
    if histogram.total <= 0:
        raise ValueError(f"{histogram.name}: no values")
    bounds, counts = histogram.bounds, histogram.counts
    low = histogram.min if histogram.min is not None else 0.0
    high = histogram.max if histogram.max is not None else (bounds[-1] if bounds else low)
    high = max(high, low)

    def clip(value: float) -> float:
        return min(max(value, low), high)

    def lower(index: int) -> float:
        return bounds[index - 1] if index > 0 else low

    def upper(index: int) -> float:
        return bounds[index] if index < len(bounds) else high

    first = next(i for i, n in enumerate(counts) if n > 0)
    probabilities, values, seen = [0.0], [clip(lower(first))], 0
    for index, n in enumerate(counts):
        if n > 0:
            seen += n
            probabilities.append(seen / histogram.total)
            values.append(max(values[-1], clip(upper(index))))
    capped = counts[-1] > 0 and histogram.max is None
    return Empirical(probabilities=probabilities, values=[v * scale for v in values]), capped


def workload_from_metrics(histograms: Sequence[Histogram], service: str) -> WorkloadModel:
    """The workload model one service's metrics observe: the parameters `METRIC_RULES`
    maps (estimated, from buckets), every other parameter absent, and the notes'
    quantiles of the metrics no parameter holds."""
    params: dict[str, Parameter] = {}
    notes: list[str] = []
    for histogram in histograms:
        rule = METRIC_RULES.get(histogram.name)
        if rule is None or histogram.total <= 0:
            continue
        scale = _SCALE.get(histogram.unit or rule.unit, 1.0)
        try:
            distribution, capped = histogram_distribution(histogram, scale)
        except ValueError as exc:  # knots the distribution refuses: damage, said
            notes.append(f"{histogram.name}: not a distribution ({str(exc)[:120]})")
            continue
        how = [
            f"{histogram.name}: OTLP histogram of {rule.meaning} ({histogram.total} values), "
            "linear within its buckets"
        ]
        if capped:
            how.append("values above the last bucket bound capped at it (no max given)")
        if rule.parameter is not None and rule.parameter not in params:
            params[rule.parameter] = Parameter(
                distribution=distribution,
                provenance=Provenance(
                    status="estimated",
                    how=how,
                    observations=histogram.total,
                    estimated=histogram.total,
                    traces=[f"otlp-metrics:{service}"],
                ),
            )
        else:
            shown = ", ".join(
                f"p{int(q * 100)} {distribution.quantile(q):.4g}" for q in (0.1, 0.5, 0.9)
            )
            unit = " s" if (histogram.unit or rule.unit) in _SCALE else ""
            notes.append(f"{histogram.name} ({rule.meaning}, n={histogram.total}): {shown}{unit}")
    for name in PARAMETERS:
        params.setdefault(
            name,
            Parameter(provenance=Provenance(status="absent", how=[f"no metric observes {name}"])),
        )
    names = ToolNames(provenance=Provenance(status="absent", how=["metrics name no tools"]))
    return WorkloadModel(
        name=_NAME.sub("-", f"otlp-metrics-{service}").strip("-.") or "otlp-metrics",
        description=f"observed from {service}'s OpenTelemetry metrics (distributions, no runs)",
        fitted_from=FittedFrom(sources=[f"otlp-metrics:{service}"], created=utc_now()),
        parameters=WorkloadParameters(tool_names=names, **params),
        notes=notes,
    )


def metric_workloads(histograms: Sequence[Histogram]) -> list[WorkloadModel]:
    """One workload model per service whose metrics `METRIC_RULES` knows (others: none)."""
    services = sorted({h.service for h in histograms if h.name in METRIC_RULES and h.total})
    return [
        workload_from_metrics([h for h in histograms if h.service == service], service)
        for service in services
    ]
