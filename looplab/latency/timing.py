"""The call-timing function: how long one model call takes under a latency profile.

This is the one home of the formula. The simulator's pacer, virtual re-timing (the
virtual clock, `looplab replay --mode virtual`), `looplab sweep` and the synthetic report
data all call `TimingModel.plan` (or `plan_call`); nothing else computes a call's timing.

One call's timeline, offsets from the moment it got a server slot:

```
network_s   = network_rtt_s                                  request + first byte back
overhead_s  = per-call API overhead of the transport         request_overhead_s (http) or
                                                             websocket_overhead_s
(per token) = framing of each streamed token, by transport   token_overhead_s (http) or
                                                             websocket_token_overhead_s
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

The serving model (`LatencyProfile` documents each field; all neutral by default):

```
token_s(c, n)  = max(a + b c, n_total / server_max_tps)        n_total = n + background
a              = (1 + batch_slowdown (n_total - 1)) / (decode_tps x jitter factor)
b              = a x decode_context_slowdown / 100,000
                 then the call's transport framing is added to a and to the ceiling
prefill(P, C)  = (u + prefill_context_slowdown x u (P + C - 1) / 2 / 100,000) / prefill_tps
                 with u = P - C uncached tokens (positions C..P-1)
```

`span_s` sums `token_s` over a range of contexts in closed form (an arithmetic series,
split where the line crosses the throughput ceiling).

`TokenTrack` (`looplab.latency.token_track`) holds one call's token release times as
closed-form sums of `span_s`; when the server's load changes mid-reply it splits at that
moment and the remaining tokens go on at the new per-token time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from looplab.latency.token_track import TokenTrack

if TYPE_CHECKING:
    from looplab.latency.profile import LatencyProfile

__all__ = [
    "PER_CONTEXT",
    "TRANSPORTS",
    "CallSchedule",
    "CallTokens",
    "TimingModel",
    "TokenTrack",
    "Transport",
    "plan_call",
]
# TokenTrack is re-exported: it is part of this function's answer (`CallSchedule.track`).

PER_CONTEXT = 100_000.0
"""The context slowdowns are relative growth per this many tokens."""

WEBSOCKET_OVERHEAD_SHARE = 0.2
"""`websocket_overhead_s` when a profile leaves it unset: this share of the HTTP overhead
(OpenAI reported the persistent WebSocket cut per-round-trip overhead about 80%)."""

WEBSOCKET_TOKEN_OVERHEAD_SHARE = 0.7
"""`websocket_token_overhead_s` when a profile leaves it unset: this share of the HTTP
per-token framing (OpenAI reported the WebSocket cut per-token overhead about 30%)."""

Transport = Literal["http", "websocket"]
"""How a call came: its own HTTP request, or a turn on an open Responses WebSocket."""

TRANSPORTS: dict[Transport, str] = {
    "http": "a request of its own over HTTP (request_overhead_s)",
    "websocket": "a response.create on an open Responses WebSocket (websocket_overhead_s)",
}
"""The transports a call can come by, each with the overhead field it pays."""


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
    request_overhead_s: float = 0.0
    """Per-call API overhead of an HTTP request, added to TTFT."""
    websocket_overhead_s: float = 0.0
    """Per-call API overhead of a `response.create` on an open WebSocket."""
    token_overhead_s: float = 0.0
    """Per-token framing of a reply streamed over HTTP."""
    websocket_token_overhead_s: float = 0.0
    """Per-token framing of a reply streamed on a WebSocket."""
    frame_s: float = 0.0
    """The per-token framing in force in this model: 0 in a profile's model, the call's
    transport's in the model of a `CallSchedule` (`plan`), so its `TokenTrack` pays it."""
    pipeline_s: float = 0.0
    """Pipeline stages x per-stage latency, added to TTFT."""
    prefill_tps: float | None = None
    """Prefill rate of uncached prompt tokens at position 0; None: prefill is free."""
    prefill_context_slowdown: float = 0.0
    """Relative growth of the per-token prefill time per 100K tokens of position."""
    decode_context_slowdown: float = 0.0
    """Relative growth of the per-token decode time per 100K context tokens."""
    batch_slowdown: float = 0.0
    """Relative growth of the per-token decode time per additional stream."""
    server_max_tps: float | None = None
    """Server decode throughput ceiling (tokens/s over all streams); None: none."""
    background_streams: int = 0
    """Streams of other clients always on the server."""

    @classmethod
    def from_profile(cls, profile: LatencyProfile) -> TimingModel:
        """The timing parameters of `profile` (a `LatencyProfile`)."""
        return cls(
            decode_tps=profile.decode_tps,
            ttft_s=profile.ttft_s,
            ttft_jitter_mean_s=profile.ttft_jitter_s.mean(),
            network_rtt_s=profile.network_rtt_s,
            request_overhead_s=profile.request_overhead_s,
            websocket_overhead_s=(
                profile.request_overhead_s * WEBSOCKET_OVERHEAD_SHARE
                if profile.websocket_overhead_s is None
                else profile.websocket_overhead_s
            ),
            token_overhead_s=profile.token_overhead_s,
            websocket_token_overhead_s=(
                profile.token_overhead_s * WEBSOCKET_TOKEN_OVERHEAD_SHARE
                if profile.websocket_token_overhead_s is None
                else profile.websocket_token_overhead_s
            ),
            pipeline_s=profile.pipeline_stages * profile.stage_latency_s,
            prefill_tps=profile.prefill_tps,
            prefill_context_slowdown=profile.prefill_context_slowdown,
            decode_context_slowdown=profile.decode_context_slowdown,
            batch_slowdown=profile.batch_slowdown,
            server_max_tps=profile.server_max_tps,
            background_streams=profile.background_streams,
        )

    def with_(self, **changes: float | None) -> TimingModel:
        """A copy with some fields changed (`model.with_(decode_tps=750)`)."""
        return replace(self, **changes)  # type: ignore[arg-type]  # fields checked by replace

    @property
    def load_dependent(self) -> bool:
        """Whether the decode time depends on the number of streams on the server."""
        return self.batch_slowdown > 0 or self.server_max_tps is not None

    # -- the pieces ---------------------------------------------------------------------

    def prefill_s(self, prompt: int, cached: int = 0) -> float:
        """Seconds to prefill the uncached tokens `cached..prompt-1` of a prompt: each
        costs `(1 + prefill_context_slowdown x position / 100K) / prefill_tps`."""
        uncached = prompt - cached
        if self.prefill_tps is None or uncached <= 0:
            return 0.0
        positions = uncached * (prompt + cached - 1) / 2  # sum of cached..prompt-1
        return (uncached + self.prefill_context_slowdown * positions / PER_CONTEXT) / (
            self.prefill_tps
        )

    def _decode_line(self, streams: int, factor: float) -> tuple[float, float, float]:
        """(a, b, floor): a token reading `c` tokens takes `max(a + b c, floor)` seconds
        (the framing `frame_s` is in `a` and `floor`: it follows the decode, whatever
        bounds it)."""
        total = streams + self.background_streams
        a = (1.0 + self.batch_slowdown * max(0, total - 1)) / (self.decode_tps * factor)
        b = a * self.decode_context_slowdown / PER_CONTEXT
        floor = total / self.server_max_tps if self.server_max_tps else 0.0
        return a + self.frame_s, b, floor + self.frame_s if floor else 0.0

    def token_s(self, context: int, streams: int = 1, factor: float = 1.0) -> float:
        """Decode time of one token that reads `context` tokens with `streams` streams of
        this server's own (itself included; `background_streams` are added), `factor`
        this request's rate factor (decode jitter): the serving model of the profile."""
        a, b, floor = self._decode_line(streams, factor)
        return max(a + b * context, floor)

    def span_s(self, first: int, last: int, streams: int = 1, factor: float = 1.0) -> float:
        """Decode time of the tokens reading contexts `first..last` (inclusive): the sum of
        `token_s` in closed form; 0 when `last < first`."""
        if last < first:
            return 0.0
        a, b, floor = self._decode_line(streams, factor)
        if b <= 0:
            return (last - first + 1) * max(a, floor)
        # contexts below the knee run at the throughput ceiling, the rest on the line
        knee = max(first, math.ceil((floor - a) / b)) if floor > a else first
        floored = max(0, min(last + 1, knee) - first)
        count = last - knee + 1
        line = count * a + b * (knee + last) * count / 2 if count > 0 else 0.0
        return floored * floor + line

    def overhead_s(self, transport: Transport = "http") -> float:
        """Per-call API overhead of a call that came by `transport` (`TRANSPORTS`).

        Raises:
            ValueError: an unknown transport (the message lists the known ones).
        """
        overheads = {"http": self.request_overhead_s, "websocket": self.websocket_overhead_s}
        if transport not in overheads:
            known = ", ".join(TRANSPORTS)
            raise ValueError(f"unknown transport {transport!r}; choose one of: {known}")
        return overheads[transport]

    def framed(self, transport: Transport = "http") -> TimingModel:
        """This model with `frame_s` set to the per-token framing of `transport`."""
        frame = (
            self.websocket_token_overhead_s if transport == "websocket" else self.token_overhead_s
        )
        return self if frame == self.frame_s else replace(self, frame_s=frame)

    @property
    def fixed_ttft_s(self) -> float:
        """TTFT of an HTTP call before jitter, prefill and queueing: rtt + per-call
        overhead + base + pipeline stages."""
        return self.network_rtt_s + self.request_overhead_s + self.ttft_s + self.pipeline_s

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
        transport: Transport = "http",
    ) -> CallSchedule:
        """The intended schedule of one call (durations in closed form; `track` for times).

        Args:
            tokens: the call's token counts.
            streams: concurrent streams on the server while it decodes (itself included).
            ttft_extra_s: this request's TTFT jitter draw; None: the jitter's mean.
            decode_factor: this request's decode-rate factor (decode jitter); 1 = none.
            queue_s: time it waited for its slot (measured, carried into `ttft_s`).
            transport: how the call came (`TRANSPORTS`): sets its per-call overhead.
        """
        network, base, pipeline, prefill = self.ttft_parts(tokens, ttft_extra_s)
        context, reasoning, completion = tokens.prompt, tokens.reasoning, tokens.completion
        model = self.framed(transport)
        # token k >= 1 reads context + k tokens; with no visible token the reply ends at
        # the last reasoning token
        visible_from = reasoning if tokens.output else reasoning - 1
        return CallSchedule(
            model=model,
            tokens=tokens,
            streams=streams,
            decode_factor=decode_factor,
            queue_s=queue_s,
            network_s=network,
            base_s=base,
            pipeline_s=pipeline,
            prefill_s=prefill,
            overhead_s=self.overhead_s(transport),
            transport=transport,
            reasoning_s=model.span_s(context + 1, context + visible_from, streams, decode_factor),
            decode_s=model.span_s(
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
    overhead_s: float
    """Per-call API overhead of the call's transport."""
    reasoning_s: float
    """Hidden reasoning decode: first token of any kind -> first visible token (or, with
    no visible token, -> the last reasoning token)."""
    decode_s: float
    """Visible decode: first -> last visible token."""
    transport: Transport = "http"
    """How the call came (`TRANSPORTS`); a re-plan keeps it."""

    @property
    def ttft_s(self) -> float:
        """Slot request -> first token of any kind: queue + network + overhead + base +
        pipeline + prefill (the metric's TTFT, were hidden reasoning streamed)."""
        return (
            self.queue_s
            + self.network_s
            + self.overhead_s
            + self.base_s
            + self.pipeline_s
            + self.prefill_s
        )

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
