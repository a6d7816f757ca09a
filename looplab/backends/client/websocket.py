"""The WebSocket transport of `InstrumentedClient`: chat calls as turns on one Responses
WebSocket.

`ResponsesSocket` opens the openai client's `responses.connect()` on the first call and
keeps it for every later call of the client (one connection per client, closed by
`close()`). Each call is one `response.create` turn: the conversation becomes Responses
input items (`looplab.backends.client.responses_items`); when it extends the previous
turn's (its input plus the reply as the caller appended it), only the new items go, with
`previous_response_id`, else the whole input. Turns go one at a time (the server serves
a connection's turns in order).

Messages are sent and read raw (`send_raw`, `recv_bytes` + `json.loads`), not through
openai's request transform and pydantic event objects, for the reason the HTTP path reads
raw SSE lines (`looplab.backends.client.client`). Timing is the HTTP path's: `sent` is
stamped as the turn's message is handed to the connection (the one-time handshake of the
first call falls before it, in client queueing), tokens are the events that carry text,
reasoning or tool-call pieces.

A turn that fails raises `BackendError`: a refused one (an `error` event, a failed
response) keeps the connection; after a broken one (closed mid-reply, a timeout, a
cancellation) the connection is dropped and the next call opens a new one (`opened`
counts them), since the server's state for it is unknown.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import openai

from looplab.backends.client.assembly import CallTiming, StreamAssembler
from looplab.backends.client.responses_items import (
    EventFolder,
    function_tools,
    input_items,
    request_fields,
)
from looplab.errors import BackendError

__all__ = ["ResponsesSocket"]

_REFUSED = ("response.failed", "error")
"""Terminal events of a turn the server did not answer."""
_TERMINAL = ("response.completed", "response.incomplete", *_REFUSED)


class ResponsesSocket:
    """One persistent Responses WebSocket for one client (see the module docstring).

    Args:
        client: the openai client whose `responses.connect()` opens the connection (its
            base URL, key and headers).
        model: the model id sent with every turn.
        timeout_s: the longest one turn may take.
    """

    def __init__(self, client: openai.AsyncOpenAI, model: str, timeout_s: float) -> None:
        self._client = client
        self._model = model
        self._timeout_s = timeout_s
        self._connection: Any = None
        self._lock = asyncio.Lock()
        self._previous: str | None = None
        self._history: list[dict[str, Any]] = []
        self.opened = 0
        """Connections opened so far (1 for a run whose turns all succeeded)."""
        self.continued = 0
        """Turns sent with `previous_response_id` (only their new input items)."""

    @property
    def _where(self) -> str:
        return f"{self._client.base_url}responses (WebSocket)"

    async def turn(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        timing: CallTiming,
        assembler: StreamAssembler,
    ) -> str | None:
        """Send one turn, feed its events to `assembler` as chat chunks, stamp `timing`.

        Returns:
            The response id (`resp_...`).

        Raises:
            BackendError: the connection could not be opened, the server refused the turn,
                the connection broke mid-reply, or the turn outlasted `timeout_s`.
        """
        items = input_items(messages)
        body: dict[str, Any] = {
            "type": "response.create",
            "model": self._model,
            **request_fields(params),
        }
        if tools:
            body["tools"] = function_tools(tools)
        async with self._lock:
            extends = self._previous is not None and _extends(items, self._history)
            body["input"] = items[len(self._history) :] if extends else items
            if extends:
                body["previous_response_id"] = self._previous
            try:
                async with asyncio.timeout(self._timeout_s):
                    connection = await self._open()
                    timing.sent = time.perf_counter()
                    await connection.send_raw(json.dumps(body))
                    last = await self._receive(connection, timing, assembler)
            except BaseException as exc:
                await self._drop()
                if isinstance(exc, TimeoutError):
                    raise BackendError(
                        f"{self._where}: no reply within {self._timeout_s:g} s"
                    ) from exc
                raise
            response = last.get("response") or {}
            if last.get("type") in _REFUSED:  # the turn ended; the connection stays usable
                raise BackendError(
                    f"{self._where} refused the turn: {_error_text(last)}",
                    request_id=response.get("id"),
                    status=last.get("status") if isinstance(last.get("status"), int) else None,
                )
            if extends:
                self.continued += 1
            self._previous = str(response.get("id") or "") or None
            self._history = items + input_items([assembler.response(timing, None).message])
            return self._previous

    async def _open(self) -> Any:
        """The open connection, opened now on first use.

        Raises:
            BackendError: the handshake failed (refused, not a WebSocket endpoint, ...).
        """
        if self._connection is not None:
            return self._connection
        try:
            self._connection = await self._client.responses.connect(max_retries=0).enter()
        except (openai.OpenAIError, OSError, ValueError) as exc:
            raise BackendError(f"could not open {self._where}: {exc}") from exc
        except Exception as exc:  # websockets' handshake errors (InvalidStatus, ...)
            raise BackendError(f"could not open {self._where}: {exc!r}") from exc
        self.opened += 1
        return self._connection

    async def _receive(
        self, connection: Any, timing: CallTiming, assembler: StreamAssembler
    ) -> dict[str, Any]:
        """Read the turn's events, folding them into `assembler`, up to its terminal one
        (returned: completed, incomplete, failed or `error`).

        Raises:
            BackendError: the connection closed mid-reply, or an event is not JSON.
        """
        folder = EventFolder()
        while True:
            try:
                data = await connection.recv_bytes()
            except Exception as exc:  # websockets' ConnectionClosed: the reply was cut
                raise BackendError(f"{self._where} closed mid-reply: {exc}") from exc
            now = time.perf_counter()
            event = _decode(data)
            chunk = folder.chunk(event)
            if chunk is not None and assembler.add(chunk):
                if timing.first_token is None:
                    timing.first_token = now
                timing.last_token = now
                timing.chunk_times.append(now)
            if event.get("type") in _TERMINAL:
                timing.end = time.perf_counter()
                return event

    async def _drop(self) -> None:
        """Forget the connection (and the conversation it held) after a broken turn."""
        connection, self._connection = self._connection, None
        self._previous, self._history = None, []
        if connection is not None:
            with contextlib.suppress(Exception):  # already broken: closing is best effort
                await connection.close()

    async def close(self) -> None:
        """Close the connection, if open (idempotent)."""
        await self._drop()


def _extends(items: list[dict[str, Any]], history: list[dict[str, Any]]) -> bool:
    """True when `items` is `history` plus at least one new item."""
    return len(items) > len(history) and items[: len(history)] == history


def _decode(data: bytes) -> dict[str, Any]:
    try:
        event = json.loads(data)
    except ValueError as exc:
        raise BackendError(f"malformed WebSocket event: {data[:200]!r}") from exc
    if not isinstance(event, dict):
        raise BackendError(f"WebSocket event is not an object: {data[:200]!r}")
    return event


def _error_text(event: dict[str, Any]) -> str:
    """The message of an `error` event or a failed response."""
    error = event.get("error") or (event.get("response") or {}).get("error") or {}
    if isinstance(error, dict):
        code = f" ({error['code']})" if error.get("code") else ""
        return f"{error.get('message', error)}{code}"
    return str(error)
