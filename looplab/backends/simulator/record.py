"""The served timing record: what the simulator remembers of each reply, one type for the
writer (`Simulator`, with `PacingRecord.summary`) and every reader.

`GET /v1/looplab/requests/{id}/timing` answers it as JSON (the keys below, in this order);
`InstrumentedClient` (`fetch_server_timing`) and `bench.loadgen.attach_server_timing` put
that JSON on `ModelResponse.server_timing`, and the benches read it back with
`read_served_timing`, which validates it into the same type. The proxy's timing endpoint
answers a record of its own (`backends/proxy/calls.py`), not this one.

A reply refused before it was paced (429, a fault) has only the request part; a paced one
adds the pacing part; a planned and paced one adds the plan part too.

No `from __future__ import annotations` here: a TypedDict learns which keys are
`NotRequired` from its annotations when the class is made, and strings would hide it.
"""

from collections.abc import Mapping
from typing import Any, NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict  # pydantic reads a TypedDict of this kind on 3.11

from looplab.latency.timing import CallSchedule, Transport

__all__ = [
    "PacingSummary",
    "ServedPlan",
    "ServedTiming",
    "read_served_timing",
    "served_plan",
]


class PacingSummary(TypedDict):
    """How a reply's tokens were released against its schedule (`PacingRecord.summary`).

    Times are seconds after the request was received; `releases` holds one
    `[first slot, end slot, intended s, actual s]` per chunk sent.
    """

    received_s: float
    intended_first_s: float
    intended_last_s: float
    intended_rate_tps: float | None
    slots: int
    released_slots: int
    chunks: int
    achieved_rate_tps: float | None
    first_release_late_s: float | None
    lateness_p50_s: float | None
    lateness_p99_s: float | None
    lateness_max_s: float | None
    releases: list[list[float]]


class ServedPlan(TypedDict):
    """The call-timing plan the reply was served by (`looplab.latency.timing`), with its
    reasoning and decode as the track's final plan left them (the load may change mid-reply)."""

    ttft_s: float
    network_s: float
    overhead_s: float
    transport: Transport
    base_s: float
    pipeline_s: float
    prefill_s: float
    reasoning_s: float
    decode_s: float
    streams_at_start: int
    replans: int


class ServedTiming(TypedDict):
    """One reply's record: the request part always, the pacing and plan parts when the
    reply was paced (`PacingSummary`, `ServedPlan`: the same keys, flattened)."""

    request_id: str
    model: str
    profile: str
    pacer: str
    tokenizer: str
    outcome: str
    received_clock_s: float
    """The simulator's `perf_counter` when the request arrived (CLOCK_MONOTONIC: a client
    on the same machine compares its own times with it directly)."""
    queue_wait_s: float
    prompt_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    visible_tokens: int
    decode_tps: float
    finish_reason: str
    received_s: NotRequired[float]
    intended_first_s: NotRequired[float]
    intended_last_s: NotRequired[float]
    intended_rate_tps: NotRequired[float | None]
    slots: NotRequired[int]
    released_slots: NotRequired[int]
    chunks: NotRequired[int]
    achieved_rate_tps: NotRequired[float | None]
    first_release_late_s: NotRequired[float | None]
    lateness_p50_s: NotRequired[float | None]
    lateness_p99_s: NotRequired[float | None]
    lateness_max_s: NotRequired[float | None]
    releases: NotRequired[list[list[float]]]
    ttft_s: NotRequired[float]
    network_s: NotRequired[float]
    overhead_s: NotRequired[float]
    transport: NotRequired[Transport]
    base_s: NotRequired[float]
    pipeline_s: NotRequired[float]
    prefill_s: NotRequired[float]
    reasoning_s: NotRequired[float]
    decode_s: NotRequired[float]
    streams_at_start: NotRequired[int]
    replans: NotRequired[int]


def served_plan(
    plan: CallSchedule,
    reasoning_s: float,
    decode_s: float,
    *,
    transport: Transport,
    streams: int,
    replans: int,
) -> ServedPlan:
    """The plan part of a record: `plan`'s parts, with the reasoning and decode times the
    track's final plan gave (`TokenTrack.phases`), the streams sharing the server when the
    reply started (background ones included) and how often the track was re-planned."""
    return ServedPlan(
        ttft_s=plan.ttft_s,
        network_s=plan.network_s,
        overhead_s=plan.overhead_s,
        transport=transport,
        base_s=plan.base_s,
        pipeline_s=plan.pipeline_s,
        prefill_s=plan.prefill_s,
        reasoning_s=reasoning_s,
        decode_s=decode_s,
        streams_at_start=streams,
        replans=replans,
    )


_ADAPTER: TypeAdapter[ServedTiming] = TypeAdapter(ServedTiming)


def read_served_timing(record: Mapping[str, Any]) -> ServedTiming:
    """A timing record as the endpoint answered it (JSON), validated into `ServedTiming`.

    Raises:
        pydantic.ValidationError: the record is not a simulator's (a missing request key,
            a value of the wrong type).
    """
    return _ADAPTER.validate_python(dict(record))
