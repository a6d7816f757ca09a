"""`GatedRecord`: the simulator's pacing record for tokens that arrive from an upstream.

The proxy paces with the simulator's own pacer (`looplab.backends.simulator.pacing.SchedulePacer`)
and the one call-timing function (`looplab.latency.timing`). What differs is where the
tokens come from: they arrive over time from the upstream, so a slot's release time is

```
intended(j) = max(scheduled(j), arrival(j))      (never before the upstream sent it)
scheduled(j) = track.time_of(offset + position(j))
```

where `track` is the profile's `TokenTrack` for this call. Rules (docs/design.md, the
proxy's contract):

- **First token**: no earlier than the profile's TTFT, never before the upstream's own:
  when slot 0 arrives after its scheduled time, the whole track moves to that arrival
  (`anchor`), and decode goes on at the profile's rate from there.
- **A late first release** (the proxy's own stall: a busy loop, a GC pause): the rest of
  the track moves with it (`released_first`), so later tokens never go out early to
  catch up, which a client would measure as a faster decode.
- **Decode**: later slots follow the track; a slot that arrives after its scheduled time
  is released on arrival (the upstream is slower: counted in `late_slots`, never hidden).
- **Token positions**: a slot carries `tokens` estimated tokens (the tokenizer's split of
  the upstream's text); slot j ends at estimated token `cum[j] - 1`. When the upstream's
  usage says how many tokens it really streamed (`settle`), positions are rescaled so the
  last slot lands on the true last token: the call's decode time is the profile's for the
  upstream's own token count, whatever the tokenizer's estimate was.
- **Count**: unknown while the upstream streams (`slots` is a large bound and unarrived
  slots are due at infinity); `finish` fixes it.

Every change that can move a due time (an arrival the pacer waits for, `settle`,
`finish`) bumps `version` and wakes the pacer, as a re-plan does.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Any

from looplab.backends.simulator.pacing import PacingRecord
from looplab.clock import Clock
from looplab.stats.order import quantile

__all__ = ["UNKNOWN_SLOTS", "GatedRecord"]

UNKNOWN_SLOTS = 1 << 40
"""`slots` while the upstream is still streaming (the real count is set by `finish`)."""

FIRST_RELEASE_SLACK_S = 0.001
"""A first release later than this moves the rest of the schedule (`released_first`)."""


@dataclass(eq=False)
class GatedRecord(PacingRecord):
    """A `PacingRecord` whose slots arrive over time (see the module docstring)."""

    arrivals: list[float] = field(default_factory=list)
    """Arrival time of each slot (clock seconds)."""
    cum: list[int] = field(default_factory=list)
    """Estimated tokens through each slot (cumulative)."""
    scale: float = 1.0
    """True tokens per estimated token (1 until `settle`)."""
    finished: bool = False
    anchored_s: float = 0.0
    """How far the track moved to wait for the upstream's first token (0: it did not)."""
    held_s: float = 0.0
    """How far the track moved after a late first release (`released_first`)."""
    _waiting: bool = False
    _cache: dict[int, float] = field(default_factory=dict)
    """Scheduled times computed since the plan last changed (slot -> time)."""
    _hint: int = 0
    _hint_t: float = -math.inf

    # -- what the upstream does ----------------------------------------------------------

    def arrive(self, tokens: list[int], t: float) -> bool:
        """Slots with these estimated token counts arrived at `t`; True when the pacer was
        waiting for them (the caller should let it run before reading on)."""
        first = not self.arrivals
        total = self.cum[-1] if self.cum else 0
        for count in tokens:
            total += max(1, count)
            self.cum.append(total)
            self.arrivals.append(t)
        if first and self.arrivals:
            late = t - self.track.time_of(self.offset)
            if late > 0:
                self.track.start += late
                self.anchored_s = late
                self._changed()
        if not self._waiting:
            return False
        self._wake()
        return True

    def released_first(self, actual: float) -> None:
        """The first slot went out at `actual`: if that was late (the proxy's own stall,
        not the upstream's: that is `anchor`), the rest follow from it at the profile's
        rate, so no token goes out early to catch up (`first_release_late_s` keeps it)."""
        late = actual - self.intended(0)
        if late > FIRST_RELEASE_SLACK_S and not math.isinf(late):
            self.track.start += late
            self.held_s = late
            self._changed()

    def settle(self, true_tokens: int) -> None:
        """The upstream streamed `true_tokens` tokens in all: rescale the positions."""
        if self.cum and true_tokens > 0 and self.cum[-1] > 0:
            self.scale = true_tokens / self.cum[-1]
            self._changed()
            self._wake()

    def finish(self) -> None:
        """The upstream is done: the slot count is final."""
        self.finished = True
        self.slots = len(self.arrivals)
        self._wake()

    # -- what the pacer asks -------------------------------------------------------------

    def position(self, slot: int) -> int:
        """Token index (within the visible tokens) at which `slot` is complete."""
        return max(0, round(self.cum[slot] * self.scale) - 1)

    def scheduled(self, slot: int) -> float:
        """The profile's time for `slot` (ignoring when it arrived)."""
        time = self._cache.get(slot)
        if time is None:
            time = self._cache[slot] = self.track.time_of(self.offset + self.position(slot))
        return time

    def intended(self, slot: int) -> float:
        """max(scheduled, arrival); infinity for a slot not yet arrived."""
        if slot >= len(self.arrivals):
            return math.inf
        return max(self.scheduled(slot), self.arrivals[slot])

    def due(self, t: float) -> int:
        """How many slots are due (and arrived) by `t`.

        The pacer asks with growing `t`, so the answer is found by walking on from the last
        one (amortised one look per slot); a changed plan or an earlier `t` restarts the
        walk from the slots already released.
        """
        if t < self._hint_t:
            self._changed()
        k, n = self._hint, len(self.arrivals)  # intended is non-decreasing in the slot
        while k < n and self.intended(k) <= t + 1e-9:
            k += 1
        self._hint, self._hint_t = k, t
        return k

    def replan(self, t: float, streams: int) -> None:
        """The server's load changed: re-plan the rest (`PacingRecord.replan`)."""
        self._changed()
        super().replan(t, streams)

    def _changed(self) -> None:
        """The plan changed: forget computed times, walk `due` again from the released."""
        self._cache.clear()
        self._hint = self.releases[-1].stop if self.releases else 0
        self._hint_t = -math.inf

    async def sleep_until(self, clock: Clock, deadline: float) -> None:
        """Wait until `deadline` (infinity: until the awaited slot arrives), or a wake."""
        loop = asyncio.get_running_loop()
        waker: asyncio.Future[None] = loop.create_future()
        self._waker = waker
        self._waiting = math.isinf(deadline)
        handle = None
        if not self._waiting:
            handle = loop.call_later(max(0.0, deadline - clock.now()), _wake_future, waker)
        try:
            await waker
        finally:
            if handle is not None:
                handle.cancel()
            self._waker = None
            self._waiting = False

    def _wake(self) -> None:
        self.version += 1
        if self._waker is not None:
            _wake_future(self._waker)

    # -- what happened -------------------------------------------------------------------

    def late_slots(self, scheduled: list[float] | None = None) -> int:
        """Slots the upstream delivered after the profile's time for them."""
        times = scheduled if scheduled is not None else self._scheduled_all()
        return sum(1 for t, s in zip(self.arrivals, times, strict=True) if t > s + 1e-9)

    def _scheduled_all(self) -> list[float]:
        return [self.scheduled(j) for j in range(len(self.arrivals))]

    def gate_summary(self) -> dict[str, Any]:
        """JSON-ready: release lateness (the proxy's own), upstream-bound slots, rate (the
        proxy record's `pacing`; not the simulator's `PacingRecord.summary`, whose record
        this is not)."""
        scheduled = self._scheduled_all()
        intended = [max(s, a) for s, a in zip(scheduled, self.arrivals, strict=True)]
        lateness = [
            r.actual - intended[s]
            for r in self.releases
            for s in range(r.start, min(r.stop, len(intended)))
        ]
        first = self.releases[0].actual if self.releases else None
        last = self.releases[-1].actual if self.releases else None
        return {
            "received_clock_s": self.received,
            "slots": len(self.arrivals),
            "chunks": len(self.releases),
            "scale": self.scale,
            "anchored_s": self.anchored_s,
            "late_slots": self.late_slots(scheduled),
            "first_release_s": None if first is None else first - self.received,
            "last_release_s": None if last is None else last - self.received,
            "intended_first_s": (intended[0] - self.received) if intended else None,
            "first_release_late_s": (
                (first - intended[0] + self.held_s) if first and intended else None
            ),
            "held_s": self.held_s,
            "lateness_p50_s": quantile(lateness, 0.5) if lateness else None,
            "lateness_p99_s": quantile(lateness, 0.99) if lateness else None,
        }


def _wake_future(waker: asyncio.Future[None]) -> None:
    if not waker.done():
        waker.set_result(None)
