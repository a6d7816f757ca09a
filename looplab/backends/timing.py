"""The call-timing function: how long one model call takes under a latency profile.

This is the one home of the formula. The simulator's pacer, virtual re-timing (the
virtual clock, `looplab replay --mode virtual`), `looplab sweep` and the synthetic report
data all call `TimingModel.plan` (or `plan_call`); nothing else computes a call's timing.

One call's timeline, offsets from the moment it got a server slot:

```
network_s   = network_rtt_s                                  request + first byte back
base_s      = ttft_s + TTFT jitter (drawn, or its mean)      fixed per-request cost
pipeline_s  = pipeline_stages x stage_latency_s              TTFT only, never the rate
prefill_s   = prefill(prompt, cached)                        uncached prompt tokens
= ttft_s: the first completion token of any kind (hidden reasoning first)
reasoning_s = decode of the hidden reasoning tokens          first token -> first visible
decode_s    = decode of the visible tokens                   first visible -> last visible
```

Completion tokens are numbered 0..N-1, hidden reasoning first (N = reasoning + visible).
Token 0 comes out of the prefill pass at `ttft_s`; token k >= 1 takes `token_s(prompt + k,
streams)` after token k - 1: decode time per token depends on the context it reads (the
prompt plus the tokens generated so far) and on how many streams share the server. So
`reasoning_s` is the time of tokens 1..R and `decode_s` that of tokens R+1..N-1.

`TokenTrack` holds one call's token release times as closed-form sums (no per-token
array); when the server's load changes mid-reply, `replan` splits the track at that
moment and the remaining tokens go on at the new per-token time (a fluid model: a token
that is half done keeps its progress).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from looplab.backends.profile import LatencyProfile

__all__ = ["CallSchedule", "CallTokens", "TimingModel", "TokenTrack", "plan_call"]

_EPSILON_S = 1e-9
"""Release times within this of a deadline count as due (float rounding)."""


@dataclass(frozen=True, slots=True)
class CallTokens:
    """The token counts of one call."""

    prompt: int
    """Prompt tokens (the context the reply starts from, cached ones included)."""
    cached: int = 0
    """Prompt tokens served from the prefix cache (not prefilled)."""
    reasoning: int = 0
    """Hidden reasoning tokens (decoded first, never sent)."""
    output: int = 0
    """Visible output tokens (text and tool-call tokens)."""

    @property
    def completion(self) -> int:
        """Reasoning plus visible tokens."""
        return self.reasoning + self.output


@dataclass(frozen=True, slots=True)
class TimingModel:
    """The timing parameters of a `LatencyProfile`, flattened for fast repeated use.

    Build it with `TimingModel.from_profile`; change a field for a what-if with `with_`.
    """

    decode_tps: float
    """Decode rate of one stream alone on the server, at zero context."""
    ttft_s: float = 0.0
    """Fixed per-request TTFT base."""
    ttft_jitter_mean_s: float = 0.0
    """Mean of the per-request TTFT jitter (used when no draw is given)."""
    network_rtt_s: float = 0.0
    """Network round trip, added to TTFT."""
    pipeline_s: float = 0.0
    """Pipeline stages x per-stage latency, added to TTFT."""
    prefill_tps: float | None = None
    """Prefill rate of uncached prompt tokens at zero context; None: prefill is free."""

    @classmethod
    def from_profile(cls, profile: LatencyProfile) -> TimingModel:
        """The timing parameters of `profile` (a `LatencyProfile`)."""
        return cls(
            decode_tps=profile.decode_tps,
            ttft_s=profile.ttft_s,
            ttft_jitter_mean_s=profile.ttft_jitter_s.mean(),
            network_rtt_s=profile.network_rtt_s,
            pipeline_s=profile.pipeline_stages * profile.stage_latency_s,
            prefill_tps=profile.prefill_tps,
        )

    def with_(self, **changes: float | None) -> TimingModel:
        """A copy with some fields changed (`model.with_(decode_tps=750)`)."""
        return replace(self, **changes)  # type: ignore[arg-type]  # fields checked by replace

    # -- the pieces ---------------------------------------------------------------------

    def prefill_s(self, prompt: int, cached: int = 0) -> float:
        """Seconds to prefill the `prompt - cached` uncached tokens of a prompt."""
        uncached = prompt - cached
        if self.prefill_tps is None or uncached <= 0:
            return 0.0
        return uncached / self.prefill_tps

    def token_s(self, context: int, streams: int = 1, factor: float = 1.0) -> float:
        """Decode time of one token that reads `context` tokens, with `streams` streams
        on the server; `factor` scales this request's rate (decode jitter)."""
        return 1.0 / (self.decode_tps * factor)

    def span_s(self, first: int, last: int, streams: int = 1, factor: float = 1.0) -> float:
        """Decode time of the tokens reading contexts `first..last` (inclusive), closed form;
        0 when `last < first`."""
        if last < first:
            return 0.0
        return (last - first + 1) * self.token_s(first, streams, factor)

    def ttft_parts(
        self, tokens: CallTokens, ttft_extra_s: float | None = None
    ) -> tuple[float, float, float, float]:
        """(network, base, pipeline, prefill) seconds before the first token of any kind."""
        jitter = self.ttft_jitter_mean_s if ttft_extra_s is None else ttft_extra_s
        return (
            self.network_rtt_s,
            self.ttft_s + jitter,
            self.pipeline_s,
            self.prefill_s(tokens.prompt, tokens.cached),
        )

    # -- the function -------------------------------------------------------------------

    def plan(
        self,
        tokens: CallTokens,
        *,
        streams: int = 1,
        ttft_extra_s: float | None = None,
        decode_factor: float = 1.0,
        queue_s: float = 0.0,
    ) -> CallSchedule:
        """The intended schedule of one call (durations in closed form; `track` for times).

        Args:
            tokens: the call's token counts.
            streams: concurrent streams on the server while it decodes (itself included).
            ttft_extra_s: this request's TTFT jitter draw; None: the jitter's mean.
            decode_factor: this request's decode-rate factor (decode jitter); 1 = none.
            queue_s: time it waited for its slot (measured, carried into `ttft_s`).
        """
        network, base, pipeline, prefill = self.ttft_parts(tokens, ttft_extra_s)
        context, reasoning, completion = tokens.prompt, tokens.reasoning, tokens.completion
        # token k >= 1 reads context + k tokens; with no visible token the reply ends at
        # the last reasoning token
        visible_from = reasoning if tokens.output else reasoning - 1
        return CallSchedule(
            model=self,
            tokens=tokens,
            streams=streams,
            decode_factor=decode_factor,
            queue_s=queue_s,
            network_s=network,
            base_s=base,
            pipeline_s=pipeline,
            prefill_s=prefill,
            reasoning_s=self.span_s(context + 1, context + visible_from, streams, decode_factor),
            decode_s=self.span_s(
                context + visible_from + 1, context + completion - 1, streams, decode_factor
            )
            if tokens.output
            else 0.0,
        )


def plan_call(
    profile: LatencyProfile,
    tokens: CallTokens,
    *,
    streams: int = 1,
    ttft_extra_s: float | None = None,
    decode_factor: float = 1.0,
) -> CallSchedule:
    """`TimingModel.from_profile(profile).plan(tokens, ...)` (see `TimingModel.plan`)."""
    return TimingModel.from_profile(profile).plan(
        tokens, streams=streams, ttft_extra_s=ttft_extra_s, decode_factor=decode_factor
    )


@dataclass(frozen=True, slots=True)
class CallSchedule:
    """One call's intended schedule: the TTFT parts, reasoning and decode, in seconds.

    `track(start)` gives the absolute release time of every completion token; its times
    agree with these durations while the load stays as planned.
    """

    model: TimingModel
    tokens: CallTokens
    streams: int
    decode_factor: float
    queue_s: float
    """Waiting for a server slot (measured by the caller, not computed)."""
    network_s: float
    base_s: float
    """TTFT base plus this request's jitter."""
    pipeline_s: float
    prefill_s: float
    reasoning_s: float
    """Hidden reasoning decode: first token of any kind -> first visible token (or, with
    no visible token, -> the last reasoning token)."""
    decode_s: float
    """Visible decode: first -> last visible token."""

    @property
    def ttft_s(self) -> float:
        """Slot request -> first token of any kind: queue + network + base + pipeline +
        prefill (the metric's TTFT, were hidden reasoning streamed)."""
        return self.queue_s + self.network_s + self.base_s + self.pipeline_s + self.prefill_s

    @property
    def first_visible_s(self) -> float:
        """Slot request -> first visible token: TTFT + reasoning decode."""
        return self.ttft_s + self.reasoning_s

    @property
    def total_s(self) -> float:
        """Slot request -> last token."""
        return self.first_visible_s + self.decode_s

    def track(self, requested: float) -> TokenTrack:
        """The token release times of this call, for a request made at `requested`
        (clock seconds; its queue wait included)."""
        return TokenTrack(
            self.model,
            requested + self.ttft_s,
            self.tokens.prompt,
            self.tokens.completion,
            self.streams,
            self.decode_factor,
        )


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

    model: TimingModel
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

    def progress_at(self, t: float) -> float:
        """Tokens done by time `t` (at or after the last re-plan), fractional within the
        token in progress."""
        return self._progress(t - self.start)

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
