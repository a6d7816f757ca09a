"""Claude Code's OpenTelemetry events (logs) -> one run per prompt.

Field names: Claude Code's monitoring docs (code.claude.com/docs/en/monitoring-usage,
"Events"): every event carries `session.id`, `prompt.id` (the user prompt it serves) and
`event.sequence`; `claude_code.api_request` has `model`, `cost_usd`, `duration_ms`,
`input_tokens`, `output_tokens`, `cache_read_tokens`, `cache_creation_tokens`, `speed`
(`fast` in fast mode) and `query_source` (`main`, `subagent`, `auxiliary`: a side call such
as a title); `claude_code.tool_result` has `tool_name`, `success`, `duration_ms`, `error`,
`decision_type`/`decision_source`; `claude_code.tool_decision` has `tool_name`, `decision`,
`source`; `claude_code.api_error` has `model`, `error`, `status_code`, `duration_ms`,
`attempt`. `agent_id` on events of a sub-agent, `tool_use_id` and `ttft_ms` are read
where present: only secondary sources (collectors and dashboards built on these events,
2026) show them, not the docs.

One run per `prompt.id` (a session without prompt ids: one per `session.id`). Model calls:
`api_request` events, ending at the event's time, lasting `duration_ms` (measured), tokens
as the lab counts Claude's (prompt = uncached + cache writes + cache reads; cached = cache
reads); `query_source=subagent` calls form a sub-run per `agent_id` (one `subagent`
sub-run without it), `auxiliary` calls a sub-run of their own; failed attempts
(`api_error`) are counted in the notes. Tools: `tool_result` events, ending at the
event's time, lasting `duration_ms`. What the logs cannot say: when the first token came
(absent unless `ttft_ms`), and how much of a tool's `duration_ms` a person spent approving
it (the prompt is inside the tool's time; `tool_decision` with a `user_*` source marks
such tools, as does a `tool_result` whose `decision_source` is `user_*`; said in the
tool's `estimated`): the beta traces (`claude_code_spans.py`) separate it. Events are
ordered by `event.sequence` where times tie.
"""

from __future__ import annotations

from collections import Counter

from looplab.traces.collect.conventions import CLAUDE_CODE_CALL_KEYS
from looplab.traces.collect.logs import LogRecord
from looplab.traces.collect.telemetry.assemble import (
    ENDED_AT,
    count,
    ended,
    number,
    steps_from,
    subrun,
    text,
)
from looplab.traces.collect.telemetry.source import new_draft
from looplab.traces.importers.drafts import ModelDraft, RunDraft, ToolDraft

__all__ = ["ClaudeCodeEvents", "claude_tokens", "speed_note"]

_MEASURED = "measured: duration_ms of the api_request / tool_result event (ends at its time)"


def claude_tokens(attrs: dict[str, object]) -> tuple[int | None, int | None, int | None]:
    """(prompt, cached, completion) of Claude's usage: prompt = uncached + cache writes +
    cache reads (TraceLab's accounting, as the session-log importer counts it)."""
    uncached = count(attrs.get("input_tokens"))
    written = count(attrs.get("cache_creation_tokens")) or 0
    read = count(attrs.get("cache_read_tokens"))
    prompt = None if uncached is None else uncached + written + (read or 0)
    return prompt, read, count(attrs.get("output_tokens"))


def speed_note(speeds: Counter[str]) -> dict[str, object]:
    """The header's `backend` for the speed tiers the calls named (`speed`: fast mode)."""
    if not speeds:
        return {}
    tier = speeds.most_common(1)[0][0]
    return {"speed": tier, "speeds": dict(sorted(speeds.items()))}


class ClaudeCodeEvents:
    """The registry entry for Claude Code's events (see the module docstring)."""

    name = "claude-code"
    prefix = "claude_code."
    services = frozenset({"claude-code"})
    kept = CLAUDE_CODE_CALL_KEYS | {"event.sequence", "decision_source"}

    def run_key(self, record: LogRecord) -> str | None:
        """`prompt.id`, else `session.id`."""
        return text(record.attributes.get("prompt.id")) or text(record.attributes.get("session.id"))

    def draft(self, key: str, records: list[LogRecord], part: int) -> RunDraft:
        """One prompt's calls and tools (see the module docstring)."""
        ordered = sorted(
            records, key=lambda r: (r.time or 0.0, number(r.attributes.get("event.sequence")) or 0)
        )
        draft = new_draft(self, key, part, "claude-code")
        groups: dict[str | None, tuple[list[ModelDraft], list[ToolDraft]]] = {None: ([], [])}
        approved_by_person: set[str] = set()
        speeds: Counter[str] = Counter()
        names: dict[str | None, str] = {}
        for record in ordered:
            kind, attrs = record.short_name(self.prefix), record.attributes
            if kind == "api_request":
                group = _group(attrs)
                names.setdefault(group, text(attrs.get("query_source")) or "subagent")
                model = _model(record)
                speed = text(attrs.get("speed"))
                if speed:
                    speeds[speed] += 1
                groups.setdefault(group, ([], []))[0].append(model)
            elif kind == "tool_decision" and str(attrs.get("source", "")).startswith("user"):
                approved_by_person.add(text(attrs.get("tool_use_id")) or "?")
            elif kind == "tool_result":
                tool = _tool(record)
                if str(attrs.get("decision_source") or attrs.get("source") or "").startswith(
                    "user"
                ):
                    approved_by_person.add(tool.call_id or "?")
                groups.setdefault(_group(attrs), ([], []))[1].append(tool)
        _mark_approvals(groups, approved_by_person)
        models, tools = groups.pop(None)
        draft.steps = steps_from(models, tools)
        draft.subruns = [
            subrun(str(g), steps_from(m, t), draft.steps, names.get(g))
            for g, (m, t) in sorted(groups.items(), key=lambda kv: _first(kv[1]))
        ]
        _describe(draft, ordered, speeds)
        return draft


def _group(attrs: dict[str, object]) -> str | None:
    """None for the main loop; the sub-agent's id, or `subagent` / `auxiliary`."""
    source = text(attrs.get("query_source"))
    agent = text(attrs.get("agent_id"))
    if agent:
        return agent
    if source in (None, "main", "repl_main_thread", "sdk"):
        return None
    return source


def _first(group: tuple[list[ModelDraft], list[ToolDraft]]) -> float:
    calls: list[ModelDraft | ToolDraft] = [*group[0], *group[1]]
    times = [c.start for c in calls if c.start is not None]
    return min(times, default=0.0)


def _model(record: LogRecord) -> ModelDraft:
    attrs = record.attributes
    start, end, measured = ended(record.time, attrs.get("duration_ms"))
    prompt, cached, completion = claude_tokens(attrs)
    model = ModelDraft(
        start=start,
        end=end,
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=completion,
        model=text(attrs.get("model")),
        request_id=text(attrs.get("request_id")),
        duration_measured=measured,
    )
    if measured:
        model.estimated["start"] = ENDED_AT
    ttft = number(attrs.get("ttft_ms"))
    if start is not None and ttft is not None and 0 <= ttft / 1000.0 <= (end or start) - start:
        model.sent, model.first_token = start, start + ttft / 1000.0
    return model


def _tool(record: LogRecord) -> ToolDraft:
    attrs = record.attributes
    start, end, measured = ended(record.time, attrs.get("duration_ms"))
    ok = attrs.get("success")
    success = ok if isinstance(ok, bool) else (str(ok).lower() == "true" if ok else None)
    tool = ToolDraft(
        name=text(attrs.get("tool_name")) or "tool",
        start=start,
        end=end,
        call_id=text(attrs.get("tool_use_id")),
        ok=success,
        error=text(attrs.get("error")) if success is False else None,
        duration_measured=measured,
    )
    if measured:
        tool.estimated["start"] = ENDED_AT
    return tool


def _mark_approvals(
    groups: dict[str | None, tuple[list[ModelDraft], list[ToolDraft]]], ids: set[str]
) -> None:
    for _, tools in groups.values():
        for tool in tools:
            if tool.call_id in ids:
                tool.estimated["end"] = (
                    "includes a person's approval wait (tool_decision source user_*): the "
                    "events do not separate it; the beta traces do"
                )


def _describe(draft: RunDraft, records: list[LogRecord], speeds: Counter[str]) -> None:
    calls = [s.model for s in draft.steps if s.model is not None]
    calls += [s.model for sub in draft.subruns for s in sub.steps if s.model is not None]
    tools = [t for s in draft.steps for t in s.tools]
    tools += [t for sub in draft.subruns for s in sub.steps for t in s.tools]
    draft.model_timing = _MEASURED if calls else "absent"
    draft.tool_timing = _MEASURED if tools else "absent"
    draft.backend = speed_note(speeds)
    if not any(c.first_token is not None for c in calls):
        draft.absent.update({"model_call.first_token", "model_call.last_token"})
        draft.notes.append("TTFT absent: api_request events carry the call's duration only")
    draft.absent.add("model_call.reasoning_tokens")
    errors = sum(1 for r in records if r.short_name("claude_code.") == "api_error")
    if errors:
        draft.notes.append(f"{errors} api_error event(s): failed attempts, not model calls")
    draft.task = text(records[0].attributes.get("session.id")) if records else None
    if speeds:
        tiers = ", ".join(f"{k} {v}" for k, v in sorted(speeds.items()))
        draft.notes.append(f"speed tier (api_request speed): {tiers}")
    untimed = sum(1 for r in records if r.time is None)
    if untimed:
        draft.notes.append(f"{untimed} event(s) without a time (placed at zero length)")
