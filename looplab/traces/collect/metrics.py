"""OTLP/HTTP metric request bodies -> histograms, merged per (service, metric).

`decode_metrics(body, content_type, content_encoding)` reads one
`ExportMetricsServiceRequest` (`resourceMetrics[].scopeMetrics[].metrics[]`) and keeps its
explicit-bucket histogram points (`histogram.dataPoints[]`: `explicitBounds`,
`bucketCounts`, `count`, `sum`, `min`, `max`, `attributes`; the metric's `unit` and
`aggregationTemporality`, 1 delta / 2 cumulative). Sums, gauges and exponential
histograms are counted, not kept: a distribution needs buckets. Body decoding is
`spans.py`'s (one reader of OTLP/JSON values).

`MetricsCollector` holds the latest cumulative point per (service, metric, attribute set)
and adds delta points up; `histograms()` merges a metric's attribute sets (same bounds)
into one `Histogram` per (service, metric). Metrics give distributions, never runs: the
workload layer turns them into a workload model's observations
(`looplab.workloads.metrics`).
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from dataclasses import dataclass, field
from typing import Any

from looplab.traces.collect.documents import export_document
from looplab.traces.collect.spans import _dict, _list, _value

__all__ = ["Histogram", "MetricsCollector", "decode_metrics"]

_DELTA = 1


@dataclass
class Histogram:
    """One explicit-bucket histogram: `counts[i]` values in (bounds[i-1], bounds[i]], the
    last count above the last bound."""

    service: str
    name: str
    unit: str
    bounds: list[float]
    counts: list[int]
    total: int
    sum: float | None = None
    min: float | None = None
    max: float | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    delta: bool = False


@dataclass
class DecodedMetrics:
    """One export's histograms, and how many other points it held."""

    histograms: list[Histogram]
    other_points: int = 0


def decode_metrics(body: bytes, content_type: str, content_encoding: str = "") -> DecodedMetrics:
    """The histogram points of one OTLP/HTTP metrics export.

    Raises:
        BadRequest: an unsupported type (415) or encoding, a body that does not decode, or
            one that is not a metrics export (named where).
    """
    document = export_document(
        body, content_type, content_encoding, _metrics_request, "resourceMetrics"
    )
    out = DecodedMetrics([])
    for r, resource_metrics in enumerate(_list(document, "resourceMetrics", "body")):
        where = f"resourceMetrics[{r}]"
        resource = _attributes(_dict(_dict(resource_metrics, where).get("resource"), where))
        service = str(resource.get("service.name") or "unknown")
        for s, scope in enumerate(_list(resource_metrics, "scopeMetrics", where)):
            inner = f"{where}.scopeMetrics[{s}]"
            for m, metric in enumerate(_list(_dict(scope, inner), "metrics", inner)):
                _metric(_dict(metric, f"{inner}.metrics[{m}]"), service, out)
    return out


def _metrics_request() -> Any:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    return ExportMetricsServiceRequest()


def _metric(metric: dict[str, Any], service: str, out: DecodedMetrics) -> None:
    name, unit = str(metric.get("name") or ""), str(metric.get("unit") or "")
    histogram = metric.get("histogram")
    if not isinstance(histogram, dict):
        for other in ("sum", "gauge", "exponentialHistogram", "summary"):
            out.other_points += len(_list(_dict(metric.get(other), name), "dataPoints", name))
        return
    delta = histogram.get("aggregationTemporality") in (_DELTA, "AGGREGATION_TEMPORALITY_DELTA")
    for n, point in enumerate(_list(histogram, "dataPoints", name)):
        parsed = _point(_dict(point, f"{name}[{n}]"), service, name, unit, delta)
        if parsed is not None:
            out.histograms.append(parsed)


def _point(
    point: dict[str, Any], service: str, name: str, unit: str, delta: bool
) -> Histogram | None:
    """One data point; None when its buckets do not add up (damage is not a distribution)."""
    raw_bounds, raw_counts = point.get("explicitBounds") or [], point.get("bucketCounts") or []
    if not isinstance(raw_bounds, list) or not isinstance(raw_counts, list):
        return None
    bounds = [b for b in map(_float, raw_bounds) if b is not None]
    counts = [c for c in map(_count, raw_counts) if c is not None]
    total = _count(point.get("count"))
    if len(bounds) != len(raw_bounds) or len(counts) != len(raw_counts) or total is None:
        return None
    if len(counts) != len(bounds) + 1 or sum(counts) != total:
        return None
    if any(b <= a for a, b in itertools.pairwise(bounds)):
        return None
    return Histogram(
        service=service,
        name=name,
        unit=unit,
        bounds=bounds,
        counts=counts,
        total=total,
        sum=_float(point.get("sum")),
        min=_float(point.get("min")),
        max=_float(point.get("max")),
        attributes=_attributes(point),
        delta=delta,
    )


def _float(value: Any) -> float | None:
    """A finite number (JSON number or decimal string), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _count(value: Any) -> int | None:
    """A count in 0..2**63 (JSON number or decimal string), else None."""
    number = _float(value)
    if number is None or number < 0 or number >= 2**63 or number != int(number):
        return None
    return int(number)


def _attributes(owner: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in _list(owner, "attributes", "attributes")[:64]:
        entry = _dict(item, "attributes")
        key = entry.get("key")
        if isinstance(key, str):
            out[key] = _value(_dict(entry.get("value"), f"attribute {key}"), key, [])
    return out


class MetricsCollector:
    """Histogram points received, merged as the module docstring says (thread-safe)."""

    def __init__(self) -> None:
        self._points: dict[tuple[str, str, str], Histogram] = {}
        self._lock = threading.Lock()
        self.requests = 0
        self.other_points = 0
        self.last_request = 0.0

    def add(self, decoded: DecodedMetrics, now: float) -> None:
        """Keep one export's histogram points (the latest cumulative, deltas added)."""
        with self._lock:
            self.requests += 1
            self.last_request = now
            self.other_points += decoded.other_points
            for point in decoded.histograms:
                key = (point.service, point.name, json.dumps(point.attributes, sort_keys=True))
                held = self._points.get(key)
                if point.delta and held is not None and held.bounds == point.bounds:
                    _add(held, point)
                else:
                    self._points[key] = point

    def histograms(self) -> list[Histogram]:
        """One histogram per (service, metric): its attribute sets' points summed (a set
        whose bounds differ from the first's is left out)."""
        with self._lock:
            merged: dict[tuple[str, str], Histogram] = {}
            for (service, name, _), point in sorted(self._points.items()):
                held = merged.get((service, name))
                if held is None:
                    merged[(service, name)] = Histogram(
                        service,
                        name,
                        point.unit,
                        list(point.bounds),
                        list(point.counts),
                        point.total,
                        point.sum,
                        point.min,
                        point.max,
                    )
                elif held.bounds == point.bounds:
                    _add(held, point)
            return list(merged.values())


def _add(held: Histogram, point: Histogram) -> None:
    """`point`'s values added to `held` (same bounds)."""
    held.counts = [a + b for a, b in zip(held.counts, point.counts, strict=True)]
    held.total += point.total
    held.sum = None if held.sum is None or point.sum is None else held.sum + point.sum
    held.min = _extreme(min, held.min, point.min)
    held.max = _extreme(max, held.max, point.max)


def _extreme(pick: Any, a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return a if b is None else b
    return float(pick(a, b))
