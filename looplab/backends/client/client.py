"""The instrumented client: one streamed chat completion, assembled and timed.

A thin wrapper over `openai.AsyncOpenAI`; the same code talks to the simulator and to any
OpenAI-compatible API. Metric definitions (background.md):

- TTFT: request sent -> first streamed token of any kind (reasoning, text or tool-call
  arguments/header); a role-only chunk is not a token.
- decode time: first -> last token; decode rate: (output tokens - 1) / decode time.
- model time: request sent -> stream end.
- Latency is measured from the *scheduled* send time when the caller passes one; the gap
  between scheduled and sent is reported apart as client-side queueing.

Chunks are read as raw SSE lines from the openai client's streaming response and decoded
with `json.loads`, not turned into openai's pydantic chunk objects: that construction
measured 70-190 us per chunk here, enough at 64 streams x 750 tok/s to saturate a core and
delay the very token arrivals being timed. The request itself (URL, headers, auth,
retries, errors) is the openai client's own.

API keys are read from the environment variable named in the config, at client
construction only; they are never stored on the config, logged, or put in a record.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import httpx2
import openai
from pydantic import Field

from looplab.backends.client.assembly import CallTiming, ModelResponse, StreamAssembler, ToolReady
from looplab.backends.client.websocket import ResponsesSocket
from looplab.config import StrictModel
from looplab.errors import BackendError, ConfigError
from looplab.latency.timing import Transport
from looplab.traces.scrub import remember_secret

__all__ = [
    "CallTiming",
    "EndpointConfig",
    "InstrumentedClient",
    "ModelResponse",
    "StreamAssembler",
    "ToolReady",
]


class EndpointConfig(StrictModel):
    """Where and how to reach an OpenAI-compatible backend."""

    base_url: str
    """API root including `/v1`, e.g. `http://127.0.0.1:8750/v1`."""
    model: str
    """Model id sent with every request."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key; None for keyless servers."""
    timeout_s: float = Field(default=600.0, gt=0)
    """Whole-request timeout."""
    max_retries: int = Field(default=0, ge=0)
    """Retries inside the openai client; 0 so every attempt is visible to the caller."""
    fetch_server_timing: bool = False
    """After each call, ask a looplab simulator for its intended/actual release times.

    Costs one more HTTP request per call, made after the stream ends but before
    `complete()` returns, so it lands in the caller's step time: for benchmarks and
    fidelity checks, not for agent runs (the experiment runner reads the in-process
    simulator's records directly). HTTP only (a WebSocket turn has no request id to ask by)."""
    transport: Transport = "http"
    """`http`: each call a streamed chat completion; `websocket`: each call a turn on one
    persistent Responses WebSocket of the client (`looplab.backends.client.websocket`),
    sending only the new input items when the conversation extends the previous turn's."""


class InstrumentedClient:
    """Streams chat completions through `openai.AsyncOpenAI` and times them; with
    `endpoint.transport: websocket` every call is a turn on one Responses WebSocket.

    Args:
        endpoint: where to send requests.
        http_client: optional `httpx2.AsyncClient` (the HTTP library of openai>=3), e.g.
            with the simulator's in-process transport; injected, never patched. A request
            hook is added to it to time the moment each request is handed to the transport.
        observer: called with `"model"` when a call starts and `"idle"` when it ends
            (success or not); for progress displays. Must not block.

    Raises:
        ConfigError: when `endpoint.api_key_env` names a variable that is not set.
    """

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        http_client: httpx2.AsyncClient | None = None,
        observer: Callable[[str], None] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self._observer = observer
        api_key = "looplab-no-key"
        if endpoint.api_key_env:
            api_key = os.environ.get(endpoint.api_key_env, "")
            if not api_key:
                raise ConfigError(
                    f"environment variable {endpoint.api_key_env} is empty or not set",
                    field="api_key_env",
                )
            remember_secret(api_key)
        if http_client is None:
            http_client = openai.DefaultAsyncHttpxClient()
        http_client.event_hooks["request"] = [
            *http_client.event_hooks.get("request", []),
            _mark_sent,
        ]
        self._client = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=api_key,
            timeout=endpoint.timeout_s,
            max_retries=endpoint.max_retries,
            http_client=http_client,
        )
        self._socket = ResponsesSocket(self._client, endpoint.model, endpoint.timeout_s)

    @property
    def websocket(self) -> ResponsesSocket:
        """The client's Responses WebSocket (`transport: websocket`): `opened` counts its
        connections (0 over HTTP, 1 for a run without broken turns), `continued` the turns
        sent with `previous_response_id`."""
        return self._socket

    async def close(self) -> None:
        """Close the WebSocket (if open) and the underlying HTTP connections."""
        try:
            await self._socket.close()
        finally:
            await self._client.close()

    async def __aenter__(self) -> InstrumentedClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        scheduled: float | None = None,
        on_tool_ready: Callable[[ToolReady], None] | None = None,
        **params: Any,
    ) -> ModelResponse:
        """Send one streamed request and return the assembled, timed response.

        Args:
            messages: the conversation (OpenAI message dicts).
            tools: tool schemas, if any.
            scheduled: when the caller meant to send (perf_counter seconds); defaults to now.
            on_tool_ready: called (inside the stream, must not block) with each tool call
                whose arguments are complete before the reply ends (`StreamAssembler`).
            **params: other chat-completion parameters (`max_completion_tokens`, ...);
                `extra_body` fields join the request body as they are. Over the
                WebSocket they become `response.create` fields
                (`looplab.backends.client.responses_items`).

        Raises:
            BackendError: on any API or transport error, with status and request id.
        """
        extra: dict[str, Any] = dict(params)
        # the conversation and tools go in as JSON-ready dicts (`extra_body`): openai's
        # request transform walks every message (~0.2 ms each, ~20 ms at 90 messages), a
        # client-side cost that would grow with the conversation
        body: dict[str, Any] = {**extra.pop("extra_body", {}), "messages": messages}
        if tools:
            body["tools"] = tools
        now = time.perf_counter()
        timing = CallTiming(scheduled=now if scheduled is None else scheduled, sent=now)
        assembler = StreamAssembler(on_tool_ready)
        token = _CURRENT_TIMING.set(timing)
        if self._observer is not None:
            self._observer("model")
        try:
            if self.endpoint.transport == "websocket":
                response_id = await self._socket.turn(messages, tools, params, timing, assembler)
                headers: Any = {"x-request-id": response_id}
            else:
                headers = await self._stream(body, extra, timing, assembler)
        finally:
            _CURRENT_TIMING.reset(token)
            if self._observer is not None:
                self._observer("idle")
        response = assembler.response(timing, headers.get("x-request-id"))
        response.transport = self.endpoint.transport
        looplab_id = headers.get("x-looplab-request-id")
        response.looplab_request_id = looplab_id
        if looplab_id and self.endpoint.fetch_server_timing:
            response.server_timing = await self._server_timing(looplab_id)
        return response

    async def _stream(
        self,
        body: dict[str, Any],
        extra: dict[str, Any],
        timing: CallTiming,
        assembler: StreamAssembler,
    ) -> Any:
        """Send the request (`body`: messages and tools), feed every SSE chunk to
        `assembler`, stamp `timing`.

        Returns:
            The response headers.

        Raises:
            BackendError: any API or transport error, or a stream without `[DONE]`.
        """
        request_id: str | None = None
        try:
            async with self._client.chat.completions.with_streaming_response.create(
                model=self.endpoint.model,
                messages=[],  # the real ones are in `body`, sent as they are
                stream=True,
                stream_options={"include_usage": True},
                extra_body=body,
                **extra,
            ) as raw:
                headers = raw.headers
                request_id = headers.get("x-request-id")
                done = False
                async for line in raw.iter_lines():
                    now = time.perf_counter()
                    if not line.startswith("data:"):
                        continue  # SSE comments, event names and keep-alives carry no token
                    data = line[5:].strip()
                    if data == "[DONE]":
                        done = True
                        break
                    if assembler.add(_decode_chunk(data, request_id)):
                        if timing.first_token is None:
                            timing.first_token = now
                        timing.last_token = now
                        timing.chunk_times.append(now)
            timing.end = time.perf_counter()
        except openai.APIStatusError as exc:
            raise BackendError(
                f"{self.endpoint.base_url} answered {exc.status_code}: {exc.message}",
                request_id=exc.request_id or request_id,
                status=exc.status_code,
            ) from exc
        except openai.APIError as exc:
            raise BackendError(
                f"request to {self.endpoint.base_url} failed: {exc.message}",
                request_id=request_id,
            ) from exc
        if not done:
            raise BackendError(
                f"stream from {self.endpoint.base_url} ended before [DONE] "
                f"(finish_reason={assembler.finish_reason})",
                request_id=request_id,
            )
        return headers

    async def _server_timing(self, request_id: str) -> dict[str, Any] | None:
        try:
            record = await self._client.get(
                f"/looplab/requests/{request_id}/timing", cast_to=object
            )
        except openai.APIError:
            return None
        return record if isinstance(record, dict) else None


_CURRENT_TIMING: ContextVar[CallTiming | None] = ContextVar("looplab_call_timing", default=None)


async def _mark_sent(request: httpx2.Request) -> None:
    """httpx request hook: stamp `sent` on the call being made in this task."""
    timing = _CURRENT_TIMING.get()
    if timing is not None:
        timing.sent = time.perf_counter()


def _decode_chunk(data: str, request_id: str | None) -> dict[str, Any]:
    """Parse one SSE `data:` payload; an `error` object mid-stream becomes a BackendError."""
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise BackendError(
            f"malformed stream chunk: {data[:200]!r}", request_id=request_id
        ) from exc
    if not isinstance(chunk, dict):
        raise BackendError(f"stream chunk is not an object: {data[:200]!r}", request_id=request_id)
    if "error" in chunk:
        raise BackendError(f"error inside the stream: {chunk['error']}", request_id=request_id)
    return chunk
