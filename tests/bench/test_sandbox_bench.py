"""`looplab bench sandbox` (looplab.bench.sandbox): every operation is timed on a real sandbox."""

from __future__ import annotations

from looplab.bench.sandbox import OPERATIONS, run_bench


async def test_every_operation_is_timed_on_a_local_sandbox() -> None:
    """Two repetitions on a local sandbox: each operation (file steps through the
    in-sandbox helper included) has two positive samples, and the JSON names them all."""
    report = await run_bench(["local"], reps=2)
    stats = report.kinds["local"]
    assert set(stats) == set(OPERATIONS)
    for op in OPERATIONS:
        assert stats[op].p50_ms > 0, op
        assert stats[op].p95_ms >= stats[op].p50_ms, op
    assert set(report.to_json()["ratio_docker_local_p50"]) == set(OPERATIONS)
    assert "local sandbox" in report.descriptions["local"]
