"""The run axis: clock (or epoch) seconds -> seconds since the run's origin.

Live producers put their `time.perf_counter()` / `time.monotonic()` readings on it (on
Linux both read CLOCK_MONOTONIC) with the wall time they noted at the origin; importers put
absolute epoch seconds on it, whose wall time is the epoch's. Items without times are
placed at the latest end placed so far with zero length, and say so in their `estimated`
(`MISSING` ...), so a placeholder never passes for a measurement.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

__all__ = ["MISSING", "BadValue", "RunAxis", "has_source_times"]

MISSING = "not in the source"
"""How every `estimated` entry of a time the source did not have begins."""
_PLACEHOLDER = f"{MISSING}: placed at the previous known time, zero length"
_AFTER_PREVIOUS = "the source records a duration, not times: placed after the previous item"


class BadValue(ValueError):
    """A value of the source that cannot be what its field claims (NaN, 1e400, ...).

    Raised where the file path is not at hand; the importers' registry adds it
    (`TraceError`).
    """


class RunAxis:
    """Maps clock times to run seconds; untimed items go to the last known time.

    Args:
        origin: the clock time of the run's zero; None when the run has no times.
        wall0: UTC wall time at the origin (live runs); None: no wall times, unless `epoch`.
        epoch: the clock is epoch seconds (imports): wall times are the clock's own.
    """

    def __init__(
        self, origin: float | None, wall0: datetime | None = None, *, epoch: bool = False
    ) -> None:
        self.origin = origin
        self.wall0 = wall0
        self.epoch = epoch
        self.cursor = 0.0
        """The latest end placed so far (where the next untimed item goes)."""

    def at(self, t: float) -> float:
        """Clock seconds -> run seconds."""
        return t - (self.origin or 0.0)

    def rel(self, t: float | None) -> float | None:
        """`t` on the axis (None stays None)."""
        return None if t is None else self.at(t)

    def wall(self, run_s: float) -> datetime | None:
        """UTC wall time of an axis point; None when the run has no wall clock.

        Raises:
            BadValue: an epoch time beyond what a datetime holds.
        """
        if not self.epoch:
            return None if self.wall0 is None else self.wall0 + timedelta(seconds=run_s)
        if self.origin is None:
            return None
        try:
            return datetime.fromtimestamp(self.origin, UTC) + timedelta(seconds=run_s)
        except (OverflowError, ValueError):
            raise BadValue(f"{self.origin + run_s!r} is not a wall time") from None

    def place(
        self,
        start: float | None,
        end: float | None,
        estimated: dict[str, str],
        duration: float | None = None,
    ) -> tuple[float, float]:
        """(start, end) on the axis; a missing side is filled and named in `estimated`.

        Args:
            start: clock start, or None.
            end: clock end, or None.
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
        rel_start, rel_end = self.at(start), self.at(max(end, start))
        self.cursor = max(self.cursor, rel_end)
        return rel_start, rel_end


def has_source_times(estimated: dict[str, str]) -> bool:
    """False when start or end had to be placed because the source had none."""
    return not any(estimated.get(k, "").startswith(MISSING) for k in ("start", "end"))
