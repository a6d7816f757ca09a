"""Token pacing: release token slots on a fixed schedule, never one sleep per token.

`SchedulePacer` (the simulator's pacer) takes slot `i`'s due time from the request's
own schedule (`looplab.latency.timing.TokenTrack`: `first + i / rate` at a constant
rate, a closed-form sum when the rate changes with context or load). At each wake-up it
releases every slot already due, then sleeps until the next slot is due but at least
`frame_floor_s` after this release, so below the floor several tokens share one SSE chunk, as real
servers batch them. Because release is decided by due time, a late wake-up (up to ~1 ms
on the stock asyncio loop, ~0.1 ms on `timers.precise_loop`) delays a chunk but never the
schedule: the aggregate rate is exact and lateness does not accumulate.

`NaivePacer` is the baseline other simulators use: one `asyncio.sleep(interval)` per
token, one chunk per token. It exists so `looplab bench backend` can show the difference
side by side; it loses about a third of the rate at 750 tok/s.

Both record, per released chunk, which slots it carried and the intended and actual
release times (`PacingRecord`), so fidelity is measurable per request. When the server's
load changes mid-reply (a load-dependent profile), the simulator re-plans each in-flight
record (`PacingRecord.replan`), which wakes its pacer: the intended times are always
those of the final plan, and the pacer follows it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Protocol

from looplab.backends.simulator.record import PacingSummary
from looplab.clock import Clock
from looplab.latency.timing import TimingModel, TokenTrack
from looplab.serving.timers import has_precise_timers
from looplab.stats.order import quantile

__all__ = ["PACERS", "NaivePacer", "Pacer", "PacingRecord", "Release", "SchedulePacer"]


@dataclass(frozen=True)
class Release:
    """Slots `[start, stop)` released together at `actual` (their clock's seconds)."""

    start: int
    stop: int
    actual: float


@dataclass(eq=False)
class PacingRecord:
    """Intended vs actual release times of one request's visible token slots.

    Times are seconds on the server clock. Slot `i` is completion token `offset + i` of
    `track` (hidden reasoning tokens come first and are never released); `releases` are
    what really happened. The track may be re-planned while the slots are paced (the
    server's load changed): `intended` always answers from the current plan.
    """

    received: float
    track: TokenTrack
    slots: int
    offset: int = 0
    releases: list[Release] = field(default_factory=list)
    version: int = 0
    """Bumped by every `replan`; a pacer that slept across one re-reads the plan."""
    _waker: asyncio.Future[None] | None = None

    def replan(self, t: float, streams: int) -> None:
        """The server runs `streams` streams from `t` on: re-plan the rest of the track and
        wake the pacer, whose next slot may now be due sooner (or later)."""
        before = len(self.track.segments), self.track.segments[-1].streams
        self.track.replan(t, streams)
        if (len(self.track.segments), self.track.segments[-1].streams) == before:
            return
        self.version += 1
        if self._waker is not None and not self._waker.done():
            self._waker.set_result(None)

    async def sleep_until(self, clock: Clock, deadline: float) -> None:
        """Wait until `deadline` on `clock`, or until the next `replan` (wall clock only:
        on a virtual clock time does not pass while waiting)."""
        if clock.virtual:
            await clock.sleep_until(deadline)
            return
        loop = asyncio.get_running_loop()
        waker: asyncio.Future[None] = loop.create_future()
        self._waker = waker
        handle = loop.call_later(max(0.0, deadline - clock.now()), _wake, waker)
        try:
            await waker
        finally:
            handle.cancel()
            self._waker = None

    @classmethod
    def fixed(cls, received: float, first: float, interval: float, slots: int) -> PacingRecord:
        """A constant-rate record: slot i at `first + i * interval` (tests, baselines)."""
        model = TimingModel(decode_tps=1.0 / interval if interval > 0 else math.inf)
        return cls(received, TokenTrack(model, first, 0, slots, 1), slots)

    @property
    def first(self) -> float:
        """Intended time of slot 0."""
        return self.intended(0)

    def intended(self, slot: int) -> float:
        """Intended release time of `slot`."""
        return self.track.time_of(self.offset + slot)

    def due(self, t: float) -> int:
        """How many slots are due by time `t`."""
        return max(0, min(self.slots, self.track.due(t) - self.offset))

    def lateness_s(self) -> list[float]:
        """For every released slot, actual minus intended release time (>= 0 normally)."""
        out: list[float] = []
        for release in self.releases:
            out.extend(
                release.actual - self.intended(s) for s in range(release.start, release.stop)
            )
        return out

    def summary(self) -> PacingSummary:
        """JSON-ready summary: schedule, achieved rate, lateness percentiles, chunks.

        `intended_rate_tps` is the intended mean rate over the visible slots,
        (slots - 1) / (last - first); `achieved_rate_tps` the same over the releases.
        """
        lateness = self.lateness_s()
        released = self.releases[-1].stop if self.releases else 0
        achieved = None
        if len(self.releases) >= 2 and released > 1:
            first_actual = self.releases[0].actual
            span = self.releases[-1].actual - first_actual
            carried_after_first = released - self.releases[0].stop
            if span > 0:
                achieved = carried_after_first / span
        track, offset = self.track, self.offset
        intended_span = 0.0
        if self.slots:
            intended_span = track.offset_of(offset + self.slots - 1) - track.offset_of(offset)
        last = self.first + intended_span
        return {
            "received_s": 0.0,
            "intended_first_s": self.first - self.received,
            "intended_last_s": last - self.received,
            "intended_rate_tps": (self.slots - 1) / intended_span if intended_span > 0 else None,
            "slots": self.slots,
            "released_slots": released,
            "chunks": len(self.releases),
            "achieved_rate_tps": achieved,
            "first_release_late_s": (
                self.releases[0].actual - self.first if self.releases else None
            ),
            "lateness_p50_s": quantile(lateness, 0.5) if lateness else None,
            "lateness_p99_s": quantile(lateness, 0.99) if lateness else None,
            "lateness_max_s": max(lateness) if lateness else None,
            "releases": [
                [
                    r.start,
                    r.stop,
                    round(self.intended(r.start) - self.received, 7),
                    round(r.actual - self.received, 7),
                ]
                for r in self.releases
            ],
        }


def _wake(waker: asyncio.Future[None]) -> None:
    if not waker.done():
        waker.set_result(None)


class Pacer(Protocol):
    """Releases `slots` token slots of one request on its schedule."""

    name: str

    def release(self, record: PacingRecord, clock: Clock) -> AsyncIterator[Release]:
        """Yield releases until every slot of `record` is out; append each to `record`."""
        ...


class SchedulePacer:
    """Fixed-schedule pacing with a frame floor (see the module docstring).

    Args:
        frame_floor: returns the minimum gap between two releases of one stream, asked
            after every release (it may widen with server load).
        lead_s: on a wall clock whose loop has millisecond timers (the stock asyncio
            loop: epoll rounds timeouts up to whole ms, so it wakes 0-1 ms late), wake this
            much before a due time and release what is due within it, which centres
            release error on zero. On a `timers.precise_loop` (every looplab server) there
            is no lead: no slot is released before its due time.
    """

    name = "schedule"

    def __init__(
        self, frame_floor: Callable[[], float] = lambda: 0.002, lead_s: float = 0.0005
    ) -> None:
        self.frame_floor = frame_floor
        self.lead_s = lead_s

    async def release(self, record: PacingRecord, clock: Clock) -> AsyncIterator[Release]:
        """Release all due slots at each wake-up; never drift from the schedule."""
        lead = 0.0 if clock.virtual or has_precise_timers() else self.lead_s
        slot = 0
        not_before = -math.inf
        while slot < record.slots:
            # The floor never holds a token past the stream's last due time, so the final
            # token (which fixes the measured rate) is not delayed by batching.
            version = record.version
            last_due = record.intended(record.slots - 1)
            target = max(record.intended(slot), min(not_before, last_due))
            await record.sleep_until(clock, target - lead)
            now = clock.now()
            due = record.due(now + lead)
            if due <= slot and record.version != version:
                continue  # re-planned while asleep (the server got busier): not due yet
            stop = min(record.slots, max(slot + 1, due))
            release = Release(slot, stop, now)
            record.releases.append(release)
            yield release
            slot = stop
            not_before = now + self.frame_floor()


class NaivePacer:
    """Baseline: sleep once per token, one chunk per token (what most simulators do)."""

    name = "naive"

    async def release(self, record: PacingRecord, clock: Clock) -> AsyncIterator[Release]:
        """Sleep until the first slot, then `interval` per slot; drift accumulates."""
        await clock.sleep_until(record.first)
        for slot in range(record.slots):
            if slot:
                gap = record.intended(slot) - record.intended(slot - 1)
                await clock.sleep_until(clock.now() + gap)
            release = Release(slot, slot + 1, clock.now())
            record.releases.append(release)
            yield release


PACERS = ("schedule", "naive")
"""Pacer names accepted by the server and `looplab serve --pacer`."""
