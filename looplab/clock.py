"""Wall and virtual clocks: one clock discipline for everything that waits or times.

Durations come from `time.perf_counter()` (monotonic, sub-microsecond); wall time from
`datetime.now(UTC)` (style.md rule 8). Code that waits on a schedule (the simulator's
pacer, later the experiment runner) asks a `Clock` instead of calling `asyncio.sleep`
directly, so the same code runs in real time (`WallClock`) or instantly (`VirtualClock`).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "VirtualClock", "WallClock", "utc_now"]


def utc_now() -> datetime:
    """The current wall time, timezone-aware UTC (for traces and logs, never durations)."""
    return datetime.now(UTC)


class Clock(Protocol):
    """A monotonic time source that can wait until a point on its own time axis."""

    virtual: bool
    """True when waiting takes no real time (time is computed, not waited for)."""

    def now(self) -> float:
        """Seconds on this clock's monotonic axis (the origin is arbitrary)."""
        ...

    async def sleep_until(self, deadline: float) -> None:
        """Return once `now() >= deadline` (at once if it already is)."""
        ...


class WallClock:
    """Real time: `time.perf_counter()` and `asyncio.sleep`.

    asyncio wakes a sleeper up to ~1 ms late (epoll's millisecond timeout; ~0.1 ms on
    `backends.simulator.timers.precise_loop`), never early;
    callers that pace tokens therefore release everything that is due at each wake-up
    instead of assuming one wake-up per token (see `looplab.backends.simulator.pacing`).
    """

    virtual = False

    def now(self) -> float:
        """Seconds from `time.perf_counter()`."""
        return time.perf_counter()

    async def sleep_until(self, deadline: float) -> None:
        """Sleep until `deadline`; yields to the loop even when it has passed."""
        delay = deadline - time.perf_counter()
        await asyncio.sleep(delay if delay > 0 else 0)


class VirtualClock:
    """Computed time: waiting advances the clock instantly instead of sleeping.

    Contract: `sleep_until(t)` sets `now()` to `max(now(), t)` and yields once to the
    event loop. This is exact for one timeline (one request, one agent run) and is what
    fast tests and virtual-clock experiments use; concurrent timelines sharing one
    `VirtualClock` see each other's advances (a max-plus composition, not a scheduler).
    """

    virtual = True

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        """The computed time."""
        return self._now

    async def sleep_until(self, deadline: float) -> None:
        """Jump to `deadline` if it is ahead, then yield once."""
        if deadline > self._now:
            self._now = deadline
        await asyncio.sleep(0)
