"""Where an assumed parameter flips a claim's verdict (`TestPlan.break_even`).

A verdict can rest on a value the source never published (the hidden reasoning tokens a
slow model spends per step). The lab then searches that knob, set on both sides, for the
value at which the verdict stops being what it is at the assumed value: it judges the
assumed value and the two ends of the searched range with the real re-timing and the
claim's own verdict rule (`judge`), and bisects between the assumed value and the first
end whose verdict differs, assuming one change in between (the gain moves one way with the
knob). The result reads "supported if hidden reasoning >= 128 tokens per step; assumed 300".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from looplab.claims.model import BreakEven

__all__ = ["BISECTIONS", "BreakEvenResult", "break_even_text", "find_break_even"]

BISECTIONS = 14
"""Bisection steps: the range / 2^14 (under 0.1% of it)."""


@dataclass(frozen=True)
class BreakEvenResult:
    """The searched boundary of one verdict."""

    spec: BreakEven
    verdict: str
    """The verdict at the assumed value."""
    value: float | None
    """The knob value where it changes (None: the same verdict over the whole range)."""
    above: bool
    """True: the verdict holds at and above `value`; False: at and below it."""
    other: str | None
    """The verdict beyond the boundary."""


def find_break_even(spec: BreakEven, judge: Callable[[float], str]) -> BreakEvenResult:
    """The boundary (module docstring); `judge(knob value)` gives the verdict there."""
    verdict = judge(spec.assumed)
    for end in (spec.low, spec.high):
        other = judge(end)
        if other == verdict:
            continue
        inside, outside = spec.assumed, end
        for _ in range(BISECTIONS):
            middle = (inside + outside) / 2
            if judge(middle) == verdict:
                inside = middle
            else:
                outside = middle
        return BreakEvenResult(spec, verdict, inside, above=end < spec.assumed, other=other)
    return BreakEvenResult(spec, verdict, None, above=True, other=None)


def break_even_text(result: BreakEvenResult) -> str:
    """`supported if hidden reasoning >= 128 tokens per step (below: ...); assumed 300`."""
    spec = result.spec
    unit = f" {spec.unit}" if spec.unit else ""
    assumed = f"assumed {spec.assumed * spec.per_unit:g}{unit}"
    if result.value is None:
        low, high = spec.low * spec.per_unit, spec.high * spec.per_unit
        return f"{result.verdict} at every {spec.label} from {low:g} to {high:g}{unit}; {assumed}"
    sign = ">=" if result.above else "<="
    beyond = "below" if result.above else "above"
    shown = result.value * spec.per_unit
    return (
        f"{result.verdict} if {spec.label} {sign} {shown:.0f}{unit} ({beyond}: {result.other}); "
        f"{assumed}"
    )
