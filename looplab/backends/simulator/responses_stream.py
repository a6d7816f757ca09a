"""`POST /v1/responses` in the simulator: the endpoint and the typed event stream.

A streamed response is the Responses API's event sequence, paced by the same releases as
a chat stream (`Simulator.paced`), so the tokens come out on the same schedule:

```
response.created, response.in_progress                 at once
[output_item.added + output_item.done (reasoning)]    with the first release, when the
                                                       reply had hidden reasoning tokens
output_item.added (message), content_part.added        with the first text token
response.output_text.delta ...                         one per release
output_text.done, content_part.done, output_item.done
output_item.added (function_call)                      with the call's header token
response.function_call_arguments.delta ...
function_call_arguments.done, output_item.done
response.completed (or response.incomplete)            with usage, reasoning tokens included
```

Every event carries a `sequence_number`; over HTTP it is `event: <type>` + `data: <json>`
(`sse`), over the WebSocket (`looplab.backends.simulator.responses_ws`) one JSON text message.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from looplab.backends.simulator.completion import PreparedCompletion, assembled_calls
from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.protocol import ApiError
from looplab.backends.simulator.responses import (
    chat_body,
    function_item,
    message_item,
    output_items,
    reasoning_item,
    response_object,
    responses_usage,
)
from looplab.backends.simulator.sse import dumps
from looplab.serving.guard import arrival

__all__ = ["Event", "ResponsesWriter", "paced_events", "responses_endpoint", "sse"]

Event = dict[str, Any]
"""One Responses stream event: its JSON object (`type`, `sequence_number`, ...)."""


class ResponsesWriter:
    """Builds the Responses API events of one reply, release by release.

    Args:
        prepared: the planned reply.
        request: the original Responses request body (echoed in the response object).
    """

    def __init__(self, prepared: PreparedCompletion, request: dict[str, Any]) -> None:
        self.prepared = prepared
        self.request = request
        self.rid = prepared.request_id
        self.seq = 0
        self.index = 0
        self.current: tuple[str, int] | None = None
        self.text: list[str] = []
        self.args: list[str] = []

    def event(self, kind: str, **fields: Any) -> list[Event]:
        """One event of type `kind` (a one-element list: the methods add lists up)."""
        data = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        return [data]

    def snapshot(self, status: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
        """The response object in `status` (its output once the reply is done)."""
        output: list[dict[str, Any]] = []
        if status != "in_progress":
            text = "".join(p for kind, _, p in self.prepared.visible_slots if kind == "c")
            calls = assembled_calls(self.prepared)
            output = output_items(
                self.rid,
                self.prepared.reasoning_tokens,
                text if text or not calls else None,
                calls,
            )
        return response_object(
            self.request,
            self.rid,
            self.prepared.created,
            output=output,
            usage=usage,
            status=status,
        )

    def start(self) -> list[Event]:
        """`response.created` and `response.in_progress`."""
        created = self.snapshot("in_progress")
        return self.event("response.created", response=created) + self.event(
            "response.in_progress", response=created
        )

    def release(self, start: int, stop: int, first: bool) -> list[Event]:
        """The events carrying visible slots `[start, stop)`."""
        parts: list[Event] = []
        if first and self.prepared.reasoning_tokens:
            item = reasoning_item(self.rid)
            parts += self.event("response.output_item.added", output_index=0, item=item)
            parts += self.event("response.output_item.done", output_index=0, item=item)
            self.index = 1
        slots = self.prepared.visible_slots
        slot = start
        while slot < stop:
            kind, call, _ = slots[slot]
            end = slot + 1
            while end < stop and slots[end][0] == kind and slots[end][1] == call and kind != "h":
                end += 1
            piece = "".join(p for _, _, p in slots[slot:end])
            if kind == "c":
                parts += self._text_delta(piece)
            elif kind == "h":
                parts += self._close()
                parts += self._open_call(call)
            else:
                self.args.append(piece)
                parts += self.event(
                    "response.function_call_arguments.delta",
                    item_id=f"fc_{self.rid}_{call}",
                    output_index=self.index,
                    delta=piece,
                )
            slot = end
        return parts

    def _text_delta(self, piece: str) -> list[Event]:
        out: list[Event] = []
        if self.current != ("c", -1):
            out += self._close()
            self.current = ("c", -1)
            item = message_item(self.rid, "", "in_progress")
            item["content"] = []
            out += self.event("response.output_item.added", output_index=self.index, item=item)
            out += self.event(
                "response.content_part.added",
                item_id=item["id"],
                output_index=self.index,
                content_index=0,
                part={"type": "output_text", "text": "", "annotations": [], "logprobs": []},
            )
        self.text.append(piece)
        return out + self.event(
            "response.output_text.delta",
            item_id="msg_" + self.rid,
            output_index=self.index,
            content_index=0,
            delta=piece,
            logprobs=[],
        )

    def _open_call(self, call: int) -> list[Event]:
        self.current = ("h", call)
        self.args = []
        planned = self.prepared.reply.tool_calls[call]
        item = function_item(
            self.rid,
            call,
            {"id": planned.id, "function": {"name": planned.name, "arguments": ""}},
            "in_progress",
        )
        return self.event("response.output_item.added", output_index=self.index, item=item)

    def _close(self) -> list[Event]:
        """Close the open output item (text or function call), if any."""
        current, self.current = self.current, None
        if current is None:
            return []
        index = self.index
        self.index += 1
        if current[0] == "c":
            text = "".join(self.text)
            item = message_item(self.rid, text)
            part = item["content"][0]
            return (
                self.event(
                    "response.output_text.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    text=text,
                    logprobs=[],
                )
                + self.event(
                    "response.content_part.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part=part,
                )
                + self.event("response.output_item.done", output_index=index, item=item)
            )
        planned = self.prepared.reply.tool_calls[current[1]]
        arguments = "".join(self.args)
        item = function_item(
            self.rid,
            current[1],
            {"id": planned.id, "function": {"name": planned.name, "arguments": arguments}},
        )
        return self.event(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=index,
            name=planned.name,
            arguments=arguments,
        ) + self.event("response.output_item.done", output_index=index, item=item)

    def finish(self) -> list[Event]:
        """Close the open item; `response.completed` (or `.incomplete`) with usage."""
        status = "incomplete" if self.prepared.finish_reason == "length" else "completed"
        usage = responses_usage(self.prepared.usage())
        closing = self._close()
        return closing + self.event(f"response.{status}", response=self.snapshot(status, usage))


def _error(error: ApiError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


async def responses_endpoint(simulator: Simulator, request: Request) -> Response:
    """`POST /v1/responses`: translate, prepare, pace, answer (see the module doc)."""
    try:
        try:
            body = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise ApiError(
                400, "The request body is not valid JSON.", code="invalid_json"
            ) from None
        if not isinstance(body, dict):
            raise ApiError(400, "The request body must be a JSON object.", code="invalid_json")
        prepared = simulator.prepare(
            json.dumps(chat_body(body)).encode(), arrived=arrival(request.scope)
        )
    except ApiError as error:
        return _error(error)
    headers = {
        "x-request-id": prepared.request_id,
        "x-looplab-request-id": prepared.request_id,
        "x-looplab-tokenizer": simulator.tokenizer.name,
    }
    if body.get("stream"):
        headers["cache-control"] = "no-cache"
        return StreamingResponse(
            _sse_events(simulator, prepared, body), media_type="text/event-stream", headers=headers
        )
    async for _ in simulator.paced(prepared):
        pass
    writer = ResponsesWriter(prepared, body)
    status = "incomplete" if prepared.finish_reason == "length" else "completed"
    return JSONResponse(writer.snapshot(status, responses_usage(prepared.usage())), headers=headers)


def sse(events: list[Event]) -> bytes:
    """`events` as SSE: `event: <type>` + `data: <json>` each."""
    return b"".join(f"event: {e['type']}\ndata: {dumps(e)}\n\n".encode() for e in events)


async def _sse_events(
    simulator: Simulator, prepared: PreparedCompletion, body: dict[str, Any]
) -> AsyncIterator[bytes]:
    async for events in paced_events(simulator, prepared, body):
        yield sse(events)


async def paced_events(
    simulator: Simulator, prepared: PreparedCompletion, body: dict[str, Any]
) -> AsyncGenerator[list[Event]]:
    """The events of `prepared`, one list per paced release (the first list at once).

    The last list ends with `response.completed` / `response.incomplete`, except under an
    injected dropped stream (profile `faults.drop_stream_rate`), which stops without it.
    """
    writer = ResponsesWriter(prepared, body)
    yield writer.start()
    first = True
    total = len(prepared.visible_slots)
    async for release in simulator.paced(prepared):
        stop = release.stop
        dropped = prepared.drop_after is not None and stop > prepared.drop_after
        if dropped:
            stop = prepared.drop_after or 0
        part = writer.release(release.start, stop, first)
        first = False
        if dropped:
            yield part
            return  # injected fault: the stream ends without response.completed
        if release.stop == total:
            part += writer.finish()
        yield part
