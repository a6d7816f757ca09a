"""The latency profile: everything that sets how long a simulated model call takes.

One request's timeline, all offsets from the moment the server receives it (the formula
itself lives in `looplab.latency.timing`, the one call-timing function):

```
queue wait (concurrency limit)                     -- measured, not computed
+ network_rtt_s                                    -- request + first byte back
+ request_overhead_s (HTTP) / websocket_overhead_s -- per-call API overhead (transport)
+ ttft_s + jitter                                  -- fixed per-request cost
+ pipeline_stages * stage_latency_s                -- one-wafer-per-layer serving: TTFT only
+ prefill of the uncached prompt tokens            -- prefix-cache hits are not prefilled
= first token of the reply (hidden reasoning first, then visible)
then token k >= 1 (reasoning included) after token_s(context + k, streams)
     + token_overhead_s (HTTP) / websocket_token_overhead_s   -- per-token framing
```

The serving model (all neutral by default: a constant rate, linear prefill):

- **context**: a token that reads `c` context tokens takes
  `(1 / decode_tps) x (1 + decode_context_slowdown x c / 100,000)`: every new token reads
  the whole KV cache, so decode slows as the context grows (`a + b x context`).
- **load**: with `n` streams on the server (requests holding a slot, plus
  `background_streams`), that time is multiplied by `1 + batch_slowdown x (n - 1)`
  (continuous batching shares memory bandwidth) and is at least `n / server_max_tps`
  (the server's decode throughput ceiling).
- **prefill**: the prompt token at position `p` takes
  `(1 / prefill_tps) x (1 + prefill_context_slowdown x p / 100,000)`, so prefilling the
  uncached tokens `C..P-1` costs `(u + k x u (P + C - 1) / 2 / 100,000) / prefill_tps`
  with `u = P - C`: linear plus quadratic in the prompt length (attention).

Hidden reasoning tokens are decoded first and take decode time but are never sent, so
the first *visible* token arrives after the reasoning's decode time.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from looplab.config import StrictModel
from looplab.distributions import Distribution, Fixed
from looplab.latency.prices import check_price
from looplab.latency.vision import DEFAULT_VISION_RULE, VISION_RULES

__all__ = ["RECORDED", "RECORDED_KEY", "FaultConfig", "LatencyProfile"]

RECORDED_KEY = "recorded"
RECORDED = {RECORDED_KEY: True}
"""Validation context for a profile read back from a trace
(`LatencyProfile.model_validate(spec, context=RECORDED)`): its price entry is what the run
named when it ran, not checked again (an entry since removed leaves the cost unpriced,
with the reason, in `report.views.cost`; the timing is still the run's)."""


class FaultConfig(StrictModel):
    """Injected backend faults, for testing how agents survive a flaky API.

    Draws come from one generator seeded by `seed`, in request order, so a retry of the
    same request can succeed (as with a real flaky backend).
    """

    error_rate: float = Field(default=0.0, ge=0, le=1)
    """Probability that a valid request is answered with HTTP `error_status` instead."""
    error_status: Literal[429, 500, 502, 503] = 500
    """Status of injected errors (429 carries `retry-after: 1`)."""
    drop_stream_rate: float = Field(default=0.0, ge=0, le=1)
    """Probability that a stream stops after a random share of its tokens, without a
    finish reason or `[DONE]` (as when a proxy cuts the connection)."""
    seed: int = 0
    """Seed of the fault draws."""


class LatencyProfile(StrictModel):
    """A named, validated latency shape for the simulated backend."""

    name: str = "custom"
    """Preset name (or `custom`)."""
    description: str = ""
    """One line on what this profile stands for."""
    source: str = ""
    """Where the numbers come from (publication, date); empty for synthetic profiles."""
    assumptions: list[str] = Field(default_factory=list)
    """Which values are guesses rather than published figures."""
    price: str | None = None
    """The price entry this speed is sold at (`looplab.latency.prices`, e.g.
    `openai-gpt-5.4-standard`, or a price YAML file): what a run at this profile costs per
    token. None: not priced (cost views say so). Checked when the profile is made: an
    unknown entry or a bad price file is an error (`prices.check_price`), except where a
    recorded trace's profile is read back (`RECORDED`)."""

    decode_tps: float = Field(gt=0, le=1_000_000)
    """Output tokens per second per stream, hidden reasoning tokens included: the rate of
    one stream alone on the server at zero context (see the serving model above)."""
    decode_context_slowdown: float = Field(default=0.0, ge=0)
    """Relative growth of the per-token decode time per 100,000 context tokens
    (0 = context does not slow decode)."""
    batch_slowdown: float = Field(default=0.0, ge=0)
    """Relative growth of the per-token decode time per additional concurrent stream
    (0 = streams do not slow each other)."""
    server_max_tps: float | None = Field(default=None, gt=0)
    """Decode throughput ceiling of the server, tokens/s summed over its streams; None:
    no ceiling."""
    background_streams: int = Field(default=0, ge=0)
    """Streams the server decodes for other clients (not simulated, always present):
    `background_streams=32` is "as if 32 other agents shared the server"."""
    decode_jitter: float = Field(default=0.0, ge=0, lt=1)
    """Relative per-request spread of the decode rate (Gaussian sigma, clipped to +-3 sigma)."""
    ttft_s: float = Field(default=0.0, ge=0)
    """Fixed per-request time before the first token (scheduling, first forward pass)."""
    ttft_jitter_s: Distribution = Field(default_factory=lambda: Fixed(value=0.0))
    """Extra time added to each request's TTFT, drawn per request (seeded)."""
    prefill_tps: float | None = Field(default=None, gt=0)
    """Prompt tokens per second for uncached tokens at position 0; None means prefill is
    free."""
    prefill_context_slowdown: float = Field(default=0.0, ge=0)
    """Relative growth of the per-token prefill time per 100,000 tokens of position in the
    prompt (the quadratic attention term; 0 = prefill is linear in the prompt)."""
    prefix_cache: bool = True
    """Whether prompt prefixes seen before (within the TTL) skip prefill."""
    prefix_cache_ttl_s: float = Field(default=300.0, gt=0)
    """How long a cached prefix stays usable after its last use."""
    prefix_cache_block_tokens: int = Field(default=1, ge=1)
    """Cached token counts are rounded down to a multiple of this (128 at OpenAI)."""
    prefix_cache_min_tokens: int = Field(default=0, ge=0)
    """Prefixes shorter than this are never cached (1024 at OpenAI)."""
    reasoning_tokens: Distribution = Field(default_factory=lambda: Fixed(value=0.0))
    """Hidden reasoning tokens per call: decoded (take time), counted in usage, not sent."""
    output_tokens: Distribution = Field(default_factory=lambda: Fixed(value=200.0))
    """Visible output length per call for policies that choose their own (`lorem`)."""
    pipeline_stages: int = Field(default=1, ge=1)
    """Pipeline stages a request crosses before its first token (e.g. wafers)."""
    stage_latency_s: float = Field(default=0.0, ge=0)
    """Latency added per pipeline stage; adds to TTFT only, never to the decode rate."""
    network_rtt_s: float = Field(default=0.0, ge=0)
    """Network round trip between client and server, added to TTFT."""
    request_overhead_s: float = Field(default=0.0, ge=0)
    """Per-call API overhead of a request sent over HTTP (a request of its own: routing,
    authentication, validation, loading the conversation), added to TTFT."""
    websocket_overhead_s: float | None = Field(default=None, ge=0)
    """The same overhead for a `response.create` on an open Responses WebSocket (state kept
    on the connection); None: 20% of `request_overhead_s`, the ~80% cut per round trip
    OpenAI reported (2026-04-22; an assumption, their seconds are not published)."""
    token_overhead_s: float = Field(default=0.0, ge=0, le=1.0)
    """Per-token framing overhead of a reply streamed over HTTP (an SSE event per token:
    serialising, framing and writing it), added to every completion token after the
    first (hidden reasoning included: the model does not tell framed tokens apart)."""
    websocket_token_overhead_s: float | None = Field(default=None, ge=0, le=1.0)
    """The same for a reply streamed on a Responses WebSocket; None: 70% of
    `token_overhead_s`, the ~30% per-token cut OpenAI reported (2026-04-22; an
    assumption, their seconds are not published)."""
    max_concurrency: int | None = Field(default=None, ge=1)
    """Streams decoded at once; further requests wait in the queue. None = unlimited."""
    max_queue: int = Field(default=1024, ge=0)
    """Requests allowed to wait for a slot; beyond it the server answers 429."""
    context_window: int = Field(default=1_050_000, ge=1)
    """Prompt + max output tokens allowed per request (400 context_length_exceeded above)."""
    max_output_tokens: int = Field(default=128_000, ge=1)
    """Largest completion (reasoning + visible) one request may produce."""
    frame_floor_s: float = Field(default=0.002, ge=0, le=0.1)
    """Minimum gap between SSE chunks; tokens due within it share a chunk."""
    max_chunks_per_s: float | None = Field(default=4000.0, gt=0)
    """Server-wide SSE chunk budget: with N active streams the frame floor widens to
    N / max_chunks_per_s, so under load more tokens share a chunk (rates stay exact).
    None disables it."""
    vision_tokens: str = DEFAULT_VISION_RULE
    """How an image in the prompt is counted: a rule of `looplab.latency.vision`
    (`gpt-4o`, `gpt-4o-low`, `gpt-patches`, `claude`, `qwen2.5-vl`, `gemini-3-low` ..
    `gemini-3-ultra`); a 1280x800 screenshot is 1,105 tokens under `gpt-4o`."""
    seed: int = 0
    """Seed of every random draw (jitter, lengths, reasoning) this profile makes."""
    faults: FaultConfig = Field(default_factory=FaultConfig)
    """Injected errors and dropped streams (off by default)."""

    @field_validator("price")
    @classmethod
    def _known_price(cls, price: str | None, info: ValidationInfo) -> str | None:
        recorded = isinstance(info.context, dict) and info.context.get(RECORDED_KEY)
        if price is not None and not recorded:
            check_price(price)
        return price

    @field_validator("vision_tokens")
    @classmethod
    def _known_rule(cls, rule: str) -> str:
        if rule not in VISION_RULES:
            raise ValueError(
                f"{rule!r} is not a vision token rule; choose one of: "
                f"{', '.join(sorted(VISION_RULES))}"
            )
        return rule

    @model_validator(mode="after")
    def _limits_fit(self) -> LatencyProfile:
        if self.max_output_tokens > self.context_window:
            raise ValueError(
                f"max_output_tokens ({self.max_output_tokens}) exceeds "
                f"context_window ({self.context_window})"
            )
        return self

    def frame_floor_for(self, active_streams: int) -> float:
        """The frame floor in force with `active_streams` streams decoding."""
        if self.max_chunks_per_s is None:
            return self.frame_floor_s
        return max(self.frame_floor_s, active_streams / self.max_chunks_per_s)
