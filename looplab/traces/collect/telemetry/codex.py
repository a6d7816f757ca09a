"""Codex's OpenTelemetry events (logs) -> one run per conversation.

Field names: Codex's source (openai/codex `codex-rs/otel/src/events/session_telemetry.rs`,
read 2026-12): every event carries `conversation.id` and `model`; `codex.api_request`
(`duration_ms` of the HTTP request up to its response head, `attempt`,
`http.response.status_code`, `error.message`), or with the websocket transport
`codex.websocket_request` (`duration_ms`, `success`, `error.message`); `codex.sse_event`
(`event.kind`; `response.completed` carries `input_token_count`, `output_token_count`,
`cached_token_count`, `reasoning_token_count`, `tool_token_count`); `codex.turn_ttft`
(`duration_ms`: the turn's time to first token, logged when it came);
`codex.tool_decision` (`tool_name`, `call_id`, `decision`, `source`); `codex.tool_result`
(`tool_name`, `call_id`, `arguments`, `duration_ms`, `success`, `output`). Values are
formatted with Display, so numbers arrive as strings.

A model call starts at an `api_request`'s (or `websocket_request`'s: `transport`
websocket) time minus its `duration_ms` (the request was sent then: measured) and ends at
the next `sse_event` `response.completed` (measured: the event's time), which gives its
tokens (OpenAI's accounting: input includes the cached, output includes the reasoning).
A `turn_ttft` event is the first token of the call in flight at its time (measured). A
call without its completion ends at its request event (estimated, tokens absent). Tools:
`tool_result` events, ending at the event's time and lasting `duration_ms`; a call id
whose `tool_decision` came from the user (`source` user) waited for a person inside that
time (said in `estimated`). A conversation of several turns waits for its person between
them: the time from a turn's last event to the next `codex.user_prompt` is taken out of
the run's time (`assemble.excise_waits`), said in the notes.
"""

from __future__ import annotations

from looplab.traces.collect.logs import LogRecord
from looplab.traces.collect.telemetry.assemble import (
    ENDED_AT,
    Wait,
    count,
    ended,
    excise_waits,
    steps_from,
    text,
)
from looplab.traces.collect.telemetry.source import new_draft
from looplab.traces.importers.drafts import ModelDraft, RunDraft, ToolDraft

__all__ = ["CodexEvents"]

_MODEL_TIMING = (
    "measured: api_request time - duration_ms (request sent) -> sse_event response.completed"
)
_TOOL_TIMING = "measured: duration_ms of the tool_result event (ends at its time)"
_ACCEPTED = frozenset({"200", "201", "202", "203", "204"})


class CodexEvents:
    """The registry entry for Codex's events (see the module docstring)."""

    name = "codex"
    prefix = "codex."
    services = frozenset({"codex_cli_rs", "codex-cli", "codex_exec", "codex"})
    kept = frozenset(
        {
            "conversation.id",
            "model",
            "event.kind",
            "duration_ms",
            "http.response.status_code",
            "error.message",
            "input_token_count",
            "output_token_count",
            "cached_token_count",
            "reasoning_token_count",
            "tool_name",
            "call_id",
            "arguments",
            "success",
            "output",
            "source",
        }
    )

    def run_key(self, record: LogRecord) -> str | None:
        """`conversation.id`."""
        return text(record.attributes.get("conversation.id"))

    def draft(self, key: str, records: list[LogRecord], part: int) -> RunDraft:
        """One conversation's calls and tools (see the module docstring)."""
        ordered = sorted(records, key=lambda r: r.time or 0.0)
        draft = new_draft(self, key, part, "codex")
        models: list[ModelDraft] = []
        tools: list[ToolDraft] = []
        by_user: set[str] = set()
        open_call: ModelDraft | None = None
        failed = 0
        waits: list[Wait] = []
        last: float | None = None
        for record in ordered:
            kind, attrs = record.short_name(self.prefix), record.attributes
            if kind == "user_prompt" and last is not None and record.time is not None:
                waits.append((last, record.time))  # the person's time before a new turn
            if kind != "user_prompt" and record.time is not None:
                last = record.time
            if kind in ("api_request", "websocket_request"):
                if not _succeeded(kind, attrs):
                    failed += 1
                    continue
                open_call = _request(record, kind)
                models.append(open_call)
            elif kind == "sse_event" and attrs.get("event.kind") == "response.completed":
                if open_call is not None and record.time is not None:
                    _complete(open_call, record)
                    open_call = None
            elif kind == "turn_ttft" and open_call is not None and record.time is not None:
                open_call.first_token = record.time
            elif kind == "tool_decision" and str(attrs.get("source", "")).lower() == "user":
                by_user.add(text(attrs.get("call_id")) or "?")
            elif kind == "tool_result":
                tools.append(_tool(record, by_user))
        draft.steps = steps_from(models, tools)
        draft.model_timing = _MODEL_TIMING if models else "absent"
        draft.tool_timing = _TOOL_TIMING if tools else "absent"
        draft.task = key
        if failed:
            draft.notes.append(f"{failed} failed request(s): not model calls")
        if not any(m.first_token is not None for m in models):
            draft.absent.update({"model_call.first_token"})
        draft.absent.add("model_call.last_token")
        ttft = sum(1 for m in models if m.first_token is not None)
        draft.notes.append(
            f"TTFT measured on {ttft} of {len(models)} model calls (codex.turn_ttft marks a "
            "turn's first call only)"
        )
        excise_waits(draft, waits, "the person's time between turns (-> the next user_prompt)")
        return draft


def _succeeded(kind: str, attrs: dict[str, object]) -> bool:
    """An HTTP request answered 2xx, or a websocket request whose `success` is not false;
    and no `error.message`."""
    if attrs.get("error.message"):
        return False
    if kind == "websocket_request":
        return text(attrs.get("success")) != "false"
    return text(attrs.get("http.response.status_code")) in _ACCEPTED


def _request(record: LogRecord, kind: str) -> ModelDraft:
    attrs = record.attributes
    start, end, measured = ended(record.time, attrs.get("duration_ms"))
    call = ModelDraft(start=start, end=end, sent=start, model=text(attrs.get("model")))
    if kind == "websocket_request":
        call.transport = "websocket"
    call.estimated["end"] = f"the {kind} event: no response.completed came"
    call.duration_measured = False
    if not measured:
        call.estimated["start"] = "no duration_ms: the api_request's time"
    return call


def _complete(call: ModelDraft, record: LogRecord) -> None:
    attrs = record.attributes
    call.end = record.time
    call.estimated.pop("end", None)
    call.duration_measured = "start" not in call.estimated
    call.prompt_tokens = count(attrs.get("input_token_count"))
    call.cached_tokens = count(attrs.get("cached_token_count"))
    call.completion_tokens = count(attrs.get("output_token_count"))
    call.reasoning_tokens = count(attrs.get("reasoning_token_count"))
    call.model = text(attrs.get("model")) or call.model


def _tool(record: LogRecord, by_user: set[str]) -> ToolDraft:
    attrs = record.attributes
    start, end, measured = ended(record.time, attrs.get("duration_ms"))
    success = text(attrs.get("success"))
    ok = None if success is None else success.lower() == "true"
    output = text(attrs.get("output"))
    call_id = text(attrs.get("call_id"))
    tool = ToolDraft(
        name=text(attrs.get("tool_name")) or "tool",
        start=start,
        end=end,
        call_id=call_id,
        arguments=text(attrs.get("arguments")) or "",
        ok=ok,
        output=output,
        output_chars=len(output) if output is not None else None,
        duration_measured=measured,
    )
    if measured:
        tool.estimated["start"] = ENDED_AT
    if call_id in by_user:
        tool.estimated["end"] = (
            "includes a person's approval wait (tool_decision source user): the events "
            "do not separate it"
        )
    return tool
