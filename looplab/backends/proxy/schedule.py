"""The profile's schedule for a proxied request: the simulator's counts, the one timing function.

`plan_request` counts the prompt and consults the prefix cache exactly as the simulator
does for the same request (Responses requests through their chat translation), draws the
request's TTFT and decode jitter from a generator seeded by its canonical hash, and asks
`TimingModel.plan` for the schedule, with the reply's length unknown (`UNKNOWN_SLOTS`).
`replan` is the same schedule once the reply's token counts are known (its usage).
"""

from __future__ import annotations

import random
from typing import Any

from looplab.backends.proxy.events import Usage
from looplab.backends.proxy.gate import UNKNOWN_SLOTS
from looplab.backends.proxy.store import request_hash
from looplab.backends.simulator.prefix_cache import PrefixCache, prefix_hashes
from looplab.backends.simulator.responses import chat_body
from looplab.distributions import rate_factor
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import CallSchedule, CallTokens, TimingModel, Transport
from looplab.latency.tokens import REPLY_PRIMING_TOKENS, Tokenizer

__all__ = ["plan_request", "replan"]


def plan_request(
    timing: TimingModel,
    profile: LatencyProfile,
    tokenizer: Tokenizer,
    cache: PrefixCache,
    endpoint: str,
    body: dict[str, Any],
    *,
    received: float,
    streams: int,
    transport: Transport = "http",
) -> CallSchedule:
    """The schedule of one request before its reply is known (see the module docstring);
    `transport` (`http`, `websocket`) sets its per-call overhead."""
    chat = chat_body(body) if endpoint == "responses" else body
    messages = [m for m in chat.get("messages") or [] if isinstance(m, dict)]
    tools = [t for t in chat.get("tools") or [] if isinstance(t, dict)]
    cumulative = tokenizer.count_messages(messages, tools, profile.vision_tokens)
    prompt = (cumulative[-1] if cumulative else 0) + REPLY_PRIMING_TOKENS
    cached = 0
    if profile.prefix_cache and messages:
        cached = cache.lookup_and_store(prefix_hashes(messages, tools), cumulative, received)
    rng = random.Random(int(request_hash(endpoint, body)[:16], 16) ^ profile.seed)
    return timing.plan(
        CallTokens(prompt=prompt, cached=min(cached, prompt), output=UNKNOWN_SLOTS),
        streams=streams,
        ttft_extra_s=profile.ttft_jitter_s.sample(rng),
        decode_factor=rate_factor(profile.decode_jitter, rng),
        transport=transport,
    )


def replan(timing: TimingModel, plan: CallSchedule, usage: Usage) -> CallSchedule:
    """`plan` with the reply's token counts from `usage` (hidden reasoning first)."""
    reasoning = usage.reasoning or 0
    completion = usage.completion or 0
    return timing.plan(
        CallTokens(
            prompt=plan.tokens.prompt,
            cached=plan.tokens.cached,
            reasoning=reasoning,
            output=max(0, completion - reasoning),
        ),
        streams=plan.streams,
        ttft_extra_s=plan.base_s - timing.ttft_s,
        decode_factor=plan.decode_factor,
        transport=plan.transport,
    )
