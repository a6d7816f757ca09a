"""What a run cost: a pure function of its model calls' token counts and a price entry.

Each call is billed `uncached prompt x input + cached x cached input + visible output x
output + hidden reasoning x reasoning` (per million tokens, `looplab.latency.prices`).
Cost is never stored in a trace: it is computed here from the tokens the trace holds,
at whatever price entry a profile names, so a run re-timed at another profile is priced
at that profile's entry with the same tokens.

Switching tiers within a run: when calls are priced by tier (`tier_of`) and a call's
entry has another `speed_tier` than the previous call's, and either entry says the switch
loses the prompt cache (`cache_lost_on_tier_switch`, Anthropic's fast mode), that call's
cached tokens are billed as uncached input (`cache_lost_tokens`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from looplab.latency.presets import presets
from looplab.latency.prices import PriceEntry, resolve_price
from looplab.latency.profile import LatencyProfile
from looplab.latency.spec import profile_price
from looplab.traces.io import Trace
from looplab.traces.schema import ModelCallEvent

__all__ = [
    "RunCost",
    "median_cost_at_profile",
    "median_cost_per_task",
    "median_cost_per_task_at_profile",
    "price_of",
    "recorded_cost",
    "run_cost",
    "trace_cost",
]

MILLION = 1_000_000


@dataclass(frozen=True)
class RunCost:
    """One run's cost in US dollars, by kind of token."""

    input_usd: float = 0.0
    """Uncached prompt tokens (and cached ones whose cache a tier switch lost)."""
    cached_usd: float = 0.0
    """Prompt tokens read from the cache."""
    output_usd: float = 0.0
    """Visible completion tokens."""
    reasoning_usd: float = 0.0
    """Hidden reasoning tokens."""
    priced_calls: int = 0
    """Calls with token counts (priced)."""
    unpriced_calls: int = 0
    """Calls without a completion count (not priced: the total is a lower bound)."""
    cache_lost_tokens: int = 0
    """Cached tokens billed as input because the call switched tier."""

    @property
    def total_usd(self) -> float:
        """Everything."""
        return self.input_usd + self.cached_usd + self.output_usd + self.reasoning_usd


def run_cost(
    calls: Sequence[ModelCallEvent],
    price: PriceEntry,
    *,
    tier_of: Callable[[ModelCallEvent], PriceEntry] | None = None,
) -> RunCost:
    """The cost of `calls` (one run's, in order) at `price`, or per call at `tier_of(call)`.

    Args:
        calls: a run's model calls; calls without `completion_tokens` are counted as
            unpriced, never guessed.
        price: the entry every call is billed at (when `tier_of` is None).
        tier_of: the entry of each call (a run that switched tiers); see the module doc.
    """
    totals = {"input": 0.0, "cached": 0.0, "output": 0.0, "reasoning": 0.0}
    priced = unpriced = lost = 0
    previous: PriceEntry | None = None
    for call in sorted(calls, key=lambda c: c.start):
        entry = tier_of(call) if tier_of is not None else price
        if call.completion_tokens is None:
            unpriced += 1
            previous = entry
            continue
        prompt = call.prompt_tokens or 0
        cached = min(call.cached_tokens or 0, prompt)
        if previous is not None and _cache_lost(previous, entry):
            lost += cached
            cached = 0
        reasoning = call.reasoning_tokens or 0
        output = max(0, call.completion_tokens - reasoning)
        totals["input"] += (prompt - cached) * entry.input_per_m / MILLION
        totals["cached"] += cached * entry.cached_input_per_m / MILLION
        totals["output"] += output * entry.output_per_m / MILLION
        totals["reasoning"] += reasoning * entry.reasoning_rate / MILLION
        priced += 1
        previous = entry
    return RunCost(
        input_usd=totals["input"],
        cached_usd=totals["cached"],
        output_usd=totals["output"],
        reasoning_usd=totals["reasoning"],
        priced_calls=priced,
        unpriced_calls=unpriced,
        cache_lost_tokens=lost,
    )


def _cache_lost(before: PriceEntry, now: PriceEntry) -> bool:
    """Whether moving from `before` to `now` loses the prompt cache."""
    switched = before.speed_tier != now.speed_tier or before.name != now.name
    return switched and (before.cache_lost_on_tier_switch or now.cache_lost_on_tier_switch)


def trace_cost(trace: Trace, price: PriceEntry) -> RunCost:
    """`run_cost` of a trace's model calls at `price` (the tokens are the trace's own;
    re-timing never changes them, so this is the cost at any profile priced `price`)."""
    return run_cost(trace.model_calls(), price)


def median_cost_per_task(traces: Iterable[Trace], price: PriceEntry) -> float | None:
    """Median dollars per run (one run = one task attempt) of `traces` at `price`, over
    the runs with at least one priced call; None when none has.

    The bottom line's "costs $C instead of $D": call it once per profile's entry."""
    costs = [c.total_usd for t in traces if (c := trace_cost(t, price)).priced_calls]
    return statistics.median(costs) if costs else None


def price_of(profile: LatencyProfile | dict[str, object] | None) -> PriceEntry | None:
    """The price entry a profile names (a `LatencyProfile` or a trace header's profile
    dict), or None when it names none.

    Raises:
        ConfigError: the profile names an entry that does not exist.
    """
    name = profile_price(profile)
    return resolve_price(name) if name else None


def median_cost_per_task_at_profile(
    traces: Iterable[Trace], profile: LatencyProfile
) -> float | None:
    """`median_cost_per_task` at the entry `profile` names; None when it names none or no
    run has a priced call."""
    price = price_of(profile)
    return median_cost_per_task(traces, price) if price is not None else None


median_cost_at_profile = median_cost_per_task_at_profile
"""Short alias."""


def recorded_cost(trace: Trace) -> RunCost | None:
    """The cost of a run as it ran: each call at the price entry of the profile it was
    served at (`ModelCallEvent.profile`, a preset name; else the header's profile), so a
    run that switched tiers pays the lost cache (module doc). None when the header's
    profile names no price entry."""
    default = price_of(trace.header.profile)
    if default is None:
        return None
    known = presets()

    def tier_of(call: ModelCallEvent) -> PriceEntry:
        profile = known.get(call.profile or "")
        return (price_of(profile) if profile is not None else None) or default

    return run_cost(trace.model_calls(), default, tier_of=tier_of)
