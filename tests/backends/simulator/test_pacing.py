"""The pacer's schedule, on a virtual clock (exact) and a wall clock (coarse)."""

from __future__ import annotations

import itertools
import time

import pytest

from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.pacing import NaivePacer, PacingRecord, Release, SchedulePacer
from looplab.clock import VirtualClock, WallClock
from looplab.latency.presets import resolve_profile

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)


async def _releases(
    pacer: SchedulePacer | NaivePacer, record: PacingRecord, clock: object
) -> list[Release]:
    return [r async for r in pacer.release(record, clock)]  # type: ignore[arg-type]


async def test_schedule_is_exact_on_virtual_clock() -> None:
    """On a virtual clock every slot is released exactly at first + i / rate."""
    record = PacingRecord.fixed(received=0.0, first=0.5, interval=0.01, slots=50)
    releases = await _releases(SchedulePacer(lambda: 0.0), record, VirtualClock())
    assert [r.stop - r.start for r in releases] == [1] * 50
    assert all(r.actual == pytest.approx(record.intended(r.start)) for r in releases)


async def test_frame_floor_batches_tokens_without_drift() -> None:
    """Below the frame floor several tokens share a release; the last one is still on time."""
    record = PacingRecord.fixed(received=0.0, first=0.1, interval=1 / 750, slots=750)
    releases = await _releases(SchedulePacer(lambda: 0.005), record, VirtualClock())
    assert sum(r.stop - r.start for r in releases) == 750
    assert max(r.stop - r.start for r in releases) > 1
    gaps = [b.actual - a.actual for a, b in itertools.pairwise(releases)]
    assert min(gaps[:-1]) >= 0.005 - 1e-9
    assert releases[-1].actual == pytest.approx(record.intended(749))
    assert max(record.lateness_s()) <= 0.005 + 1e-9


async def test_wall_clock_schedule_holds_rate_naive_does_not() -> None:
    """At 750 tok/s on a wall clock the schedule pacer holds the rate; per-token sleep cannot."""
    clock = WallClock()

    async def rate(pacer: SchedulePacer | NaivePacer) -> float:
        start = clock.now()
        record = PacingRecord.fixed(received=start, first=start, interval=1 / 750, slots=300)
        releases = await _releases(pacer, record, clock)
        return 299 / (releases[-1].actual - releases[0].actual)

    assert await rate(SchedulePacer(lambda: 0.002)) == pytest.approx(750, rel=0.03)
    assert await rate(NaivePacer()) < 750 * 0.9


async def test_http_stream_meets_profile_coarsely() -> None:
    """Through real HTTP, a 750 tok/s, 100 ms TTFT profile is met within coarse tolerances."""
    profile = resolve_profile(
        "fast-750", ["ttft_s=0.1", "prefill_tps=null", "output_tokens=300", "decode_jitter=0"]
    )
    with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(
            base_url=server.base_url, model="looplab-lorem", fetch_server_timing=True
        )
        async with InstrumentedClient(endpoint) as client:
            await client.complete([{"role": "user", "content": "warm"}], max_tokens=2)
            started = time.perf_counter()
            response = await client.complete([{"role": "user", "content": "measure"}])
    assert response.completion_tokens == 300
    assert response.timing.ttft_s == pytest.approx(0.1, abs=0.03)
    assert response.decode_rate_tps == pytest.approx(750, rel=0.05)
    assert response.timing.sent >= started
    assert response.server_timing is not None
    assert response.server_timing["lateness_p99_s"] < 0.02
