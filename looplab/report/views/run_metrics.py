"""The per-run numbers every comparison and run list shows, read in one place.

`run_metrics(record)` is the one accessor: the side-by-side compare (`side_by_side.py`),
`looplab diff`, the dashboard's run lists and their filters all read a run's time,
outcome, cost, steps, tokens, model, agent and profile through it, so a field added to
run records later (a model on every run, a success rate) changes here only.

Cost is the run's recorded cost (`looplab.analysis.cost.recorded_cost`: its tokens at the
price entry its profile names); None when the profile names no entry or no call was
priced. Tokens are prompt + completion tokens over the run's model calls (sub-runs'
calls included); None when no call recorded them.
"""

from __future__ import annotations

from dataclasses import dataclass

from looplab.analysis.cost import recorded_cost
from looplab.errors import ConfigError
from looplab.report.data.records import RunRecord

__all__ = ["METRICS", "OUTCOMES", "Metric", "RunMetrics", "outcome_words", "run_metrics"]

OUTCOMES = {True: "solved", False: "not solved", None: "not checked"}
"""A checker verdict in words (`RunRecord.success`)."""


@dataclass(frozen=True)
class RunMetrics:
    """One run's numbers as the run lists and comparisons show them."""

    time_s: float
    success: bool | None
    outcome: str
    """`solved`, `not solved` or `not checked`."""
    cost_usd: float | None
    steps: int
    tokens: int | None
    model: str
    """The model the header names, else "" (not recorded)."""
    agent: str
    profile: str
    subruns: int
    """Sub-runs (sub-agents) in the run's trace."""


@dataclass(frozen=True)
class Metric:
    """A compared quantity: its key on `RunMetrics`, its label and which way is better."""

    key: str
    label: str
    lower_is_better: bool
    unit: str


METRICS = (
    Metric("time_s", "time", True, "s"),
    Metric("success", "success", False, "rate"),
    Metric("cost_usd", "cost", True, "$"),
    Metric("steps", "steps", True, ""),
    Metric("tokens", "tokens", True, ""),
)
"""What a side-by-side compares, in column order."""


def outcome_words(record: RunRecord) -> str:
    """The run's outcome in words."""
    return OUTCOMES[record.success]


def run_metrics(record: RunRecord) -> RunMetrics:
    """The numbers of one run (see the module doc for cost and tokens)."""
    trace = record.trace
    cost: float | None = None
    tokens: int | None = None
    model = ""
    subruns = 0
    if trace is not None:
        model = trace.header.model or ""
        try:
            priced = recorded_cost(trace)
        except ConfigError:  # a price entry that no longer exists: shown as unknown
            priced = None
        if priced is not None and priced.priced_calls:
            cost = priced.total_usd
        counted = [
            (c.prompt_tokens or 0) + (c.completion_tokens or 0)
            for c in trace.model_calls()
            if c.prompt_tokens is not None or c.completion_tokens is not None
        ]
        tokens = sum(counted) if counted else None
        subruns = sum(1 for e in trace.events if e.kind == "subrun")
    return RunMetrics(
        time_s=record.task_s,
        success=record.success,
        outcome=outcome_words(record),
        cost_usd=cost,
        steps=record.steps,
        tokens=tokens,
        model=model,
        agent=record.agent,
        profile=record.profile,
        subruns=subruns,
    )
