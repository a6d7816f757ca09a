"""A model call's new timing and the call duration it gives (shared by every re-timing).

`retime.retime_events` (the time warp), `retime.sweep_trace` and `graph.critical_path`
all price a re-timed call the same way: its recorded client queueing (`sent - start`)
and stream tail (`end - last_token`) kept, TTFT + reasoning + visible decode replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from looplab.latency.timing import CallTokens, TimingModel
from looplab.traces.schema import ModelCallEvent

__all__ = ["ModelTiming", "TimingFn", "call_tokens", "model_timing", "retimed_duration"]


@dataclass(frozen=True)
class ModelTiming:
    """A model call's new timing (seconds): sent -> first token of any kind (`ttft_s`),
    hidden reasoning decode (`reasoning_s`), first -> last visible token (`decode_s`)."""

    ttft_s: float
    decode_s: float
    reasoning_s: float = 0.0


TimingFn = Callable[[ModelCallEvent], ModelTiming | None]
"""New timing of a recorded model call, or None to keep its recorded timing."""


def retimed_duration(call: ModelCallEvent, new: ModelTiming) -> float:
    """The call's `end - start` with `new` timing: recorded queueing and tail kept."""
    queue = (call.sent - call.start) if call.sent is not None else 0.0
    tail = (call.end - call.last_token) if call.last_token is not None else 0.0
    return queue + new.ttft_s + new.reasoning_s + new.decode_s + tail


def call_tokens(call: ModelCallEvent) -> CallTokens | None:
    """The token counts of a recorded call, or None when it has no completion count."""
    if call.completion_tokens is None:
        return None
    reasoning = call.reasoning_tokens or 0
    return CallTokens(
        prompt=call.prompt_tokens or 0,
        cached=call.cached_tokens or 0,
        reasoning=reasoning,
        output=max(0, call.completion_tokens - reasoning),
    )


def model_timing(model: TimingModel) -> TimingFn:
    """Model timing of a call by `model.plan` (the one call-timing function) from the
    call's recorded token counts and transport; None for calls without token counts."""

    def timing(call: ModelCallEvent) -> ModelTiming | None:
        tokens = call_tokens(call)
        if tokens is None:
            return None
        plan = model.plan(tokens, transport=call.transport)
        return ModelTiming(ttft_s=plan.ttft_s, reasoning_s=plan.reasoning_s, decode_s=plan.decode_s)

    return timing
