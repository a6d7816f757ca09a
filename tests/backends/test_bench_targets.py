"""The benches hold the TTFT target against the raw client and print the others' excess."""

from __future__ import annotations

from looplab.backends.bench.backend import BackendBenchCell
from looplab.backends.commands import client_overheads, fidelity_failures


def _cell(client: str, ttft_ms: float, rate_pct: float = 0.0) -> BackendBenchCell:
    return BackendBenchCell(
        pacer="schedule",
        target_tps=750.0,
        concurrency=16,
        streams=16,
        tokens_per_stream=100,
        rate_error_pct_p50=rate_pct,
        rate_error_pct_worst=rate_pct,
        ttft_error_ms_p50=ttft_ms,
        ttft_error_ms_p99=ttft_ms,
        request_transit_ms_p50=0.0,
        first_release_late_ms_p50=0.0,
        delivery_ms_p50=0.0,
        chunk_gap_ms_p50=0.0,
        chunk_gap_ms_p99=0.0,
        server_cpu_s_per_1k_tokens=0.0,
        client_cpu_s_per_1k_tokens=0.0,
        wall_s=1.0,
        client=client,
    )


def test_ttft_target_is_the_raw_clients_and_rate_target_everyones() -> None:
    """A stock client 3 ms late over a 0.6 ms floor passes (the 2.4 ms are its own, said so);
    a raw client over 2 ms fails, and any client's rate error over 0.5% fails."""
    cells = [_cell("raw", 0.6), _cell("stock", 3.0), _cell("looplab", 2.5, rate_pct=0.7)]
    failures = fidelity_failures(cells)
    assert failures == ["750 tok/s, 16 streams, looplab: rate error +0.70%"]
    assert client_overheads(cells) == [
        "750 tok/s, 16 streams, stock client: TTFT error 3.00 ms, raw client's 0.60: "
        "+2.40 ms of the client's own",
        "750 tok/s, 16 streams, looplab client: TTFT error 2.50 ms, raw client's 0.60: "
        "+1.90 ms of the client's own",
    ]
    assert fidelity_failures([_cell("raw", 2.5)]) == [
        "750 tok/s, 16 streams, raw: TTFT error 2.50 ms"
    ]
