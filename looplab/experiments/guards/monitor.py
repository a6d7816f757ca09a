"""`LoopLagMonitor`: how late the event loop wakes, a sign that the harness machine is saturated."""

from __future__ import annotations

import asyncio
import time

from looplab.stats.order import quantile

__all__ = ["LoopLagMonitor"]


class LoopLagMonitor:
    """Samples event-loop lag (how late a 20 ms sleep wakes) to detect a saturated machine."""

    def __init__(self, interval_s: float = 0.02) -> None:
        self.interval_s = interval_s
        self.samples: list[tuple[float, float]] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin sampling on the running loop."""
        self._task = asyncio.get_running_loop().create_task(self._sample())

    async def stop(self) -> None:
        """Stop sampling."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def p99_ms(self, since: float, until: float) -> float | None:
        """p99 lag (ms) of the samples taken in [since, until]."""
        window = [lag for t, lag in self.samples if since <= t <= until]
        return quantile(window, 0.99) * 1000 if window else None

    def mean_ms(self, since: float, until: float) -> float | None:
        """Mean lag (ms) of the samples taken in [since, until]: what a typical wake-up
        of the run's coroutines was delayed by."""
        window = [lag for t, lag in self.samples if since <= t <= until]
        return sum(window) / len(window) * 1000 if window else None

    async def _sample(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(self.interval_s)
            now = time.perf_counter()
            self.samples.append((now, max(0.0, now - before - self.interval_s)))
