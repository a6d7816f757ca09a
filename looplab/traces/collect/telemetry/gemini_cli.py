"""Gemini CLI's OpenTelemetry events (logs) -> one run per prompt.

Field names: Gemini CLI's source (google-gemini/gemini-cli
`packages/core/src/telemetry/loggers.ts` and `types.ts`, read 2026-12): every event
carries `session.id` and `event.timestamp`; `gemini_cli.api_request` (`model`,
`prompt_id`), `gemini_cli.api_response` (`model`, `status_code`, `duration_ms`,
`input_token_count`, `output_token_count`, `cached_content_token_count`,
`thoughts_token_count`, `tool_token_count`, `total_token_count`, `prompt_id`),
`gemini_cli.api_error` (`model`, `error`, `duration_ms`, `prompt_id`),
`gemini_cli.tool_call` (`function_name`, `function_args`, `duration_ms`, `success`,
`decision`: accept / reject / modify / auto_accept, `error`, `prompt_id`).

One run per `prompt_id` (else `session.id`). Model calls: `api_response` events, ending
at the event's time, lasting `duration_ms` (measured); tokens: prompt = input (Gemini's
prompt count includes the cached content), cached = cached content, completion = output +
thoughts (both are generated; reasoning = thoughts). Tools: `tool_call` events, ending at
the event's time and lasting `duration_ms`; one a person decided (`decision` accept /
reject / modify, not auto_accept) waited for them inside that time (said in `estimated`).
The first token is absent (no event marks it).
"""

from __future__ import annotations

from looplab.traces.collect.logs import LogRecord
from looplab.traces.collect.telemetry.assemble import ENDED_AT, count, ended, steps_from, text
from looplab.traces.collect.telemetry.source import new_draft
from looplab.traces.importers.drafts import ModelDraft, RunDraft, ToolDraft

__all__ = ["GeminiCliEvents"]

_MEASURED = "measured: duration_ms of the api_response / tool_call event (ends at its time)"
_BY_PERSON = frozenset({"accept", "reject", "modify"})


class GeminiCliEvents:
    """The registry entry for Gemini CLI's events (see the module docstring)."""

    name = "gemini-cli"
    prefix = "gemini_cli."
    services = frozenset({"gemini-cli"})
    kept = frozenset(
        {
            "session.id",
            "prompt_id",
            "model",
            "duration_ms",
            "input_token_count",
            "output_token_count",
            "cached_content_token_count",
            "thoughts_token_count",
            "response_id",
            "function_name",
            "function_args",
            "call_id",
            "success",
            "decision",
            "error",
        }
    )

    def run_key(self, record: LogRecord) -> str | None:
        """`prompt_id`, else `session.id`."""
        return text(record.attributes.get("prompt_id")) or text(record.attributes.get("session.id"))

    def draft(self, key: str, records: list[LogRecord], part: int) -> RunDraft:
        """One prompt's calls and tools (see the module docstring)."""
        ordered = sorted(records, key=lambda r: r.time or 0.0)
        draft = new_draft(self, key, part, "gemini-cli")
        models: list[ModelDraft] = []
        tools: list[ToolDraft] = []
        errors = 0
        for record in ordered:
            kind = record.short_name(self.prefix)
            if kind == "api_response":
                models.append(_model(record))
            elif kind == "tool_call":
                tools.append(_tool(record))
            elif kind == "api_error":
                errors += 1
        draft.steps = steps_from(models, tools)
        draft.model_timing = _MEASURED if models else "absent"
        draft.tool_timing = _MEASURED if tools else "absent"
        draft.task = text(ordered[0].attributes.get("session.id")) if ordered else None
        draft.absent.update({"model_call.first_token", "model_call.last_token"})
        draft.notes.append("TTFT absent: api_response events carry the call's duration only")
        if errors:
            draft.notes.append(f"{errors} api_error event(s): failed attempts, not model calls")
        return draft


def _model(record: LogRecord) -> ModelDraft:
    attrs = record.attributes
    start, end, measured = ended(record.time, attrs.get("duration_ms"))
    output = count(attrs.get("output_token_count"))
    thoughts = count(attrs.get("thoughts_token_count"))
    completion = None if output is None else output + (thoughts or 0)
    call = ModelDraft(
        start=start,
        end=end,
        prompt_tokens=count(attrs.get("input_token_count")),
        cached_tokens=count(attrs.get("cached_content_token_count")),
        completion_tokens=completion,
        reasoning_tokens=thoughts,
        model=text(attrs.get("model")),
        request_id=text(attrs.get("response_id")),
        duration_measured=measured,
    )
    if measured:
        call.estimated["start"] = ENDED_AT
    return call


def _tool(record: LogRecord) -> ToolDraft:
    attrs = record.attributes
    start, end, measured = ended(record.time, attrs.get("duration_ms"))
    success = attrs.get("success")
    ok = success if isinstance(success, bool) else None
    if isinstance(success, str):
        ok = success.lower() == "true"
    tool = ToolDraft(
        name=text(attrs.get("function_name")) or "tool",
        start=start,
        end=end,
        call_id=text(attrs.get("call_id")),
        arguments=text(attrs.get("function_args")) or "",
        ok=ok,
        error=text(attrs.get("error")) if ok is False else None,
        duration_measured=measured,
    )
    if measured:
        tool.estimated["start"] = ENDED_AT
    if text(attrs.get("decision")) in _BY_PERSON:
        tool.estimated["end"] = (
            "includes a person's decision (decision accept/reject/modify): the events do "
            "not separate it"
        )
    return tool
