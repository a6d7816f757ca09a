"""`TokenTrack`: the release times of one call's completion tokens, re-plannable.

Part of the call-timing function (`looplab.latency.timing`): token 0 (the first token
of any kind) is at `start`, token k >= 1 takes `TimingModel.token_s(context + k, streams)`
after token k - 1, summed in closed form (`span_s`), so no per-token array is kept. When
the server's load changes mid-reply, `replan(t, streams)` splits the track at `t`: the
tokens already out keep their times and the rest go on at the new per-token time (a fluid
model: a token half done keeps its progress). `due(t)` inverts `time_of` by bisection.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["ServedPhases", "TokenTimes", "TokenTrack"]


class TokenTimes(Protocol):
    """What a track needs of the timing model (`looplab.latency.timing.TimingModel`)."""

    def token_s(self, context: int, streams: int = 1, factor: float = 1.0) -> float:
        """Seconds to decode the token that reads `context` tokens."""
        ...

    def span_s(self, first: int, last: int, streams: int = 1, factor: float = 1.0) -> float:
        """Seconds to decode the tokens reading `first`..`last` context tokens."""
        ...


_EPSILON_S = 1e-9
"""Release times within this of a deadline count as due (float rounding)."""


@dataclass(slots=True)
class _Segment:
    """From offset `t0` (progress `x0` tokens) on, tokens take their time at `streams`."""

    t0: float
    x0: float
    streams: int


@dataclass(slots=True)
class TokenTrack:
    """Release times of one call's completion tokens 0..count-1 (see the module doc).

    Times are kept as offsets from `start` (so spans keep full float precision however
    large the clock's values) and returned absolute by `time_of`.

    Args:
        model: the timing model.
        start: time of token 0 (the first token of any kind).
        context: the prompt length: token k reads `context + k` tokens.
        count: completion tokens (reasoning + visible).
        streams: server streams at the start.
        factor: this request's decode-rate factor.
    """

    model: TokenTimes
    start: float
    context: int
    count: int
    streams: int
    factor: float = 1.0
    segments: list[_Segment] = field(default_factory=list)
    _x0s: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.segments = [_Segment(0.0, 0.0, self.streams)]
        self._x0s = [0.0]

    def _token(self, k: int, streams: int) -> float:
        return self.model.token_s(self.context + k, streams, self.factor)

    def offset_of(self, k: int) -> float:
        """Seconds from token 0 to token `k` (clamped to 0..count-1)."""
        k = max(0, min(k, self.count - 1))
        segment = self.segments[bisect.bisect_right(self._x0s, k) - 1]
        x0, n = segment.x0, segment.streams
        whole = math.ceil(x0)
        t = segment.t0
        if whole > x0:  # the rest of the token in progress when the segment began
            t += (whole - x0) * self._token(whole, n)
        return t + self.model.span_s(self.context + whole + 1, self.context + k, n, self.factor)

    def time_of(self, k: int) -> float:
        """Absolute release time of completion token `k` (clamped to 0..count-1)."""
        return self.start + self.offset_of(k)

    def phases(self, reasoning: int, output: int) -> tuple[float, float]:
        """(reasoning_s, decode_s) of a reply with these counts, as the track now stands
        (see `CallSchedule`)."""
        first_visible = self.offset_of(reasoning if output else reasoning - 1)
        if not output:
            return first_visible, 0.0
        return first_visible, self.offset_of(self.count - 1) - first_visible

    def due(self, t: float) -> int:
        """How many tokens are released by time `t` (tokens 0..due-1)."""
        offset = t - self.start + _EPSILON_S
        if self.count <= 0 or offset < 0:
            return 0
        if self.offset_of(self.count - 1) <= offset:
            return self.count
        low, high = 0, self.count - 1  # offset_of(low) <= offset < offset_of(high)
        while high - low > 1:
            middle = (low + high) // 2
            if self.offset_of(middle) <= offset:
                low = middle
            else:
                high = middle
        return low + 1

    def _progress(self, offset: float) -> float:
        segment = self.segments[-1]
        if offset <= segment.t0:
            return segment.x0
        done = self.due(self.start + offset) - 1
        if done >= self.count - 1:
            return float(self.count - 1)
        if done < segment.x0:
            since, at = segment.x0, segment.t0
        else:
            since, at = float(done), self.offset_of(done)
        token = math.floor(since) + 1
        return min(since + (offset - at) / self._token(token, segment.streams), float(token))

    def replan(self, t: float, streams: int) -> None:
        """From time `t` on, the server runs `streams` streams (earlier times unchanged)."""
        last = self.segments[-1]
        offset = t - self.start
        if streams == last.streams:
            return
        if offset <= last.t0:
            last.streams = streams  # before the segment started: it starts at the new load
            return
        x = self._progress(offset)
        if x >= self.count - 1:
            return
        self.segments.append(_Segment(offset, x, streams))
        self._x0s.append(x)


@dataclass(frozen=True, slots=True)
class ServedPhases:
    """The phases a server gave one call (its track's final plan, after any re-plan on a
    load change): TTFT + prefill, hidden reasoning, visible decode, in seconds. The typed
    record re-timing reads (`Simulator.phases`), never the timing endpoint's JSON."""

    ttft_s: float
    reasoning_s: float
    decode_s: float
