"""The proxy's pacing record: when slots may go out, whatever the upstream or the proxy did."""

from __future__ import annotations

import pytest

from looplab.backends.proxy.gate import UNKNOWN_SLOTS, GatedRecord
from looplab.latency.timing import TimingModel, TokenTrack


def _record(ttft: float = 0.3, rate: float = 100.0) -> GatedRecord:
    model = TimingModel(decode_tps=rate)
    track = TokenTrack(model, start=ttft, context=0, count=UNKNOWN_SLOTS, streams=1)
    return GatedRecord(received=0.0, track=track, slots=UNKNOWN_SLOTS)


def test_a_late_first_release_moves_the_rest() -> None:
    """A first slot released 70 ms late (the proxy's stall) moves later slots by 70 ms:
    none is due early to catch up, so the client sees the profile's decode rate."""
    record = _record()
    record.arrive([1] * 10, 0.01)  # the upstream sent everything long before the TTFT
    assert record.scheduled(9) == pytest.approx(0.39)
    record.released_first(0.37)
    assert record.held_s == pytest.approx(0.07)
    assert record.scheduled(1) == pytest.approx(0.38)
    assert record.scheduled(9) == pytest.approx(0.46)
    assert record.due(0.375) == 1  # before the fix: slots 0-7 all due at once


def test_an_on_time_first_release_moves_nothing() -> None:
    """A first release within the 1 ms slack leaves the profile's schedule as it was."""
    record = _record()
    record.arrive([1] * 5, 0.01)
    record.released_first(0.3005)
    assert record.held_s == 0.0
    assert record.scheduled(4) == pytest.approx(0.34)


def test_a_late_upstream_anchors_the_track() -> None:
    """An upstream whose first token comes after the profile's TTFT sets the first token;
    decode goes on at the profile's rate from there."""
    record = _record()
    record.arrive([1], 0.5)
    assert record.anchored_s == pytest.approx(0.2)
    record.arrive([1] * 4, 0.5)
    assert record.scheduled(4) == pytest.approx(0.54)
