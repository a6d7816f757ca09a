"""The benches' load generator: streams in worker processes, times on the shared clock."""

from __future__ import annotations

import os

from looplab.backends.inprocess import SimulatorServer
from looplab.backends.loadgen import LoadGenerator, LoadSpec, attach_server_timing


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
