"""`looplab bench transport`: the three transports measured through the real openai client."""

from __future__ import annotations

import pytest

from looplab.bench.loop import overhead_for_cut, run_loop_bench
from looplab.bench.transport import TRANSPORT_WIRE_TRIPS, run_transport_bench


# asserts a wall-clock latency (the WebSocket turn under 35 ms, where Nagle + delayed ACK
# cost 40 ms): beside six busy workers it read 35.4 ms, so it runs with the timing group
@pytest.mark.timing
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


def test_task_over_websocket_is_shorter_by_the_overhead_it_saves() -> None:
    """A 4-call task: the HTTP run pays 0.2 s more overhead per call than the WebSocket
    run (0.25 vs 0.05), and its task time shows it; `overhead_for_cut` inverts the cut."""
    overrides = ["decode_tps=20000", "ttft_s=0", "network_rtt_s=0", "request_overhead_s=0.25"]
    # tools of 0.2 s keep the inverted overhead well-conditioned (the cut stays far from
    # the 80% ceiling, where noise would swing it)
    http, ws = run_loop_bench(calls=4, tool_s=0.2, overrides=overrides)
    assert (http.transport, ws.transport) == ("http", "websocket")
    assert (http.overhead_s, ws.overhead_s) == (0.25, 0.05)
    # loose: a loaded machine adds time to either run (0.8 s expected)
    assert http.task_s - ws.task_s > 4 * 0.2 * 0.6, (http.task_s, ws.task_s)
    assert ws.per_call_s >= 0.05
    cut = 1 - ws.task_s / http.task_s
    needed = overhead_for_cut(http, cut)
    assert needed == pytest.approx(0.25, rel=0.5)
