"""The run axis of an import: absolute source times -> seconds since the run's origin.

The origin is the first model call's start (else the earliest time the draft has). Items
without times are placed at the last known time with zero length, and say so in their
`estimated` (`MISSING` ...), so a placeholder never passes for a measurement.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from looplab.traces.importers.drafts import RunDraft
from looplab.traces.importers.source import BadValue

__all__ = ["MISSING", "Axis", "is_timed", "run_origin", "union_outside"]

MISSING = "not in the source"
"""How every `estimated` entry of a time the source did not have begins."""
_PLACEHOLDER = f"{MISSING}: placed at the previous known time, zero length"
_AFTER_PREVIOUS = "the source records a duration, not times: placed after the previous item"


class Axis:
    """Maps absolute times to the run axis; untimed items go to the last known time.

    Args:
        origin: the absolute time of the run's zero, None when the draft has no times.
    """

    def __init__(self, origin: float | None) -> None:
        self.origin = origin
        self.cursor = 0.0
        """The latest end placed so far (where the next untimed item goes)."""

    def place(
        self,
        start: float | None,
        end: float | None,
        estimated: dict[str, str],
        duration: float | None = None,
    ) -> tuple[float, float]:
        """(start, end) on the axis; a missing side is filled and named in `estimated`.

        Args:
            start: absolute start, or None.
            end: absolute end, or None.
            estimated: the item's derived fields; placements are added to it.
            duration: a measured duration for an item without times, placed from the
                last known time (its start is then estimated, its length is not).

        Raises:
            BadValue: a time that is not a finite number.
        """
        if start is None and end is None and duration is not None:
            if not math.isfinite(duration) or duration < 0:
                raise BadValue(f"a duration of {duration!r} s")
            estimated.setdefault("start", _AFTER_PREVIOUS)
            estimated.setdefault("end", "start plus the recorded duration")
            begin = self.cursor
            self.cursor = begin + duration
            return begin, self.cursor
        if start is None and end is None:
            estimated.setdefault("start", _PLACEHOLDER)
            estimated.setdefault("end", _PLACEHOLDER)
            return self.cursor, self.cursor
        if start is None:
            assert end is not None
            estimated.setdefault("start", f"{MISSING}: taken equal to end (zero length)")
            start = end
        if end is None:
            estimated.setdefault("end", f"{MISSING}: taken equal to start (zero length)")
            end = start
        if not (math.isfinite(start) and math.isfinite(end)):
            raise BadValue(f"a time of {start!r} -> {end!r} is not finite")
        base = self.origin or 0.0
        rel_start, rel_end = start - base, max(end, start) - base
        self.cursor = max(self.cursor, rel_end)
        return rel_start, rel_end

    def rel(self, value: float | None) -> float | None:
        """`value` on the axis (None stays None)."""
        if value is None:
            return None
        return value - (self.origin or 0.0)

    def wall(self, rel_start: float) -> datetime | None:
        """UTC wall time of an axis point, None when the run has no absolute times."""
        if self.origin is None:
            return None
        try:
            return datetime.fromtimestamp(self.origin, UTC) + timedelta(seconds=rel_start)
        except (OverflowError, ValueError):
            raise BadValue(f"{self.origin + rel_start!r} is not a wall time") from None


def run_origin(draft: RunDraft) -> float | None:
    """The first model call's start, else the earliest time of any call, else None."""
    for step in draft.steps:
        if step.model is not None and step.model.start is not None:
            return step.model.start
    times = [
        t
        for step in draft.steps
        for t in [
            *(x.start for x in step.tools),
            *(x.end for x in step.tools),
            *([step.model.end] if step.model else []),
        ]
        if t is not None
    ]
    return min(times) if times else None


def is_timed(estimated: dict[str, str]) -> bool:
    """False when start or end had to be placed because the source had none."""
    return not any(estimated.get(k, "").startswith(MISSING) for k in ("start", "end"))


def union_outside(intervals: Iterable[tuple[float, float]], hole: tuple[float, float]) -> float:
    """Length of the union of `intervals` minus the part inside `hole`."""
    pieces: list[tuple[float, float]] = []
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
