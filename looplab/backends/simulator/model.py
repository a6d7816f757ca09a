"""The simulated model: validates a request, plans its reply and timeline, paces it out.

HTTP-free: `looplab.backends.simulator.server` wraps it in Starlette. One `Simulator` per server;
it must be used from one event loop.

Request lifecycle:
1. `prepare(body, arrived)`: parse and validate (400/404 `ApiError`s), count prompt
   tokens, look up the prefix cache, ask the policy for the reply, apply token limits,
   429 at once if the queue is full. Zero point: `arrived` (`guard.arrival`), or now.
2. `stream(prepared)` / `complete(prepared)`: wait for a concurrency slot (the queue wait
   counts toward TTFT, as on a real server), compute the schedule from the request's
   arrival (or, if it queued, from the moment it got a slot), release tokens with the
   pacer, and record intended vs actual times.
   Cancelling either (a client that disconnects) frees the slot at once.
"""

from __future__ import annotations

import random
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import structlog

from looplab.backends.policies import MODEL_PREFIX, POLICIES, ModelPolicy, PolicyContext
from looplab.backends.simulator.admission import Admission, QueueFull
from looplab.backends.simulator.completion import (
    PreparedCompletion,
    chunks_for,
    completion_cap,
    completion_object,
    conversation_seed,
    visible_slots,
)
from looplab.backends.simulator.lateness import LatenessWatch
from looplab.backends.simulator.pacing import (
    NaivePacer,
    Pacer,
    PacingRecord,
    Release,
    SchedulePacer,
)
from looplab.backends.simulator.prefix_cache import PrefixCache, prefix_hashes
from looplab.backends.simulator.protocol import ApiError, ChatRequest, parse_request
from looplab.backends.simulator.record import ServedTiming, served_plan
from looplab.backends.simulator.sse import DONE, ChunkWriter
from looplab.clock import Clock, WallClock, utc_now
from looplab.distributions import rate_factor
from looplab.latency.profile import LatencyProfile
from looplab.latency.timing import CallTokens, TimingModel, Transport
from looplab.latency.token_track import ServedPhases
from looplab.latency.tokens import REPLY_PRIMING_TOKENS, Tokenizer, default_tokenizer

__all__ = ["PreparedCompletion", "Simulator"]

_TIMING_HISTORY = 10_000

log = structlog.get_logger(__name__)


class Simulator:
    """An OpenAI-compatible model stand-in paced by a `LatencyProfile`.

    Args:
        profile: the latency shape.
        clock: `WallClock` (really waits) or `VirtualClock` (instant).
        pacer: `"schedule"` (default, exact) or `"naive"` (per-token sleep baseline).
        tokenizer: prompt token counter; defaults to `default_tokenizer()`.
        fallback: the `POLICIES` key answering unknown model names (None: 404, as an API).
    """

    def __init__(
        self,
        profile: LatencyProfile,
        *,
        clock: Clock | None = None,
        pacer: str = "schedule",
        tokenizer: Tokenizer | None = None,
        fallback: str | None = None,
    ) -> None:
        self.profile = profile
        self.timing = TimingModel.from_profile(profile)
        self.clock: Clock = clock or WallClock()
        self.pacer: Pacer = (
            NaivePacer()
            if pacer == "naive"
            else SchedulePacer(lambda: profile.frame_floor_for(self.admission.active))
        )
        self.tokenizer = tokenizer or default_tokenizer()
        self.policies: dict[str, ModelPolicy] = {
            MODEL_PREFIX + name: factory() for name, factory in POLICIES.items()
        }
        self.fallback = None if fallback is None else MODEL_PREFIX + fallback
        self.answered_by: dict[str, str] = {}
        self.cache = PrefixCache(
            profile.prefix_cache_ttl_s,
            profile.prefix_cache_block_tokens,
            profile.prefix_cache_min_tokens,
        )
        self.admission = Admission(profile.max_concurrency, profile.max_queue)
        self.completed = 0
        self.lateness = LatenessWatch()  # releases behind schedule: counted, logged per burst
        self._in_flight: set[PacingRecord] = set()
        # per repetition too: each repetition's server has its own profile seed
        self._fault_rng = random.Random(f"{profile.faults.seed}:{profile.seed}")
        self.timings: OrderedDict[str, ServedTiming] = OrderedDict()
        self.phases: OrderedDict[str, ServedPhases] = OrderedDict()
        """Each finished call's served phases by request id (typed; re-timing reads these)."""

    def prepare(
        self, body: bytes, transport: Transport = "http", arrived: float | None = None
    ) -> PreparedCompletion:
        """Validate and plan a request (see the module docstring), timed from `arrived` or
        now; `transport` (`http`, `websocket`) sets its per-call overhead.

        Raises:
            ApiError: 400 (bad JSON, bad field, n>1, limits, context), 404 (model), 429.
        """
        received = self.clock.now() if arrived is None or self.clock.virtual else arrived
        request = parse_request(body)
        policy = self._policy(request)
        messages = [m.model_dump(exclude_none=True) for m in request.messages]
        tools = [t.model_dump(exclude_none=True) for t in request.tools or []]
        cumulative = self.tokenizer.count_messages(messages, tools, self.profile.vision_tokens)
        prompt_tokens = cumulative[-1] + REPLY_PRIMING_TOKENS
        limit = completion_cap(self.profile, request, prompt_tokens)
        cached = 0
        if self.profile.prefix_cache:
            cached = self.cache.lookup_and_store(
                prefix_hashes(messages, tools), cumulative, received
            )
        self._admit()
        self._maybe_inject_error()
        rng = random.Random(conversation_seed(self.profile.seed, request.model, messages, tools))
        reply = policy.reply(request, PolicyContext(self.profile, rng, self.tokenizer))
        if reply.cached_tokens is not None:
            cached = reply.cached_tokens
        reasoning = reply.reasoning_tokens
        if reasoning is None:
            reasoning = max(0, round(self.profile.reasoning_tokens.sample(rng)))
        reasoning = min(reasoning, limit)
        slots = list(visible_slots(reply))
        finish = "tool_calls" if reply.tool_calls else "stop"
        if reasoning + len(slots) > limit:
            slots = slots[: limit - reasoning]
            finish = "length"
        faults = self.profile.faults
        drop_after: int | None = None
        if faults.drop_stream_rate and self._fault_rng.random() < faults.drop_stream_rate:
            drop_after = self._fault_rng.randint(0, max(0, len(slots) - 1))
        factor = rate_factor(self.profile.decode_jitter, rng)
        request_id = secrets.token_hex(12)
        return PreparedCompletion(
            request_id=request_id,
            completion_id=f"chatcmpl-{request_id}",
            created=int(utc_now().timestamp()),
            request=request,
            reply=reply,
            received=received,
            prompt_tokens=prompt_tokens,
            cached_tokens=min(cached, prompt_tokens),
            reasoning_tokens=reasoning,
            visible_slots=slots,
            finish_reason=finish,
            decode_factor=factor,
            ttft_extra_s=self.profile.ttft_jitter_s.sample(rng),
            drop_after=drop_after,
            transport=transport,
        )

    def _policy(self, request: ChatRequest) -> ModelPolicy:
        """The policy serving `request.model`.

        Raises:
            ApiError: 404 (no such model), 400 (n other than 1).
        """
        served = request.model if request.model in self.policies else self.fallback
        policy = self.policies.get(served or "")
        if policy is None:
            raise ApiError(
                404,
                f"The model `{request.model}` does not exist or you do not have access to it. "
                f"This simulator serves: {', '.join(sorted(self.policies))}.",
                param="model",
                code="model_not_found",
            )
        self.answered_by.setdefault(request.model, str(served))  # which policy answered it
        if request.n != 1:
            raise ApiError(
                400,
                f"n={request.n} is not supported: the looplab simulator returns exactly one "
                "choice per request; send n=1 (or omit it) and make separate requests.",
                param="n",
                code="unsupported_value",
            )
        return policy

    def _admit(self) -> None:
        """Take a place in the concurrency limit or the queue.

        Raises:
            ApiError: 429 with `retry-after` when both are full.
        """
        try:
            self.admission.check()
        except QueueFull as full:
            raise ApiError(
                429,
                "The simulator's concurrency limit and queue are full "
                f"({self.profile.max_concurrency} running, {self.profile.max_queue} queued). "
                f"Retry after {full.retry_after_s} s.",
                type="requests",
                code="rate_limit_exceeded",
                headers={"retry-after": str(full.retry_after_s)},
            ) from None

    def _maybe_inject_error(self) -> None:
        faults = self.profile.faults
        if not faults.error_rate or self._fault_rng.random() >= faults.error_rate:
            return
        status = faults.error_status
        raise ApiError(
            status,
            f"Injected fault: HTTP {status} (profile faults.error_rate={faults.error_rate}).",
            type="requests" if status == 429 else "server_error",
            code="rate_limit_exceeded" if status == 429 else "injected_fault",
            headers={"retry-after": "1"} if status == 429 else None,
        )

    # -- execution ---------------------------------------------------------------------

    async def stream(self, prepared: PreparedCompletion) -> AsyncIterator[bytes]:
        """Yield the SSE body of `prepared`, paced; frees its slot even when cancelled."""
        include_usage = bool(
            prepared.request.stream_options and prepared.request.stream_options.include_usage
        )
        writer = ChunkWriter(
            prepared.completion_id, prepared.created, prepared.request.model, include_usage
        )
        async for release in self._run(prepared):
            if prepared.drop_after is not None and release.stop > prepared.drop_after:
                yield b"".join(
                    chunks_for(Release(release.start, prepared.drop_after, 0), prepared, writer)
                )
                return  # injected fault: the stream ends without finish_reason or [DONE]
            parts = list(chunks_for(release, prepared, writer))
            if release.stop == len(prepared.visible_slots):
                parts.append(writer.finish(prepared.finish_reason))
                if include_usage:
                    parts.append(writer.usage(prepared.usage()))
                parts.append(DONE)
            yield b"".join(parts)

    async def complete(self, prepared: PreparedCompletion) -> dict[str, Any]:
        """Wait the same total time a stream would take and return the whole completion."""
        async for _ in self._run(prepared):
            pass
        return completion_object(prepared)

    def paced(self, prepared: PreparedCompletion) -> AsyncIterator[Release]:
        """The paced releases of `prepared` (for other wire formats: the Responses API)."""
        return self._run(prepared)

    async def _run(self, prepared: PreparedCompletion) -> AsyncIterator[Release]:
        waited = await self.admission.acquire()
        # The schedule starts at the request's own arrival, or when a queued one got a slot.
        granted = self.clock.now() if waited else prepared.received
        record: PacingRecord | None = None
        outcome = "cancelled"
        try:
            self._load_changed(granted)
            record = self._schedule(prepared, granted)
            self._in_flight.add(record)
            if not prepared.visible_slots:
                # Reasoning used the whole budget: one empty release at the last token.
                await record.sleep_until(
                    self.clock, record.track.time_of(prepared.reasoning_tokens - 1)
                )
                release = Release(0, 0, self.clock.now())
                record.releases.append(release)
                yield release
            else:
                async for release in self.pacer.release(record, self.clock):
                    self.lateness.observe(record, release, self.clock, self.admission.active)
                    yield release
            outcome = "completed"
            self.completed += 1
        finally:
            if record is not None:
                self._in_flight.discard(record)
            self.admission.release(self.clock.now() - granted)
            self._load_changed(self.clock.now())
            self._remember(prepared, granted, record, outcome)

    def _load_changed(self, now: float) -> None:
        """Streams joined or left: in-flight replies go on at the new per-token time."""
        if not self.timing.load_dependent:
            return
        for record in self._in_flight:
            record.replan(now, self.admission.active)

    def _schedule(self, prepared: PreparedCompletion, granted: float) -> PacingRecord:
        """The request's intended schedule (`looplab.latency.timing`), from its slot."""
        tokens = CallTokens(
            prompt=prepared.prompt_tokens,
            cached=prepared.cached_tokens,
            reasoning=prepared.reasoning_tokens,
            output=len(prepared.visible_slots),
        )
        plan = self.timing.plan(
            tokens,
            streams=max(1, self.admission.active),
            ttft_extra_s=prepared.ttft_extra_s,
            decode_factor=prepared.decode_factor,
            queue_s=granted - prepared.received,
            transport=prepared.transport,
        )
        prepared.plan = plan
        return PacingRecord(
            received=prepared.received,
            track=plan.track(prepared.received),
            slots=len(prepared.visible_slots),
            offset=prepared.reasoning_tokens,
        )

    def _remember(
        self,
        prepared: PreparedCompletion,
        granted: float,
        record: PacingRecord | None,
        outcome: str,
    ) -> None:
        timing: ServedTiming = {
            "request_id": prepared.request_id,
            "model": prepared.request.model,
            "profile": self.profile.name,
            "pacer": self.pacer.name,
            "tokenizer": self.tokenizer.name,
            "outcome": outcome,
            "received_clock_s": prepared.received,
            "queue_wait_s": granted - prepared.received,
            "prompt_tokens": prepared.prompt_tokens,
            "cached_tokens": prepared.cached_tokens,
            "reasoning_tokens": prepared.reasoning_tokens,
            "visible_tokens": len(prepared.visible_slots),
            "decode_tps": self.profile.decode_tps * prepared.decode_factor,
            "finish_reason": prepared.finish_reason,
        }
        if record is not None:
            timing = {**timing, **record.summary()}
        if prepared.plan is not None and record is not None:
            plan = prepared.plan
            # the track's final plan: the load may have changed while the reply streamed
            reasoning_s, decode_s = record.track.phases(plan.tokens.reasoning, plan.tokens.output)
            self.phases[prepared.request_id] = ServedPhases(plan.ttft_s, reasoning_s, decode_s)
            timing = {
                **timing,
                **served_plan(
                    plan,
                    reasoning_s,
                    decode_s,
                    transport=prepared.transport,
                    streams=plan.streams + self.timing.background_streams,
                    replans=record.version,
                ),
            }
        self.timings[prepared.request_id] = timing
        log.debug(
            "simulator.request",
            request_id=prepared.request_id,
            outcome=outcome,
            prompt_tokens=prepared.prompt_tokens,
            cached_tokens=prepared.cached_tokens,
            completion_tokens=prepared.completion_tokens,
            queue_wait_s=timing["queue_wait_s"],
        )
        while len(self.timings) > _TIMING_HISTORY:
            self.timings.popitem(last=False)
        while len(self.phases) > _TIMING_HISTORY:
            self.phases.popitem(last=False)

    def health(self) -> dict[str, Any]:
        """Liveness, load (active, queued, completed), releases behind schedule (`lateness`)."""
        return {
            "status": "ok",
            "profile": self.profile.name,
            "decode_tps": self.profile.decode_tps,
            "pacer": self.pacer.name,
            "tokenizer": self.tokenizer.name,
            "clock": "virtual" if self.clock.virtual else "wall",
            "active": self.admission.active,
            "streams": self.admission.active + self.profile.background_streams,
            "queued": self.admission.queued,
            "completed": self.completed,
            **self.lateness.health(),
        }
