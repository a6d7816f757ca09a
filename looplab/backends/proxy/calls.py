"""`CallRecord`: what the proxy measured of one exchange (for `wrap`'s trace and timing);
`CallLog`: the proxy's recent calls; `reply_headers`: what a reply says about its call.

Times are clock seconds (`time.perf_counter()`), measured at the proxy: `received` when
the client's request arrived, `first_token` / `last_token` when the first and last token
slots were released to the client, `end` when the response was complete. `upstream_*`
are when the upstream delivered them (the upstream's own pace, before re-timing).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import structlog

from looplab.backends.client.assembly import StreamAssembler
from looplab.backends.proxy.events import Item, Usage
from looplab.latency.timing import Transport

__all__ = ["HISTORY", "CallLog", "CallRecord", "assemble_message", "reply_headers"]

log = structlog.get_logger(__name__)

HISTORY = 10_000
"""Calls a proxy remembers (older ones are forgotten: a long-lived proxy's memory is flat)."""


@dataclass
class CallRecord:
    """One proxied (or replayed) exchange, as the proxy saw it."""

    request_id: str
    endpoint: str
    """`chat` or `responses`."""
    stream: bool
    model: str | None
    received: float
    received_wall: datetime
    source: str
    """`upstream`, `replay`, or `none` (refused before any reply)."""
    transport: Transport = "http"
    """How the client's request came (an HTTP request, or a turn on the WebSocket)."""
    status: int = 0
    first_token: float | None = None
    last_token: float | None = None
    end: float | None = None
    usage: Usage = field(default_factory=Usage)
    message: dict[str, Any] | None = None
    finish_reason: str | None = None
    upstream_first_token: float | None = None
    upstream_last_token: float | None = None
    upstream_end: float | None = None
    upstream_slower: list[str] = field(default_factory=list)
    """`ttft` and/or `decode`: where the upstream, not the profile, set the pace."""
    scheduled_first_s: float | None = None
    """The profile's first-token time, from `received` (before any upstream delay)."""
    scheduled_last_s: float | None = None
    """The profile's last-token time, from `received`."""
    error: str | None = None
    pacing: dict[str, Any] = field(default_factory=dict)
    divergence: dict[str, Any] | None = None
    """Replay: how the request departed from the recording (`follow.RequestDivergence.as_dict`)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (times relative to `received`)."""
        out = asdict(self)
        base = self.received
        for key in (
            "first_token",
            "last_token",
            "end",
            "upstream_first_token",
            "upstream_last_token",
            "upstream_end",
        ):
            value = out.pop(key)
            out[f"{key}_s"] = None if value is None else value - base
        out["received_wall"] = self.received_wall.isoformat()
        return out


class CallLog:
    """The proxy's last `limit` calls: in order (`calls`, for `wrap`'s trace and `/health`)
    and as JSON by request id (`timings`, the timing endpoint's answers)."""

    def __init__(self, limit: int = HISTORY) -> None:
        self.limit = limit
        self.calls: list[CallRecord] = []
        self.timings: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def add(self, call: CallRecord) -> None:
        """Remember a finished call (forgetting the oldest past `limit`) and log it."""
        self.calls.append(call)
        self.timings[call.request_id] = call.as_dict()
        while len(self.timings) > self.limit:
            self.timings.popitem(last=False)
        if len(self.calls) > self.limit:
            del self.calls[: len(self.calls) - self.limit]
        log.debug(
            "proxy.call",
            request_id=call.request_id,
            endpoint=call.endpoint,
            status=call.status,
            source=call.source,
            upstream_slower=call.upstream_slower,
        )


def reply_headers(call: CallRecord, profile_name: str) -> dict[str, str]:
    """The `x-looplab-*` headers of a reply: its request id, the profile, where it came
    from and, when the upstream set the pace, where (`ttft`, `decode`)."""
    headers = {
        "x-looplab-request-id": call.request_id,
        "x-looplab-profile": profile_name,
        "x-looplab-source": call.source,
    }
    if call.upstream_slower:
        headers["x-looplab-upstream-slower"] = ",".join(call.upstream_slower)
    return headers


def assemble_message(endpoint: str, items: list[Item]) -> tuple[dict[str, Any], str | None]:
    """The assistant message (chat shape: content, tool_calls) and finish reason of a
    streamed reply, from its events."""
    if endpoint == "responses":
        for item in reversed(items):
            data = item.data or {}
            if data.get("type") in ("response.completed", "response.incomplete"):
                return responses_message(data.get("response") or {})
        return {"role": "assistant", "content": None}, None
    assembler = StreamAssembler()
    for item in items:
        if item.data is not None:
            assembler.add(item.data)
    content = "".join(assembler.content)
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if assembler.calls:
        message["tool_calls"] = [assembler.calls[i] for i in sorted(assembler.calls)]
    return message, assembler.finish_reason


def responses_message(response: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A Responses API response object's output as a chat-shaped message."""
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for output in response.get("output") or []:
        if output.get("type") == "message":
            text.extend(
                part.get("text", "")
                for part in output.get("content") or []
                if part.get("type") == "output_text"
            )
        elif output.get("type") == "function_call":
            calls.append(
                {
                    "id": output.get("call_id", ""),
                    "type": "function",
                    "function": {
                        "name": output.get("name", ""),
                        "arguments": output.get("arguments", ""),
                    },
                }
            )
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = calls
    finish = "tool_calls" if calls else "stop"
    if response.get("status") == "incomplete":
        finish = "length"
    return message, finish
