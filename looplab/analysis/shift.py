"""Behaviour shift between two arms: paired per task, what the agent did differently.

`behaviour_of(trace)` counts, for one run: steps (model calls' steps), tool calls (the
`finish` call excluded), output tokens (completion tokens, hidden reasoning included),
retries (failed model-call attempts, plus tool calls that re-run a tool whose previous
call failed: a non-zero exit, `ok: false`, an `ERROR` result or failing tests) and
repeated reads (a read-only call, `READ_TOOLS`, with the same arguments as an earlier one
in the run). `behaviour_shift(a, b)` pairs the two arms by task (each task's mean per
arm), and gives per measure the arms' means, the mean and median change (B - A) and the
sign-flip permutation p-value (`looplab.stats.paired`): a model that needs more steps
shows a shift; the same runs under shuffled labels do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from looplab.stats.order import median
from looplab.stats.paired import sign_flip_p
from looplab.traces.io import Trace

__all__ = [
    "MEASURES",
    "READ_TOOLS",
    "Behaviour",
    "ShiftRow",
    "behaviour_of",
    "behaviour_shift",
]

READ_TOOLS = frozenset(
    {"read_file", "list_files", "browse", "snapshot", "search", "grep", "view", "cat"}
)
"""Tools that only read: a second identical call is a repeated read."""

MEASURES = ("steps", "tool_calls", "output_tokens", "retries", "repeated_reads")
"""The measures compared, in table order."""


@dataclass(frozen=True)
class Behaviour:
    """What one run did (see the module doc for each count)."""

    task: str
    steps: int
    tool_calls: int
    output_tokens: int
    retries: int
    repeated_reads: int


@dataclass(frozen=True)
class ShiftRow:
    """One measure compared between the arms over the paired tasks."""

    measure: str
    n: int
    """Paired tasks."""
    mean_a: float
    mean_b: float
    mean_change: float
    """Mean over tasks of (B - A)."""
    median_change: float
    p_value: float
    """Sign-flip permutation p-value of "no shift" (two-sided)."""

    @property
    def shifted(self) -> bool:
        """p < 0.05."""
        return self.p_value < 0.05


def _failed(ok: bool | None, exit_code: int | None, output: str | None) -> bool:
    text = (output or "")[:4000]
    return (
        ok is False
        or (exit_code is not None and exit_code != 0)
        or text.startswith("ERROR")
        or " failed" in text
        or "FAILED" in text
    )


def behaviour_of(trace: Trace) -> Behaviour:
    """The counts of one run (a complete trace; `task` is the header's task or `?`)."""
    calls = trace.model_calls()
    tools = sorted(trace.tool_calls(), key=lambda t: t.start)
    end = trace.end
    retries = sum(len(c.attempts) for c in calls)
    seen: set[tuple[str, str]] = set()
    repeated = 0
    last_failed: dict[str, bool] = {}
    count = 0
    for tool in tools:
        if tool.name == "finish":
            continue
        count += 1
        key = (tool.name, tool.arguments)
        if tool.name in READ_TOOLS:
            repeated += key in seen
            seen.add(key)
        if last_failed.get(tool.name):
            retries += 1
        last_failed[tool.name] = _failed(tool.ok, tool.exit_code, tool.output)
    steps = end.steps if end is not None else len({c.step for c in calls})
    return Behaviour(
        task=trace.header.task or "?",
        steps=steps,
        tool_calls=count,
        output_tokens=sum(c.completion_tokens or 0 for c in calls),
        retries=retries,
        repeated_reads=repeated,
    )


def _per_task(runs: Sequence[Behaviour], measure: str) -> dict[str, float]:
    grouped: dict[str, list[float]] = {}
    for run in runs:
        grouped.setdefault(run.task, []).append(float(getattr(run, measure)))
    return {task: sum(v) / len(v) for task, v in grouped.items()}


def behaviour_shift(
    a: Sequence[Behaviour], b: Sequence[Behaviour], *, seed: int = 0
) -> list[ShiftRow]:
    """Per measure (`MEASURES`), arm B against arm A on the tasks both ran.

    Raises:
        ValueError: no task run by both arms.
    """
    rows = []
    for measure in MEASURES:
        per_a, per_b = _per_task(a, measure), _per_task(b, measure)
        tasks = sorted(set(per_a) & set(per_b))
        if not tasks:
            raise ValueError("no task was run by both arms: nothing to pair")
        changes = [per_b[t] - per_a[t] for t in tasks]
        rows.append(
            ShiftRow(
                measure=measure,
                n=len(tasks),
                mean_a=sum(per_a[t] for t in tasks) / len(tasks),
                mean_b=sum(per_b[t] for t in tasks) / len(tasks),
                mean_change=sum(changes) / len(changes),
                median_change=median(changes),
                p_value=sign_flip_p(changes, seed=seed),
            )
        )
    return rows
