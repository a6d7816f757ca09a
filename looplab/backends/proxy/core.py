"""The pacing proxy, HTTP-free: one exchange in, a re-timed reply out (README.md has more).

`Proxy.handle(endpoint, body, headers)` takes a client's request (`chat` or `responses`),
gets the reply from a `ReplySource` (the upstream, or a recording) and returns a `ClientReply` whose
tokens go out on the profile's schedule (`schedule.plan_request`, paced by `GatedRecord`
on the simulator's `SchedulePacer`). Streaming: headers go out with the first token
(`x-looplab-upstream-slower: ttft` if the upstream's first token was later than the
profile's), an SSE comment before the end says `upstream-slower decode` when later tokens
were. Non-streaming: the body is held to the profile's whole-call time. OpenAI-shaped
errors pass through with the upstream's status; upstream faults are 502/504 (upstream.py).
Hidden reasoning: known up front in replays and non-streamed replies (decoded at the
profile's rate); a live stream learns it only at its end, so there it takes the upstream's.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any

import httpx2

from looplab.backends.proxy.calls import CallLog, CallRecord, assemble_message, reply_headers
from looplab.backends.proxy.events import Usage
from looplab.backends.proxy.exchange import (
    Exchange,
    checked_body,
    choose_source,
    read_events,
    record_exchange,
    secret_values,
)
from looplab.backends.proxy.gate import UNKNOWN_SLOTS, GatedRecord
from looplab.backends.proxy.redact import body_secrets
from looplab.backends.proxy.replies import (
    ClientReply,
    Cursor,
    body_message,
    prepend,
    streams_reasoning,
    usage_of_body,
    usage_of_events,
)
from looplab.backends.proxy.schedule import plan_request, replan
from looplab.backends.proxy.store import Recorder, Recording
from looplab.backends.proxy.upstream import (
    MAX_REPLY_BYTES,
    UPSTREAM_DEADLINE_S,
    RecordedSource,
    ReplyLimits,
    ReplySource,
    UpstreamClients,
    check_reply_status,
    check_stream,
    error_body,
    stream_fault,
    upstream_json,
)
from looplab.backends.simulator.pacing import SchedulePacer
from looplab.backends.simulator.prefix_cache import PrefixCache
from looplab.backends.simulator.protocol import ApiError
from looplab.clock import WallClock, utc_now
from looplab.errors import ConfigError
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import CallSchedule, TimingModel, Transport
from looplab.latency.tokens import Tokenizer, default_tokenizer
from looplab.traces.scrub import remember_secret
from looplab.urls import url_problem

__all__ = ["ClientReply", "Proxy"]


class Proxy:
    """The pacing proxy (see the module docstring).

    Args:
        profile: the latency profile to pace to.
        upstream: the upstream's API root (`https://api.openai.com/v1`); None: replay only.
        record: a directory to record every exchange into.
        replay: a recording's directory or opened `Recording` (unrecorded requests: `upstream`).
        replay_policy: how replayed requests are paired with recorded steps
            (`follow.REPLAY_POLICIES`: `strict`, `tolerant`); an opened `Recording` has its own.
        api_key: a key for the upstream, replacing the client's (never logged or stored).
        upstream_timeout_s: longest wait for any one upstream read (then a 504).
        upstream_deadline_s: longest a request may take upstream in all, its reply's last
            byte included (then a 504; `upstream.UPSTREAM_DEADLINE_S` by default).
        max_reply_bytes: largest upstream reply taken (then a 502
            `upstream_reply_too_large`; `upstream.MAX_REPLY_BYTES` by default).
        tokenizer: prompt and reply token counter (default: the simulator's).

    Raises:
        ConfigError: `upstream` is not an http(s) API root, or holds credentials
            (`looplab.urls.url_problem`); `replay` is not a recording; an unknown
            `replay_policy`.
    """

    def __init__(
        self,
        profile: LatencyProfile,
        *,
        upstream: str | None = None,
        record: Path | None = None,
        replay: Path | Recording | None = None,
        replay_policy: str = "strict",
        api_key: str | None = None,
        tokenizer: Tokenizer | None = None,
        upstream_timeout_s: float = 600.0,
        upstream_deadline_s: float = UPSTREAM_DEADLINE_S,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        problem = url_problem(upstream) if upstream else None
        if problem:
            raise ConfigError(problem, field="upstream")
        if api_key:
            remember_secret(api_key)
        self.profile = profile
        self.timing = TimingModel.from_profile(profile)
        self.clock = WallClock()
        self.upstream = upstream.rstrip("/") if upstream else None
        self.recording = Recording(replay, replay_policy) if isinstance(replay, Path) else replay
        self.recorder = Recorder(record) if record is not None else None
        self._api_key = api_key
        self.tokenizer = tokenizer or default_tokenizer()
        self.cache = PrefixCache(
            profile.prefix_cache_ttl_s,
            profile.prefix_cache_block_tokens,
            profile.prefix_cache_min_tokens,
        )
        self.active = 0
        self._in_flight: set[GatedRecord] = set()
        self.pacer = SchedulePacer(lambda: profile.frame_floor_for(self.active))
        self.history = CallLog()
        limits = ReplyLimits(
            upstream_deadline_s, max_reply_bytes, read_timeout_s=upstream_timeout_s
        )
        self.clients = UpstreamClients(self.upstream, upstream_timeout_s, limits)

    def warm_up(self) -> None:
        """Do the first request's one-time work now (the upstream connection pool, the
        tokenizer's first count), so it is not inside the first request's TTFT."""
        if self.upstream is not None:
            self.clients.for_replies()
        self.tokenizer.count_messages([{"role": "user", "content": "warm up"}], [])

    async def aclose(self) -> None:
        """Close the upstream connections; give up the recording's writer lock."""
        await self.clients.aclose()
        if self.recorder is not None:
            self.recorder.close()

    # -- entry ---------------------------------------------------------------------------

    async def handle(
        self,
        endpoint: str,
        raw: bytes,
        headers: Mapping[str, str],
        transport: Transport = "http",
        arrived: float | None = None,
    ) -> ClientReply:
        """Answer one request to `endpoint` (`chat` or `responses`) that came by
        `transport` (`http`; `websocket`: a turn on the Responses WebSocket), timed from
        `arrived` (the server's read of its last byte, on a wall clock) or now."""
        received = self.clock.now() if arrived is None else arrived
        call = CallRecord(
            request_id=secrets.token_hex(12),
            endpoint=endpoint,
            stream=False,
            model=None,
            received=received,
            received_wall=utc_now(),
            source="none",
            transport=transport,
        )
        source: ReplySource | None = None
        try:
            body = checked_body(endpoint, raw)
            call.model = str(body.get("model")) if body.get("model") is not None else None
            call.stream = bool(body.get("stream"))
            found = secret_values(headers, self._api_key, self.upstream)
            source = self._source(endpoint, body, call, headers)
            # ask the upstream first: counting the prompt for the profile's schedule (which
            # starts at `received` whenever it is computed) then overlaps the upstream's work
            await source.open()
            check_reply_status(source)
            exchange = Exchange(
                endpoint, body, call, self._plan(endpoint, body, received, transport)
            )
            exchange.secrets = found + body_secrets(body)
            exchange.max_slots = self.clients.limits.max_tokens
            call.status = source.status
            if source.status >= 300:
                return await self._error(exchange, source)
            if call.stream:
                await check_stream(source)
                return await self._stream(exchange, source)
            return await self._complete(exchange, source)
        except ApiError as error:  # the client's mistake, or the upstream's fault (502/504)
            if source is not None:
                await source.close()
            call.status, call.error, call.end = error.status, error.message, self.clock.now()
            self.history.add(call)
            headers = {**error.headers, **reply_headers(call, self.profile.name)}
            return ClientReply(error.status, headers, json.dumps(error.body()).encode())

    def _source(
        self, endpoint: str, body: dict[str, Any], call: CallRecord, headers: Mapping[str, str]
    ) -> ReplySource:
        return choose_source(
            endpoint,
            body,
            call,
            headers,
            recording=self.recording,
            upstream=self.upstream,
            http=self.clients.for_replies,
            api_key=self._api_key,
            limits=self.clients.limits,
        )

    def http_client(self) -> httpx2.AsyncClient:
        """The upstream's httpx pool (`UpstreamClients.http`), for what is not a reply."""
        return self.clients.http()

    # -- the profile's schedule -----------------------------------------------------------

    def _plan(
        self, endpoint: str, body: dict[str, Any], received: float, transport: Transport
    ) -> CallSchedule:
        return plan_request(
            self.timing,
            self.profile,
            self.tokenizer,
            self.cache,
            endpoint,
            body,
            received=received,
            streams=max(1, self.active + 1),
            transport=transport,
        )

    # -- replies -------------------------------------------------------------------------

    async def _error(self, exchange: Exchange, source: ReplySource) -> ClientReply:
        call = exchange.call
        try:
            raw = await source.body()
        finally:
            await source.close()
        body = error_body(source.status, raw)
        call.error = str(body["error"].get("message"))[:500]
        call.end = self.clock.now()
        self.history.add(call)
        record_exchange(self.recorder, exchange, source, body)
        headers = {**source.headers, **reply_headers(call, self.profile.name)}
        return ClientReply(source.status, headers, json.dumps(body).encode())

    async def _complete(self, exchange: Exchange, source: ReplySource) -> ClientReply:
        """Non-streaming: hold the body until the profile's whole-call time."""
        call = exchange.call
        self.active += 1
        try:
            try:
                raw = await source.body()
            finally:
                await source.close()
            arrived = self.clock.now()
            call.upstream_end = arrived
            body = upstream_json(source, raw)
            call.usage = usage_of_body(exchange.endpoint, body)
            call.message, call.finish_reason = body_message(exchange.endpoint, body)
            plan = replan(self.timing, exchange.plan, call.usage)
            due = call.received + plan.total_s
            call.scheduled_first_s, call.scheduled_last_s = plan.first_visible_s, plan.total_s
            if arrived > due + 1e-3:
                call.upstream_slower = ["ttft", "decode"]
            await self.clock.sleep_until(due)
            call.end = self.clock.now()
            # not streamed: the tokens' times are the schedule's (or the upstream's, later)
            call.first_token = max(call.received + plan.first_visible_s, min(arrived, due))
            call.last_token = max(due, arrived)
        finally:
            self.active -= 1
        self.history.add(call)
        record_exchange(self.recorder, exchange, source, body)
        headers = {
            **source.headers,
            **reply_headers(call, self.profile.name),
            "content-type": "application/json",
        }
        return ClientReply(call.status, headers, raw)

    async def _stream(self, exchange: Exchange, source: ReplySource) -> ClientReply:
        """Streaming: headers at once (the upstream's are in), then slots paced as they come."""
        call = exchange.call
        hidden = 0
        if isinstance(source, RecordedSource):
            # a recording knows its hidden reasoning tokens up front
            recorded = usage_of_events(exchange.endpoint, source.events)
            hidden = recorded.reasoning or 0 if not streams_reasoning(source.events) else 0
        unknown = Usage(completion=hidden + UNKNOWN_SLOTS, reasoning=hidden)
        plan = replan(self.timing, exchange.plan, unknown)
        record = GatedRecord(
            received=call.received,
            track=plan.track(call.received),
            slots=UNKNOWN_SLOTS,
            offset=hidden,
        )
        exchange.record = record
        call.scheduled_first_s = record.track.time_of(hidden) - call.received
        self.active += 1
        self._load_changed(call.received)
        self._in_flight.add(record)
        reader = asyncio.ensure_future(
            read_events(exchange, source, record, self.tokenizer, self.clock)
        )
        body = self._release(exchange, source, record, reader)
        await body.__anext__()  # enter the generator, so closing it always cleans up
        # Headers go out now, as a real server sends them when it accepts the request: a
        # client does its own per-response work (the stock openai client: tens of ms in a
        # fresh process) while it waits for the first token, not after it.
        headers = {
            **source.headers,
            **reply_headers(call, self.profile.name),
            "cache-control": "no-cache",
            "content-type": "text/event-stream; charset=utf-8",
        }
        return ClientReply(call.status, headers, stream=prepend(b"", body))

    async def _release(
        self,
        exchange: Exchange,
        source: ReplySource,
        record: GatedRecord,
        reader: asyncio.Future[None],
    ) -> AsyncGenerator[bytes, None]:
        """The paced body: released slots with the passthrough events between them."""
        call = exchange.call
        wants_usage = exchange.endpoint != "chat" or bool(
            (exchange.body.get("stream_options") or {}).get("include_usage")
        )
        cursor = Cursor(exchange.items, wants_usage)
        done = False
        try:
            yield b""  # primed by `_stream` (never sent: `prepend` skips it)
            async for release in self.pacer.release(record, self.clock):
                chunk = cursor.upto(release.stop, len(record.arrivals))
                if call.first_token is None:
                    call.first_token = release.actual
                    record.released_first(release.actual)
                    if record.anchored_s > 1e-3:
                        call.upstream_slower.append("ttft")
                        held = f"{record.anchored_s:.4f}"
                        chunk = f": looplab upstream-slower ttft late_s={held}\n\n".encode() + chunk
                call.last_token = release.actual
                yield chunk
            await reader
            if not record.releases:  # no token at all: not before the profile's TTFT
                await self.clock.sleep_until(record.track.time_of(record.offset))
            late = record.late_slots() - (1 if record.anchored_s > 1e-3 else 0)
            tail = cursor.upto(len(record.arrivals), len(record.arrivals), final=True)
            if late > 0:
                call.upstream_slower.append("decode")
                tail = f": looplab upstream-slower decode late_slots={late}\n\n".encode() + tail
            tail += stream_fault(call, exchange.items, source)  # an SSE error event, or b""
            call.end = self.clock.now()
            done = True
            self._close_stream(exchange, source, record)  # recorded before the client's [DONE]
            yield tail
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            await source.close()
            if not done:
                call.end = self.clock.now()
                call.error = call.error or "the client disconnected"
                self._close_stream(exchange, source, record)

    def _close_stream(self, exchange: Exchange, source: ReplySource, record: GatedRecord) -> None:
        call = exchange.call
        self.active -= 1
        self._in_flight.discard(record)
        self._load_changed(self.clock.now())
        call.message, call.finish_reason = assemble_message(exchange.endpoint, exchange.items)
        call.pacing = record.gate_summary()
        if record.arrivals:
            call.scheduled_last_s = record.scheduled(len(record.arrivals) - 1) - call.received
        self.history.add(call)
        record_exchange(self.recorder, exchange, source, None)

    def _load_changed(self, now: float) -> None:
        """Streams joined or left: in-flight replies go on at the new per-token time (a
        load-dependent profile), as in the simulator."""
        if not self.timing.load_dependent:
            return
        for record in self._in_flight:
            record.replan(now, self.active)
