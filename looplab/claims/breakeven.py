"""Where an assumed parameter flips a claim's verdict (`TestPlan.break_even`).

A verdict can rest on a value the source never published (the hidden reasoning tokens a
slow model spends per step). The lab then searches that knob, set on both sides, for the
value at which the verdict stops being what it is at the assumed value: it judges the
assumed value and the two ends of the searched range with the real re-timing and the
claim's own verdict rule (`judge`), and bisects between the assumed value and the first
end whose verdict differs, assuming one change in between (the gain moves one way with the
knob). The result reads "supported if hidden reasoning >= 128 tokens per step; assumed 300".

The bisection stops once both ends of the bracket print the same (`shown`, the whole
display units of the text): the boundary lies between them, so any further step prints
that same number; each step is a re-timing of the whole evidence, so this saves about a
third of the search. At most `BISECTIONS` steps (a boundary on a half unit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from looplab.cache import stored_number
from looplab.claims.model import BreakEven

__all__ = [
    "BISECTIONS",
    "BreakEvenResult",
    "break_even_text",
    "find_break_even",
    "result_from_json",
    "result_json",
    "shown",
]

BISECTIONS = 14
"""Most bisection steps: the range / 2^14 (under 0.1% of it); fewer once the bracket's
two ends print the same."""


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
            if shown(spec, inside) == shown(spec, outside):
                break
            middle = (inside + outside) / 2
            if judge(middle) == verdict:
                inside = middle
            else:
                outside = middle
        return BreakEvenResult(spec, verdict, inside, above=end < spec.assumed, other=other)
    return BreakEvenResult(spec, verdict, None, above=True, other=None)


def result_json(result: BreakEvenResult) -> dict[str, Any]:
    """The found boundary as JSON (without its spec, which the entry carries)."""
    return {
        "verdict": result.verdict,
        "value": result.value,
        "above": result.above,
        "other": result.other,
    }


def result_from_json(spec: BreakEven, raw: Any) -> BreakEvenResult:
    """`result_json`'s value read back, every field checked (a cache file is outside input).

    Raises:
        TypeError: not an object of exactly those fields, or a field of another type.
    """
    if not isinstance(raw, dict) or set(raw) != {"verdict", "value", "above", "other"}:
        raise TypeError("break-even: expected an object of verdict, value, above, other")
    verdict, value, above, other = raw["verdict"], raw["value"], raw["above"], raw["other"]
    if not isinstance(verdict, str) or not isinstance(above, bool):
        raise TypeError("break-even: verdict must be a string, above a boolean")
    if other is not None and not isinstance(other, str):
        raise TypeError("break-even: other must be a string or null")
    found = None if value is None else stored_number(value, "break-even: value")
    return BreakEvenResult(spec, verdict, found, above=above, other=other)


def shown(spec: BreakEven, value: float) -> str:
    """A knob value as the text prints it: whole display units (`value * per_unit`)."""
    return f"{value * spec.per_unit:.0f}"


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
    value = shown(spec, result.value)
    return (
        f"{result.verdict} if {spec.label} {sign} {value}{unit} ({beyond}: {result.other}); "
        f"{assumed}"
    )
