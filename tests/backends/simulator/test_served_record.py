"""The served timing record: the simulator writes the keys of `ServedTiming`, in its order,
and the benches' reader validates what the endpoint answers into the same type."""

from __future__ import annotations

import json

import pydantic
import pytest

from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.record import (
    PacingSummary,
    ServedPlan,
    ServedTiming,
    read_served_timing,
)
from looplab.clock import VirtualClock
from looplab.latency.presets import resolve_profile

FAST = ["decode_tps=20000", "ttft_s=0", "prefill_tps=null", "output_tokens=5"]


async def _served() -> ServedTiming:
    simulator = Simulator(resolve_profile("fast-750", FAST), clock=VirtualClock())
    body = {"model": "looplab-lorem", "messages": [{"role": "user", "content": "hello"}]}
    prepared = simulator.prepare(json.dumps(body).encode())
    await simulator.complete(prepared)
    return simulator.timings[prepared.request_id]


async def test_a_paced_reply_has_every_key_in_the_types_order() -> None:
    """Request, pacing and plan parts: exactly the keys `ServedTiming` declares, in order."""
    record = await _served()
    assert list(record) == list(ServedTiming.__annotations__)
    request_keys = set(ServedTiming.__required_keys__)
    assert set(PacingSummary.__annotations__) | set(ServedPlan.__annotations__) == (
        set(record) - request_keys
    )


async def test_the_json_answer_reads_back_equal() -> None:
    """`read_served_timing` of the endpoint's JSON is the record the simulator kept."""
    record = await _served()
    answered = json.loads(json.dumps(record))
    assert read_served_timing(answered) == answered
    refused = {k: v for k, v in answered.items() if k in ServedTiming.__required_keys__}
    assert read_served_timing(refused) == refused  # a 429 or a fault: the request part only


def test_a_record_that_is_not_the_simulators_is_refused() -> None:
    """A record without the request part (the proxy's, say) does not validate."""
    with pytest.raises(pydantic.ValidationError):
        read_served_timing({"scheduled_first_s": 0.1, "pacing": {}})


async def test_the_backend_bench_reads_a_record_through_the_type() -> None:
    """`bench backend`'s per-stream sample takes its intended first token, rate, release
    and lateness from the record; a reply refused before pacing is an error, not a crash."""
    from looplab.backends.client.assembly import CallTiming, ModelResponse
    from looplab.bench.backend import _Samples
    from looplab.errors import BackendError

    record = json.loads(json.dumps(await _served()))
    received = record["received_clock_s"]
    timing = CallTiming(scheduled=received, sent=received, first_token=received + 0.01)
    timing.last_token = received + 0.02
    response = ModelResponse({}, timing, "stop", completion_tokens=5, server_timing=record)
    samples = _Samples()
    samples.add(response)
    assert samples.intended == [record["intended_rate_tps"]]
    assert samples.ttft_errors == [pytest.approx((0.01 - record["intended_first_s"]) * 1000)]
    assert samples.late99 == [record["lateness_p99_s"] or 0.0]
    refused = {k: v for k, v in record.items() if k in ServedTiming.__required_keys__}
    with pytest.raises(BackendError, match="not paced"):
        _Samples().add(ModelResponse({}, timing, "stop", server_timing=refused))
