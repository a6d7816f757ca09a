"""The Responses WebSocket in front of the pacing proxy (`ws /v1/responses`).

Same protocol as the simulator's (`looplab.backends.simulator.responses_ws`): one `response.create`
message per turn, the Responses stream events back as JSON text messages, turns in order.
Each turn is forwarded upstream as a streamed `POST /v1/responses` (or answered from a
recording) through `Proxy.handle`, so it is paced, recorded and traced exactly like an
HTTP call; only its per-call overhead differs (`transport="websocket"`: the profile's
`websocket_overhead_s`). The upstream need not speak WebSocket.

`previous_response_id` is resolved by the proxy itself from the connection's last turns
(`ConversationStore`), so the upstream always gets the whole input. A refused turn
(upstream 4xx/5xx, bad message) is one `error` event; the connection stays open. A stream
that ends without `response.completed`, or whose upstream sent an event that is not JSON,
ends with an `error` event (`upstream_error`) and closes the connection with code 1011; a
terminal event without a response object becomes an `error` event (the turn is not
remembered). A binary frame closes the connection with 1003 (`receive_message`).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from looplab.backends.proxy.core import ClientReply, Proxy
from looplab.backends.proxy.events import SseParser
from looplab.backends.proxy.upstream import upstream_fault
from looplab.backends.simulator.protocol import ApiError
from looplab.backends.simulator.responses_ws import (
    TERMINAL,
    ConversationStore,
    annotate,
    create_body,
    error_event,
    receive_message,
    stream_id_of,
)
from looplab.backends.simulator.sse import dumps

__all__ = ["proxy_websocket"]


async def proxy_websocket(proxy: Proxy, websocket: WebSocket) -> None:
    """Serve one Responses WebSocket through `proxy` until the client closes it."""
    await websocket.accept()
    store = ConversationStore()
    try:
        while True:
            text = await receive_message(websocket)
            if text is None:
                return
            if not await _turn(proxy, websocket, store, text):
                await websocket.close(code=1011, reason="upstream stream ended early")
                return
    except (WebSocketDisconnect, OSError):  # uvicorn's ClientDisconnected is an OSError
        return


async def _turn(proxy: Proxy, websocket: WebSocket, store: ConversationStore, text: str) -> bool:
    """Answer one message; False when the stream ended without a terminal event."""
    stream_id = stream_id_of(text)
    try:
        body = create_body(text)
        expanded = {**store.expand(body), "stream": True}
    except ApiError as error:
        await websocket.send_text(dumps(error_event(error, stream_id)))
        return True
    raw = json.dumps(expanded).encode()
    reply = await proxy.handle("responses", raw, websocket.headers, transport="websocket")
    if reply.stream is None:
        await websocket.send_text(dumps(error_event(_reply_error(reply), stream_id)))
        return True
    last: dict[str, Any] | None = None
    ended = False
    async with aclosing(_events(reply.stream)) as events:
        async for event in events:
            if event.get("type") in TERMINAL:
                ended = True
                if not isinstance(event.get("response"), dict):
                    why = f"sent {event.get('type')} without a response object"
                    event = error_event(upstream_fault(200, why, code="upstream_invalid_event"))
            await websocket.send_text(dumps(annotate(event, body, stream_id)))
            last = event
    if not ended:  # an upstream fault's error event, or nothing: the stream broke
        return False
    if last is not None and last.get("type") in TERMINAL:
        store.remember(expanded, last["response"])
    return True


def _reply_error(reply: ClientReply) -> ApiError:
    """The `ApiError` of a reply that is not a stream (an error, in OpenAI's shape)."""
    try:
        error = json.loads(reply.content).get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    status = reply.status if reply.status >= 400 else 502
    return ApiError(
        status,
        str(error.get("message") or f"upstream answered HTTP {reply.status} without a stream"),
        type=str(error.get("type") or "server_error"),
        param=error.get("param"),
        code=error.get("code"),
    )


async def _events(stream: AsyncIterator[bytes]) -> AsyncGenerator[dict[str, Any]]:
    """The JSON events of an SSE byte stream (comments and `[DONE]` skipped); closes it.
    An event that is not a JSON object ends it with an `error` event (the upstream's
    fault, `upstream_stream_broken`)."""
    parser = SseParser()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")  # a character may span chunks
    pending = ""
    try:
        async for chunk in stream:
            pending += decoder.decode(chunk)
            *lines, pending = pending.split("\n")
            for line in lines:
                parsed = parser.feed(line.removesuffix("\r"))
                if parsed is None or not parsed[1] or parsed[1] == "[DONE]":
                    continue
                try:
                    event = json.loads(parsed[1])
                except (ValueError, RecursionError):
                    event = None
                if not isinstance(event, dict):
                    why = "sent an event that is not a JSON object"
                    fault = upstream_fault(
                        200, why, parsed[1].encode(), code="upstream_stream_broken"
                    )
                    yield error_event(fault)
                    return
                yield event
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
