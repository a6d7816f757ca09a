"""`looplab bench transport`: the three transports measured through the real openai client."""

from __future__ import annotations

import pytest

from looplab.backends.bench_transport import TRANSPORT_WIRE_TRIPS, run_transport_bench


def test_transport_bench_measures_each_transport() -> None:
    """Each transport gets its rounds against a `looplab serve` process; the WebSocket turn
    is not held by Nagle + delayed ACK (that cost 40 ms per turn before TCP_NODELAY)."""
    cells = run_transport_bench(rounds=8, warmup=2)
    assert [c.transport for c in cells] == list(TRANSPORT_WIRE_TRIPS)
    assert all(c.rounds == 8 and 0 < c.median_ms <= c.p90_ms for c in cells)
    by_name = {c.transport: c for c in cells}
    assert by_name["http-keepalive"].ratio_to_keepalive == 1.0
    assert by_name["websocket"].median_ms < 35
    new = by_name["http-new"]
    assert new.projected_ms(0.05) - new.median_ms == pytest.approx(150)
