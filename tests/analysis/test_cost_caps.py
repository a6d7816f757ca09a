"""Cost per run and success under a cap: pure functions with hand-checked numbers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from looplab.analysis.caps import cap_events, finished, share_under_cap, under_cap_curve
from looplab.analysis.cost import median_cost_per_task, recorded_cost, run_cost, trace_cost
from looplab.latency.presets import presets
from looplab.latency.prices import PriceEntry, resolve_price
from looplab.traces.io import Trace
from looplab.traces.schema import ModelCallEvent, RunEndEvent, StepEvent, TraceEvent, TraceHeader


def _call(
    start: float,
    *,
    prompt: int,
    cached: int,
    completion: int,
    reasoning: int = 0,
    profile: str | None = None,
) -> ModelCallEvent:
    return ModelCallEvent(
        run_id="r",
        step=0,
        start=start,
        end=start + 1.0,
        sent=start,
        first_token=start + 0.5,
        last_token=start + 1.0,
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=completion,
        reasoning_tokens=reasoning,
        profile=profile,
    )


def _entry(**kw: Any) -> PriceEntry:
    base = {
        "name": "x",
        "provider": "p",
        "model": "m",
        "tier": "t",
        "speed_tier": "standard",
        "input_per_m": 2.0,
        "cached_input_per_m": 0.5,
        "output_per_m": 10.0,
        "source": "assumed",
        "date": "2026-12-04",
    }
    return PriceEntry.model_validate({**base, **kw})


def test_one_call_cost_by_hand() -> None:
    """1M prompt (400k cached), 100k visible + 50k reasoning at $2/$0.5/$10: $2.95."""
    cost = run_cost(
        [_call(0, prompt=1_000_000, cached=400_000, completion=150_000, reasoning=50_000)], _entry()
    )
    assert cost.input_usd == pytest.approx(1.2)  # 600k x $2
    assert cost.cached_usd == pytest.approx(0.2)  # 400k x $0.5
    assert cost.output_usd == pytest.approx(1.0)  # 100k x $10
    assert cost.reasoning_usd == pytest.approx(0.5)  # 50k at the output rate
    assert cost.total_usd == pytest.approx(2.9)


def test_calls_without_tokens_are_counted_not_guessed() -> None:
    """A call without a completion count is unpriced, never billed."""
    bare = ModelCallEvent(run_id="r", start=0, end=1)
    cost = run_cost([bare, _call(2, prompt=1000, cached=0, completion=0)], _entry())
    assert (cost.priced_calls, cost.unpriced_calls) == (1, 1)
    assert cost.total_usd == pytest.approx(0.002)


def test_switching_tier_bills_the_cached_tokens_as_input() -> None:
    """Standard -> fast with a cache-losing entry: the fast call's 900 cached tokens are
    billed at its input rate; staying on one tier keeps them cached."""
    std = _entry(name="std", cache_lost_on_tier_switch=True)
    fast = _entry(
        name="fast",
        speed_tier="fast",
        input_per_m=12.0,
        cached_input_per_m=3.0,
        cache_lost_on_tier_switch=True,
    )
    calls = [
        _call(0, prompt=1000, cached=0, completion=0, profile="s"),
        _call(2, prompt=1000, cached=900, completion=0, profile="f"),
    ]
    switched = run_cost(calls, std, tier_of=lambda c: fast if c.profile == "f" else std)
    assert switched.cache_lost_tokens == 900
    assert switched.input_usd == pytest.approx(1000 * 2 / 1e6 + 1000 * 12 / 1e6)
    same = run_cost(calls, fast)
    assert same.cache_lost_tokens == 0
    assert same.cached_usd == pytest.approx(900 * 3 / 1e6)


def _trace(
    end_s: float, *, reason: str = "finish", success: bool | None = True, tokens: int = 1000
) -> Trace:
    header = TraceHeader(run_id="r", created=datetime(2026, 12, 4, tzinfo=UTC))
    events: list[TraceEvent] = [
        _call(0.0, prompt=tokens, cached=0, completion=100),
        StepEvent(
            run_id="r",
            step=0,
            start=0.0,
            end=end_s,
            model_s=1.0,
            tool_s=end_s - 1.0,
            overhead_s=0.0,
        ),
        RunEndEvent(run_id="r", start=0.0, end=end_s, end_reason=reason, success=success, steps=1),
    ]
    return Trace(header=header, events=events)


def test_median_cost_per_task_at_the_mission_prices() -> None:
    """Three runs of 1k/2k/3k prompt + 100 output tokens: the median is the 2k run's."""
    traces = [_trace(5, tokens=n) for n in (1000, 3000, 2000)]
    slow = resolve_price("openai-gpt-5.4-standard")
    fast = resolve_price("openai-gpt-5.4-codex-fast")
    assert median_cost_per_task(traces, slow) == pytest.approx(2000 * 2.5e-6 + 100 * 15e-6)
    assert median_cost_per_task(traces, fast) == pytest.approx(2 * (2000 * 2.5e-6 + 100 * 15e-6))
    assert trace_cost(traces[0], slow).priced_calls == 1
    assert median_cost_per_task([], slow) is None


def test_share_under_cap_counts_unfinished_runs_as_misses() -> None:
    """Times 10, 20, unfinished, 40 under caps 5/20/100: 0, 1/2, 3/4."""
    times = [10.0, 20.0, None, 40.0]
    assert share_under_cap(times, 5) == 0.0
    assert share_under_cap(times, 20) == 0.5
    assert share_under_cap(times, 100) == 0.75
    assert share_under_cap([], 10) is None


def test_finished_excludes_timeouts_limits_and_failures() -> None:
    """`timeout`, a step limit and a failed check are not finished; unknown success is."""
    assert finished(_trace(3).end)
    assert finished(_trace(3, success=None).end)
    assert not finished(_trace(3, reason="timeout").end)
    assert not finished(_trace(3, reason="step_limit").end)
    assert not finished(_trace(3, success=False).end)
    assert not finished(None)


def test_curve_retimes_at_each_profile() -> None:
    """Re-timed, the 1 s call takes 0.3 + 0.1 + 100/80 = 1.65 s at slow-80 (task 3.65 s)
    and 0.3 + 0.1 + 100/750 = 0.53 s at fast-750 (task 2.53 s): a 3.2 s cap passes the
    fast run only."""
    trace = _trace(3.0)
    slow, fast = presets()["slow-80"], presets()["fast-750"]
    at_slow = under_cap_curve([trace], slow, [2.0 + 1.2, 100.0])
    at_fast = under_cap_curve([trace], fast, [2.0 + 1.2, 100.0])
    assert at_fast.shares == [1.0, 1.0]
    assert at_slow.shares == [0.0, 1.0]


def test_cap_events_cuts_the_run_and_ends_it_timeout() -> None:
    """A 10 s run under a 4 s cap: the step ending at 10 s is dropped, the end is at 4 s,
    `timeout`, unfinished; under a 20 s cap nothing changes."""
    events = _trace(10.0).events
    cut = cap_events(events, 4.0)
    end = cut[-1]
    assert isinstance(end, RunEndEvent)
    assert (end.end, end.end_reason, end.success, end.steps) == (4.0, "timeout", False, 0)
    assert [e.kind for e in cut] == ["model_call", "run_end"]
    assert cap_events(events, 20.0) == events


def test_recorded_cost_prices_each_call_at_its_profile_and_loses_the_cache() -> None:
    """A run on slow-80 whose second call went to fast-750: the first call at GPT-5.4
    standard rates, the second at Codex /fast rates; neither entry loses the cache on a
    switch, so the 500 cached tokens stay cached."""
    trace = _trace(5.0)
    header = trace.header.model_copy(update={"profile": presets()["slow-80"].model_dump()})
    calls = [
        _call(0, prompt=1000, cached=0, completion=100, profile="slow-80"),
        _call(2, prompt=1000, cached=500, completion=100, profile="fast-750"),
    ]
    cost = recorded_cost(Trace(header=header, events=calls))
    assert cost is not None and cost.cache_lost_tokens == 0
    slow = 1000 * 2.5e-6 + 100 * 15e-6
    fast = 500 * 5e-6 + 500 * 0.5e-6 + 100 * 30e-6
    assert cost.total_usd == pytest.approx(slow + fast)
    assert recorded_cost(trace) is None  # no profile in the header: unpriced
