"""One request on its way through the proxy: where its reply comes from, how it arrives.

`checked_body` parses and validates a client's request with serve's own validator (a bad
field is the same 400 from both); `secret_values` lists the credentials a request carries
(scrubbed from recordings); `choose_source` picks the reply's `ReplySource` (a recording's
entry, else the upstream, asked for usage on streamed chat); `read_events` feeds a
streamed upstream's events into the exchange and its `GatedRecord` as they arrive
(README.md has the pacing rules).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from looplab.backends.proxy.calls import CallRecord
from looplab.backends.proxy.events import PROTOCOLS, Item, SseParser, make_item
from looplab.backends.proxy.gate import GatedRecord
from looplab.backends.proxy.rawhttp import UpstreamClient
from looplab.backends.proxy.replies import is_reasoning, json_object
from looplab.backends.proxy.store import Recorder, Recording, exchange_entry, scrub_entry
from looplab.backends.proxy.upstream import (
    MAX_REPLY_TOKENS,
    TRUNCATED,
    HttpUpstream,
    RecordedSource,
    ReplyLimits,
    ReplySource,
    ReplyTooLarge,
)
from looplab.backends.simulator.protocol import ApiError, validate_chat
from looplab.backends.simulator.responses import chat_body
from looplab.clock import Clock
from looplab.latency.timing import CallSchedule
from looplab.latency.tokens import Tokenizer
from looplab.traces.scrub import credential_values, remember_secret
from looplab.urls import join_path

__all__ = [
    "Exchange",
    "checked_body",
    "choose_source",
    "read_events",
    "record_exchange",
    "secret_values",
]


def checked_body(endpoint: str, raw: bytes) -> dict[str, Any]:
    """The request's JSON object, validated exactly as `looplab serve` validates it
    (`validate_chat`; a Responses body through the same translation serve applies).

    Raises:
        ApiError: 400 for bad JSON, a non-object body or an invalid field.
    """
    body = json_object(raw)
    validate_chat(chat_body(body) if endpoint == "responses" else body)
    return body


def secret_values(
    headers: Mapping[str, str], api_key: str | None, upstream: str | None = None
) -> tuple[str, ...]:
    """The credentials in play for one request: the proxy's key, every credential the
    client sent in a header and every credential-named query value of the upstream URL
    (`traces.scrub.credential_values`, the one rule); each is also remembered
    (`remember_secret`), so no trace this process writes can hold it."""
    found = ((api_key,) if api_key else ()) + credential_values(headers, upstream)
    secrets = tuple(v for v in found if len(v) >= 8)  # shorter: placeholders like EMPTY
    for value in secrets:
        remember_secret(value)
    return secrets


@dataclass
class Exchange:
    """One request on its way through the proxy."""

    endpoint: str
    body: dict[str, Any]
    call: CallRecord
    plan: CallSchedule
    items: list[Item] = field(default_factory=list)
    record: GatedRecord | None = None
    secrets: tuple[str, ...] = ()
    """Credential values of this request (`secret_values`), scrubbed from its recording."""
    cut: str | None = None
    """Why a streamed reply stopped before its end (`read_events`); None: it ended."""
    max_slots: int = MAX_REPLY_TOKENS
    """Most token slots its stream may bring (`ReplyLimits.max_tokens`)."""


def choose_source(
    endpoint: str,
    body: dict[str, Any],
    call: CallRecord,
    headers: Mapping[str, str],
    *,
    recording: Recording | None,
    upstream: str | None,
    http: Callable[[], UpstreamClient],
    api_key: str | None,
    limits: ReplyLimits | None = None,
) -> ReplySource:
    """The reply's source: the recording's entry for the request, else the upstream.

    Sets `call.source` (`replay` or `upstream`) and, when the request departs from the
    recording, `call.divergence`. `http` is called only when the upstream is asked. Needs
    no schedule: the proxy asks the upstream before it plans one.

    Raises:
        ApiError: 400 `replay_miss` (not recorded, no upstream); 500 (neither configured).
    """
    if recording is not None:
        recorded, divergence = recording.lookup(endpoint, body)
        if divergence is not None:
            call.divergence = divergence.as_dict()
        if recorded is not None:
            call.source = "replay"
            return RecordedSource(
                int(recorded.get("status", 200)),
                list(recorded.get("events") or []),
                json.dumps(recorded.get("body")).encode() if "body" in recorded else b"",
            )
        if upstream is None:
            raise ApiError(
                400,
                "replay: this request is not in the recording "
                f"({recording.directory}), and the proxy has no upstream to ask. "
                f"Divergence: {divergence.describe() if divergence else 'none'}",
                code="replay_miss",
            )
    if upstream is None:
        raise ApiError(500, "the proxy has neither an upstream nor a recording")
    upstream_body = dict(body)
    if body.get("stream") and endpoint == "chat":
        upstream_body["stream_options"] = {
            **(body.get("stream_options") or {}),
            "include_usage": True,
        }
    call.source = "upstream"
    return HttpUpstream(
        http(),
        join_path(upstream, PROTOCOLS[endpoint].path),
        json.dumps(upstream_body).encode(),
        headers,
        api_key,
        limits or ReplyLimits(),
    )


async def read_events(
    exchange: Exchange, source: ReplySource, record: GatedRecord, tokenizer: Tokenizer, clock: Clock
) -> None:
    """Feed the upstream's events into the exchange as they arrive.

    Each event becomes an `Item` (tokens counted by `tokenizer`); its tokens arrive in
    `record`, the upstream's usage settles the slot count. A broken upstream stream (a
    reset, a timeout, the total deadline or the size cap passed: `ReplyLimits`) is
    noted in `call.error` (what came is still released), as is a stream that closed
    before its end (`TRUNCATED`: no `[DONE]`, finish_reason or terminal event, or cut
    mid-event: the partial event is not released); `record` is always finished.
    """
    protocol = PROTOCOLS[exchange.endpoint]
    parser = SseParser()
    call = exchange.call
    streamed_reasoning = False
    ended = False
    try:
        async for line, arrived in source.lines():
            event = parser.feed(line)
            if event is None:
                continue
            item = make_item(protocol, event[0], event[1], event[2], tokenizer)
            ended = ended or protocol.ends(event[0], event[1], item.data)
            item.first_slot = len(record.arrivals)
            if item.first_slot + item.slots > exchange.max_slots:
                raise ReplyTooLarge(
                    f"the upstream's stream passed {exchange.max_slots} token slots "
                    "(ReplyLimits.max_tokens)"
                )
            item.arrived = arrived
            exchange.items.append(item)
            if item.slots:
                if call.upstream_first_token is None:
                    call.upstream_first_token = arrived
                call.upstream_last_token = arrived
                streamed_reasoning |= is_reasoning(item)
                if record.arrive(item.tokens, arrived):
                    # the pacer waited for these (the upstream is the slower): let it release
                    # them before the rest of a buffered burst is parsed (1.2 ms at 20x)
                    await asyncio.sleep(0)
            usage = protocol.usage(item.data) if item.data is not None else None
            if usage is not None:
                call.usage = usage
                hidden = 0 if streamed_reasoning else (usage.reasoning or 0)
                record.settle((usage.completion or 0) - hidden)
        if exchange.items and not ended:
            cut = "mid-event (the partial event is dropped)" if parser.pending() else "cleanly"
            call.error = exchange.cut = (
                f"{TRUNCATED}: the upstream closed the stream {cut} after "
                f"{len(exchange.items)} event(s), before its end (no [DONE], finish_reason "
                "or terminal event)"
            )
    except Exception as exc:  # a broken upstream stream: what came is still released
        call.error = f"upstream stream failed: {type(exc).__name__}: {exc}"[:500]
        exchange.cut = call.error
    finally:
        call.upstream_end = clock.now()
        record.finish()


def record_exchange(
    recorder: Recorder | None,
    exchange: Exchange,
    source: ReplySource,
    body: dict[str, Any] | None = None,
) -> None:
    """Store `exchange` (scrubbed) when recording; upstream replies only. `body`: the
    whole reply of a non-streamed or error exchange (else its streamed items are kept)."""
    if recorder is not None and exchange.call.source == "upstream":
        items = None if body is not None else exchange.items
        entry = exchange_entry(
            exchange.endpoint,
            exchange.body,
            exchange.call,
            source.sent,
            items=items,
            reply=body,
            cut=exchange.cut,
        )
        recorder.add(scrub_entry(entry, exchange.secrets))
