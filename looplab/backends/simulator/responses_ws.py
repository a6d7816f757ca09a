"""The Responses API over a persistent WebSocket (`GET /v1/responses`, upgraded).

The protocol as the openai client speaks it (`client.responses.connect()`, openai>=3.57):
the client opens `ws(s)://<base_url>/responses` once and sends one JSON text message per
turn, `{"type": "response.create", ...}` with the fields of `POST /v1/responses` (`stream`
is implicit). The server answers each with the same events as the HTTP stream
(`response.created` .. `response.completed` / `response.incomplete`), one JSON text message
per event, paced by the same releases (`looplab.backends.simulator.responses_stream.paced_events`).
Turns on one connection are served in order (FIFO), one at a time.

What the connection adds over HTTP:

- **per-call overhead**: each turn is prepared with `transport="websocket"`, so it pays the
  profile's `websocket_overhead_s` instead of `request_overhead_s`
  (`looplab.latency.timing`);
- **`previous_response_id`**: the connection keeps its last responses (input + output), so
  a turn may send only its new input items; an id the connection does not hold is an
  `error` event `previous_response_not_found`;
- **`stream_id`**: echoed on every event of that turn.

A turn the server refuses (bad JSON, a field the simulator cannot honour, 404 model, 429)
is one `error` event `{"type": "error", "status", "error": {type, code, message, param}}`;
the connection stays open. A binary frame closes it with code 1003 (unsupported data;
`receive_message`), text that is not UTF-8 with 1007 (the WebSocket layer's own
close). An injected dropped stream (`faults.drop_stream_rate`) closes
the connection with code 1011 after the partial events, as a cut connection would.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from contextlib import aclosing
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.protocol import ApiError
from looplab.backends.simulator.responses import chat_body
from looplab.backends.simulator.responses_stream import Event, paced_events
from looplab.backends.simulator.sse import dumps

__all__ = [
    "TERMINAL",
    "ConversationStore",
    "annotate",
    "create_body",
    "error_event",
    "receive_message",
    "responses_websocket",
    "stream_id_of",
]

TERMINAL = ("response.completed", "response.incomplete", "response.failed")
"""The events that end a turn."""
_KEPT_RESPONSES = 16
"""Responses a connection remembers for `previous_response_id` (most recent first)."""


class ConversationStore:
    """A connection's recent responses as input items, for `previous_response_id`.

    Args:
        size: how many responses to keep (the oldest is forgotten first).
    """

    def __init__(self, size: int = _KEPT_RESPONSES) -> None:
        self.size = size
        self.items: OrderedDict[str, list[Any]] = OrderedDict()

    def expand(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` with `previous_response_id` replaced by the whole input it stands for.

        Raises:
            ApiError: 400 `previous_response_not_found` for an id this connection lacks.
        """
        previous = body.get("previous_response_id")
        if not previous:
            return body
        earlier = self.items.get(str(previous))
        if earlier is None:
            raise ApiError(
                400,
                f"Previous response with id {previous!r} not found on this connection "
                f"(it keeps its last {self.size} responses).",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        expanded = {k: v for k, v in body.items() if k != "previous_response_id"}
        expanded["input"] = earlier + _input_items(body.get("input"))
        return expanded

    def remember(self, body: dict[str, Any], response: dict[str, Any]) -> None:
        """Keep `response` (its id, `body`'s input and its output) for later turns."""
        outputs = [_as_input(item) for item in response.get("output") or []]
        self.items[str(response["id"])] = _input_items(body.get("input")) + [
            item for item in outputs if item is not None
        ]
        while len(self.items) > self.size:
            self.items.popitem(last=False)


def _input_items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def _as_input(item: dict[str, Any]) -> dict[str, Any] | None:
    """An output item as the input item that replays it (reasoning is dropped)."""
    if item.get("type") == "message":
        return {"type": "message", "role": "assistant", "content": item.get("content") or []}
    if item.get("type") == "function_call":
        return {k: item[k] for k in ("type", "call_id", "name", "arguments") if k in item}
    return None


def error_event(error: ApiError, stream_id: str | None = None) -> Event:
    """The WebSocket `error` event of `error` (the HTTP status rides along)."""
    event: Event = {"type": "error", "status": error.status, **error.body()}
    if stream_id is not None:
        event["stream_id"] = stream_id
    return event


def annotate(event: Event, body: dict[str, Any], stream_id: str | None) -> Event:
    """`event` with the turn's `previous_response_id` (in its response object) and
    `stream_id` (when the turn gave one)."""
    if isinstance(event.get("response"), dict):
        event["response"]["previous_response_id"] = body.get("previous_response_id")
    if stream_id is not None:
        event["stream_id"] = stream_id
    return event


def create_body(text: str) -> dict[str, Any]:
    """The `POST /v1/responses` body of one `response.create` message.

    Raises:
        ApiError: 400 for a message that is not a `response.create` object.
    """
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        raise ApiError(400, "The message is not valid JSON.", code="invalid_json") from None
    if not isinstance(message, dict):
        raise ApiError(400, "A message must be a JSON object.", code="invalid_json")
    if message.get("type") != "response.create":
        raise ApiError(
            400,
            f"Unsupported event type {message.get('type')!r}: the looplab simulator accepts "
            "only response.create over the WebSocket.",
            param="type",
            code="unsupported_event",
        )
    if message.get("background"):
        raise ApiError(400, "background is not supported over WebSocket.", param="background")
    skipped = ("type", "stream", "stream_id", "background")
    return {k: v for k, v in message.items() if k not in skipped}


async def receive_message(websocket: WebSocket) -> str | None:
    """The next text message; None after a binary frame, which closes the connection with
    1003 (the protocol is JSON text).

    Raises:
        WebSocketDisconnect: the client closed the connection.
    """
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
    text = message.get("text")
    if isinstance(text, str):
        return text
    await websocket.close(code=1003, reason="binary frames are not supported: send JSON text")
    return None


async def responses_websocket(simulator: Simulator, websocket: WebSocket) -> None:
    """Serve one Responses WebSocket until the client closes it (see the module doc)."""
    await websocket.accept()
    store = ConversationStore()
    try:
        while True:
            text = await receive_message(websocket)
            if text is None:
                return
            if not await _turn(simulator, websocket, store, text):
                await websocket.close(code=1011, reason="injected fault: stream dropped")
                return
    except (WebSocketDisconnect, OSError):  # uvicorn's ClientDisconnected is an OSError
        return


async def _turn(
    simulator: Simulator, websocket: WebSocket, store: ConversationStore, text: str
) -> bool:
    """Answer one message; False when the stream was dropped (injected fault)."""
    stream_id: str | None = None
    try:
        stream_id = stream_id_of(text)
        body = create_body(text)
        expanded = store.expand(body)
        prepared = simulator.prepare(
            json.dumps(chat_body(expanded)).encode(), transport="websocket"
        )
    except ApiError as error:
        await websocket.send_text(dumps(error_event(error, stream_id)))
        return True
    last: Event | None = None
    async with aclosing(paced_events(simulator, prepared, expanded)) as events:
        async for batch in events:
            for event in batch:
                await websocket.send_text(dumps(annotate(event, body, stream_id)))
                last = event
    if last is None or last["type"] not in TERMINAL:
        return False
    store.remember(expanded, last["response"])
    return True


def stream_id_of(text: str) -> str | None:
    """The `stream_id` a message asks for (None: none, or not a JSON object)."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    value = message.get("stream_id") if isinstance(message, dict) else None
    return value if isinstance(value, str) else None
