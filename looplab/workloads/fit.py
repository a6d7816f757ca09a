"""`looplab calibrate`: fit a workload model from traces, and say how good the fit is.

Fitting (pure Python): a parameter whose values are small counts (integers with at most
12 distinct values) gets a `categorical` distribution of exactly those values; any
other gets an `empirical` one, its quantiles at `KNOTS` (the observed minimum and
maximum included), so a heavy tail is kept as observed and never smoothed into a normal.
Provenance comes from `looplab.workloads.observe`.

The fit report has two parts:

1. per parameter, observed vs fitted p10/p50/p90/p99 and the one-sample KS distance
   between the observations and the fitted distribution (how much the knots'
   interpolation loses);
2. per task, the totals (steps, output tokens, tool time, other time, final prompt) of
   `SIMULATED_TASKS` shapes drawn from the model (fewer for very long tasks: at most
   `SIMULATED_STEPS` steps in all, never fewer than `MIN_SIMULATED_TASKS` shapes, so ten
   thousand sub-runs draw no millions of steps) against the observed tasks' totals, with
   the two-sample KS distance. Parameters are drawn independently, so this is where a
   model of marginals shows its limits (e.g. long tasks whose tools are also slow).

Flags: `poor fit` when a parameter's KS exceeds `POOR_KS`, or a task total's exceeds
the 5% critical value; `few observations` below `FEW`; `absent`; `estimated`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from looplab.clock import utc_now
from looplab.distributions import Categorical, Empirical
from looplab.stats.order import ks_critical, ks_one_sample, ks_two_sample, quantile
from looplab.traces.io import Trace
from looplab.workloads.model import (
    FittedFrom,
    Parameter,
    Provenance,
    ToolNames,
    WorkloadModel,
    WorkloadParameters,
)
from looplab.workloads.observe import PARAMETERS, Observation, Observations, observe
from looplab.workloads.sample import draw_shape
from looplab.workloads.shape import TaskShape

__all__ = [
    "KNOTS",
    "REPORT_QUANTILES",
    "Calibration",
    "FitRow",
    "calibrate",
    "fit_values",
]

KNOTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
"""Probabilities at which an empirical distribution keeps the observed quantiles."""
REPORT_QUANTILES = (0.1, 0.5, 0.9, 0.99)
"""Quantiles printed for observed vs fitted."""
CATEGORICAL_MAX = 12
"""Integer parameters with at most this many distinct values are fitted as categorical."""
POOR_KS = 0.1
"""A parameter's one-sample KS distance above this is flagged `poor fit`."""
FEW = 20
"""Fewer observations than this are flagged."""
SIMULATED_TASKS = 400
"""Shapes drawn to compare per-task totals with the observed tasks."""
SIMULATED_STEPS = 40_000
"""Most steps drawn in all for that comparison (400 tasks of 100 steps); longer observed
tasks draw fewer shapes (memory and time stay bounded: docs/reliability.md)."""
MIN_SIMULATED_TASKS = 8
"""Fewest shapes drawn for the comparison, however long the observed tasks."""

_INTEGER = {
    "steps",
    "output_tokens",
    "reasoning_tokens",
    "initial_prompt_tokens",
    "new_prompt_tokens",
    "tool_calls",
}


@dataclass(frozen=True)
class FitRow:
    """One line of the fit report."""

    name: str
    per: str
    status: str
    observations: int
    observed: tuple[float, ...]
    fitted: tuple[float, ...]
    ks: float
    flags: list[str]


@dataclass
class Calibration:
    """A fitted model and its report."""

    model: WorkloadModel
    parameters: list[FitRow] = field(default_factory=list)
    totals: list[FitRow] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def fit_values(values: Sequence[float], *, integer: bool) -> Categorical | Empirical | None:
    """The distribution `calibrate` fits to `values` (module docstring); None if empty."""
    if not values:
        return None
    distinct = sorted(set(values))
    if len(distinct) == 1 or (integer and len(distinct) <= CATEGORICAL_MAX):
        weights = [float(sum(1 for v in values if v == d)) for d in distinct]
        return Categorical(values=distinct, weights=weights)
    return Empirical(
        probabilities=list(KNOTS), values=[round(quantile(values, q), 6) for q in KNOTS]
    )


def _provenance(observation: Observation, absent_why: str) -> Provenance:
    n = len(observation.values)
    if n == 0:
        return Provenance(status="absent", how=[absent_why])
    status = "estimated" if observation.estimated else "measured"
    return Provenance(
        status=status,
        how=list(observation.how)[:6],
        observations=n,
        estimated=observation.estimated,
        traces=list(observation.traces),
    )


def calibrate(traces: Sequence[Trace], name: str, description: str = "") -> Calibration:
    """Fit a workload model to `traces` and build its report (module docstring)."""
    found = observe(traces)
    params: dict[str, Parameter] = {}
    for key in PARAMETERS:
        observation = found.parameters[key]
        params[key] = Parameter(
            distribution=fit_values(observation.values, integer=key in _INTEGER),
            provenance=_provenance(observation, f"no trace recorded {key}"),
        )
    names = ToolNames(
        weights={k: float(v) for k, v in found.tool_names.most_common()},
        provenance=_provenance(
            Observation(
                values=[1.0] * sum(found.tool_names.values()), traces=found.tool_name_traces
            ),
            "no trace recorded a tool call",
        ),
    )
    model = WorkloadModel(
        name=name,
        description=description,
        fitted_from=_fitted_from(found),
        parameters=WorkloadParameters(tool_names=names, **params),
    )
    result = Calibration(model=model, skipped=found.skipped)
    result.parameters = [_parameter_row(key, found.parameters[key], params[key]) for key in params]
    if found.shapes:
        result.totals = _total_rows(model, found.shapes)
    flagged = [f"{r.name}: {', '.join(r.flags)}" for r in result.parameters + result.totals]
    notes = [f"fit flags: {line}" for line in flagged if "poor fit" in line]
    result.model = model.model_copy(update={"notes": notes + found.skipped})
    return result


def _fitted_from(found: Observations) -> FittedFrom:
    headers = found.headers
    return FittedFrom(
        traces=list(found.labels),
        sources=sorted({h.source for h in headers}),
        agents=sorted({h.agent for h in headers if h.agent}),
        models=sorted({h.model for h in headers if h.model}),
        created=utc_now(),
    )


def _quantiles(values: Sequence[float]) -> tuple[float, ...]:
    return tuple(quantile(values, q) for q in REPORT_QUANTILES)


def _parameter_row(name: str, observation: Observation, parameter: Parameter) -> FitRow:
    values = observation.values
    status = parameter.provenance.status
    flags: list[str] = []
    fitted: tuple[float, ...] = tuple(math.nan for _ in REPORT_QUANTILES)
    ks = math.nan
    distribution = parameter.distribution
    if distribution is None:
        flags.append("absent")
    else:
        fitted = tuple(distribution.quantile(q) for q in REPORT_QUANTILES)
        ks = ks_one_sample(values, distribution.cdf, distribution.cdf_left)
        if ks > POOR_KS:
            flags.append("poor fit")
        if len(values) < FEW:
            flags.append("few observations")
    if status == "estimated":
        estimated = parameter.provenance.estimated
        flags.append(
            "estimated" + ("" if estimated == len(values) else f" {estimated}/{len(values)}")
        )
    return FitRow(
        name, PARAMETERS[name], status, len(values), _quantiles(values), fitted, ks, flags
    )


_TOTALS: dict[str, Callable[[TaskShape], float | None]] = {
    "task steps": lambda s: len(s.steps),
    "task output tokens": lambda s: sum(step.output_tokens for step in s.steps),
    "task tool s": lambda s: sum(step.tool_s for step in s.steps),
    "task other s": lambda s: sum(step.other_s for step in s.steps),
    "task final prompt tokens": lambda s: s.steps[-1].prompt_tokens,
}
"""Per-task totals compared between observed tasks and tasks drawn from the model."""


def _total_rows(model: WorkloadModel, observed: list[TaskShape]) -> list[FitRow]:
    longest = max((len(shape.steps) for shape in observed), default=1)
    count = max(MIN_SIMULATED_TASKS, min(SIMULATED_TASKS, SIMULATED_STEPS // max(1, longest)))
    drawn = [draw_shape(model, seed) for seed in range(count)]
    rows: list[FitRow] = []
    for name, total in _TOTALS.items():
        seen = [v for v in map(total, observed) if v is not None]
        simulated = [v for v in map(total, drawn) if v is not None]
        if not seen or not simulated:
            continue
        ks = ks_two_sample(seen, simulated)
        flags = []
        if ks > ks_critical(len(seen), len(simulated)):
            flags.append("poor fit")
        if len(seen) < FEW:
            flags.append("few observations")
        rows.append(
            FitRow(
                name, "task", "drawn", len(seen), _quantiles(seen), _quantiles(simulated), ks, flags
            )
        )
    return rows
