"""A step's split into model, tool and overhead time: the one formula.

The model phase is the step's model call, widened by whoever measured more (the live loop:
from the step's start, so retries, back-off and a planning call count), plus the model calls
that start once it ended (reflection). `tool_s` is the union of the tool calls' spans
outside the model phase: parallel calls count once, a tool a harness starts while the model
still streams counts only after the reply, and the gaps between calls are not tool time.
The rest of the step's wall time is overhead, so `model_s + tool_s + overhead_s` is it.
The agent loop's own records (`agents/records.py`) and the trace builder both use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = ["Span", "StepSplit", "step_split", "union_outside"]

Span = tuple[float, float]
"""(start, end) seconds on one clock."""


class StepSplit(NamedTuple):
    """A step's time by part; `model_s + tool_s + overhead_s` is its wall time."""

    model_s: float
    tool_s: float
    overhead_s: float


def step_split(
    start: float,
    end: float,
    model: Span | None,
    tools: Sequence[Span],
    later_calls: Iterable[Span] = (),
) -> StepSplit:
    """The split of a step from `start` to `end` (see the module docstring).

    Args:
        start: the step's start.
        end: its end.
        model: the model phase (None: the step had no model call).
        tools: the tool calls' spans.
        later_calls: the step's other model calls; those starting at or after the model
            phase's end (reflection) add to `model_s`, earlier ones lie inside it.
    """
    model_s = 0.0
    if model is not None:
        model_s = model[1] - model[0]
        model_s += sum(b - a for a, b in later_calls if a >= model[1])
    tool_s = union_outside(tools, model or (start, start))
    return StepSplit(model_s, tool_s, max(0.0, (end - start) - model_s - tool_s))


def union_outside(intervals: Iterable[Span], hole: Span) -> float:
    """Length of the union of `intervals` minus the part inside `hole`."""
    pieces: list[Span] = []
    for start, end in intervals:
        for a, b in ((start, min(end, hole[0])), (max(start, hole[1]), end)):
            if b > a:
                pieces.append((a, b))
    pieces.sort()
    total, cur_a, cur_b = 0.0, None, None
    for a, b in pieces:
        if cur_b is None or a > cur_b:
            if cur_a is not None and cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_a is not None and cur_b is not None:
        total += cur_b - cur_a
    return total
