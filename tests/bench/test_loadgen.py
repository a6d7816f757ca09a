"""The benches' load generator: streams in worker processes, times on the shared clock."""

from __future__ import annotations

import os

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.bench.loadgen import LoadGenerator, LoadSpec, attach_server_timing


def test_load_runs_in_worker_processes(fast_server: SimulatorServer) -> None:
    """Every request is reported, from other processes, on the server's clock."""
    with LoadGenerator(workers=2) as load:
        result = load.run(LoadSpec(fast_server.base_url, concurrency=4, rounds=2, stagger_s=0.05))
        assert os.getpid() not in load.pids
    assert len(result.responses) == 8
    assert all(r.completion_tokens == 40 for r in result.responses)
    assert result.client_cpu_s > 0
    attach_server_timing(fast_server.base_url, result.responses)
    for response in result.responses:
        record = response.server_timing
        assert record is not None
        assert response.timing.sent <= record["received_clock_s"]
        assert record["received_clock_s"] <= (response.timing.first_token or 0)


def test_stock_client_is_measured_like_the_instrumented_one(fast_server: SimulatorServer) -> None:
    """The stock openai client (the second bench client) reports every request with its
    usage tokens, chunk times and the server's timing id, with the bench's request shape."""
    with LoadGenerator(workers=1) as load:
        spec = LoadSpec(
            fast_server.base_url, concurrency=2, rounds=2, client="stock", max_tokens=500
        )
        result = load.run(spec)
    assert len(result.responses) == 4
    attach_server_timing(fast_server.base_url, result.responses)
    for response in result.responses:
        assert response.completion_tokens == 40
        assert response.timing.first_token is not None
        assert response.visible_chunks == len(response.timing.chunk_times) >= 1
        assert response.timing.first_token <= (response.timing.last_token or 0)
        record = response.server_timing
        assert record is not None
        assert response.timing.sent <= record["received_clock_s"]
        assert record["received_clock_s"] <= response.timing.first_token


def test_raw_client_is_measured_like_the_others(fast_server: SimulatorServer) -> None:
    """The raw-socket client (the bench's server floor) reports every request with its
    usage tokens, chunk times and the server's timing id, on kept-alive connections."""
    with LoadGenerator(workers=1) as load:
        spec = LoadSpec(fast_server.base_url, concurrency=2, rounds=3, client="raw", max_tokens=500)
        result = load.run(spec)
    assert len(result.responses) == 6
    attach_server_timing(fast_server.base_url, result.responses)
    for response in result.responses:
        assert response.completion_tokens == 40
        assert response.finish_reason == "stop"
        assert response.timing.first_token is not None
        assert response.visible_chunks == len(response.timing.chunk_times) >= 1
        record = response.server_timing
        assert record is not None
        assert response.timing.sent <= record["received_clock_s"]
        assert record["received_clock_s"] <= response.timing.first_token
