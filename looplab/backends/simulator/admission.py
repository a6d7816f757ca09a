"""Admission control: a concurrency limit with a bounded FIFO queue.

`limit` requests decode at once; up to `max_queue` more wait in arrival order; beyond
that `QueueFull` is raised (the server answers 429 with `retry-after`). A waiter that is
cancelled (its client went away) leaves the queue at once, and a released slot goes to
the next live waiter, so a disconnecting client never holds capacity.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque

__all__ = ["Admission", "QueueFull"]


class QueueFull(Exception):
    """The concurrency limit is reached and the queue is full.

    Attributes:
        retry_after_s: a suggested wait before retrying, from recent service times.
    """

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"queue full; retry after {retry_after_s} s")
        self.retry_after_s = retry_after_s


class Admission:
    """Concurrency limit + FIFO queue (see the module docstring).

    Args:
        limit: concurrent slots; None means unlimited (never queues).
        max_queue: waiters allowed beyond the limit.
    """

    def __init__(self, limit: int | None, max_queue: int) -> None:
        self.limit = limit
        self.max_queue = max_queue
        self.active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._service_ema_s = 1.0

    @property
    def queued(self) -> int:
        """Requests waiting for a slot."""
        return sum(1 for w in self._waiters if not w.done())

    def check(self) -> None:
        """Raise `QueueFull` now if a new request could neither run nor wait."""
        if self.limit is None or self.active < self.limit:
            return
        if self.queued >= self.max_queue:
            waves = (self.queued + 1) / self.limit
            raise QueueFull(max(1, math.ceil(self._service_ema_s * waves)))

    async def acquire(self) -> bool:
        """Take a slot, waiting in FIFO order if needed; True if it had to wait.

        Raises:
            QueueFull: when the limit is reached and the queue is full.
            asyncio.CancelledError: if cancelled while waiting (the wait is abandoned).
        """
        self.check()
        if self.limit is None or (self.active < self.limit and not self.queued):
            self.active += 1
            return False
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
            return True
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._hand_over()  # we were given a slot but will not use it
            raise
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def release(self, service_s: float | None = None) -> None:
        """Give a slot back; `service_s` (how long it was held) tunes `retry-after`."""
        if service_s is not None and service_s > 0:
            self._service_ema_s = 0.8 * self._service_ema_s + 0.2 * service_s
        self._hand_over()

    def _hand_over(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes directly: `active` is unchanged
                return
        self.active = max(0, self.active - 1)
