"""Claude Code's beta traces (spans) -> one run per interaction, approval waits taken out.

Span names: Claude Code's monitoring docs (code.claude.com/docs/en/monitoring-usage,
"Traces (beta)", `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`): `claude_code.interaction` (one
user prompt, the root), `claude_code.llm_request` (one API call), `claude_code.tool` (one
tool call) with `claude_code.tool.blocked_on_user` (the permission prompt: a person's
time) and `claude_code.tool.execution` (the tool running) below it. Attributes read:
`model`, `input_tokens`, `output_tokens`, `cache_read_tokens`, `cache_creation_tokens`,
`ttft_ms`, `speed`, `success`, `request_id`, `agent_id` / `parent_agent_id` (recent
versions) on `llm_request`; `tool_name`, `tool_use_id`, `success`, `agent_id` on `tool`;
`session.id` anywhere. The attribute names below the span names come from secondary
sources (reverse-engineered span notes and dashboards built on these spans, 2026): the
docs list the spans, not every attribute.

Times are the spans' start/end (measured). A model call is an `llm_request` (one with
`success` false is a failed attempt, counted in the notes); its first token is measured
where `ttft_ms` is given. A tool call is a `claude_code.tool` span, its `execution`
child's length in `phases`. Calls with an `agent_id` (their own, else the nearest
ancestor's) form that sub-agent's sub-run, hung below `parent_agent_id` when that is a
sub-agent too. Every `blocked_on_user` span is a person's wait: it is taken out of the
run's time (`assemble.excise_waits`: later times move earlier), so neither the tool's time
nor the run's bottom line counts it; the notes say how much was removed. A trace holding
several interactions (one per prompt) is one run whose gaps between them (the person
writing the next prompt) are taken out the same way.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from looplab.traces.collect.spans import Span
from looplab.traces.collect.telemetry.assemble import (
    Wait,
    excise_waits,
    number,
    steps_from,
    subrun,
    text,
)
from looplab.traces.collect.telemetry.claude_code import claude_tokens, speed_note
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.source import safe_run_id

__all__ = ["ClaudeCodeSpans"]

_PREFIX = "claude_code."
_MEASURED = "measured: span start/end (Claude Code beta traces)"

_Group = tuple[list[ModelDraft], list[ToolDraft]]


class ClaudeCodeSpans:
    """The span-source entry for Claude Code's beta traces (see the module docstring)."""

    name = "claude-code"

    def claims(self, spans: list[Span]) -> bool:
        """Any span named `claude_code.*`."""
        return any(s.name.startswith(_PREFIX) for s in spans)

    def draft(self, trace_id: str, spans: list[Span], part: int) -> RunDraft:
        """One interaction's run (see the module docstring)."""
        by_id = {s.span_id: s for s in spans}
        children: dict[str, list[Span]] = {}
        for span in spans:
            children.setdefault(span.parent_id or "", []).append(span)
        draft = RunDraft(
            fmt="otlp-claude-code",
            run_id=safe_run_id("claude-code", trace_id[:8]),
            source_path=Path(f"otlp:{trace_id}"),
            source_key=str(part),
            source_digest=trace_id,
            agent="claude-code",
        )
        groups: dict[str | None, _Group] = {None: ([], [])}
        parents: dict[str, str | None] = {}
        waits: list[Wait] = []
        speeds: Counter[str] = Counter()
        failed = 0
        for span in sorted(spans, key=lambda s: s.start or 0.0):
            kind, attrs = span.name.removeprefix(_PREFIX), span.attributes
            agent = _agent(span, by_id)
            if kind == "llm_request":
                if attrs.get("success") is False or text(attrs.get("success")) == "false":
                    failed += 1
                    continue
                groups.setdefault(agent, ([], []))[0].append(_model(span))
                if agent is not None:
                    parents.setdefault(agent, text(attrs.get("parent_agent_id")))
                if text(attrs.get("speed")):
                    speeds[str(attrs["speed"])] += 1
            elif kind == "tool":
                tool = _tool(span, children.get(span.span_id, []))
                groups.setdefault(agent, ([], []))[1].append(tool)
            elif kind == "tool.blocked_on_user" and span.start is not None and span.end:
                waits.append((span.start, span.end))
            elif kind == "interaction":
                if draft.end_time is not None and span.start is not None:
                    waits.append((draft.end_time, span.start))  # the person's next prompt
                draft.end_time = max(draft.end_time or 0.0, span.end or 0.0) or None
                draft.task = text(attrs.get("session.id"))
        models, tools = groups.pop(None)
        draft.steps = steps_from(models, tools)
        steps: dict[str | None, list[StepDraft]] = {None: draft.steps}
        for agent, (m, t) in sorted(groups.items(), key=lambda kv: _first(kv[1])):
            parent = parents.get(str(agent))
            parent = parent if parent in steps else None
            sub = subrun(str(agent), steps_from(m, t), steps[parent], "subagent")
            sub.parent = parent
            steps[agent] = sub.steps
            draft.subruns.append(sub)
        _describe(draft, failed, speeds, part)
        excise_waits(draft, waits, "a person's waits (blocked_on_user, the next prompt)")
        return draft


def _agent(span: Span, by_id: dict[str, Span]) -> str | None:
    """The span's `agent_id`, else its nearest ancestor's (None: the main loop)."""
    current: Span | None = span
    seen: set[str] = set()
    while current is not None and current.span_id not in seen:
        agent = text(current.attributes.get("agent_id"))
        if agent:
            return agent
        seen.add(current.span_id)
        current = by_id.get(current.parent_id or "")
    return None


def _first(group: _Group) -> float:
    calls: list[ModelDraft | ToolDraft] = [*group[0], *group[1]]
    return min((c.start for c in calls if c.start is not None), default=0.0)


def _model(span: Span) -> ModelDraft:
    attrs = span.attributes
    prompt, cached, completion = claude_tokens(attrs)
    call = ModelDraft(
        start=span.start,
        end=span.end,
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=completion,
        model=text(attrs.get("model")),
        request_id=text(attrs.get("request_id")),
        duration_measured=True,
    )
    ttft = number(attrs.get("ttft_ms"))
    start, end = span.start, span.end
    if (
        start is not None
        and end is not None
        and ttft is not None
        and 0 <= ttft <= 1e3 * (end - start)
    ):
        call.sent, call.first_token = start, start + ttft / 1000.0
    return call


def _tool(span: Span, children: list[Span]) -> ToolDraft:
    attrs = span.attributes
    ok = attrs.get("success")
    success = ok if isinstance(ok, bool) else ({"true": True, "false": False}.get(str(ok)))
    tool = ToolDraft(
        name=text(attrs.get("tool_name")) or "tool",
        start=span.start,
        end=span.end,
        call_id=text(attrs.get("tool_use_id")),
        ok=success,
        error=text(attrs.get("error")) if success is False else None,
        duration_measured=True,
    )
    for child in children:
        if child.name == f"{_PREFIX}tool.execution" and child.start and child.end:
            tool.phases["execution"] = child.end - child.start
    return tool


def _describe(draft: RunDraft, failed: int, speeds: Counter[str], part: int) -> None:
    calls = [s.model for s in draft.steps if s.model is not None]
    calls += [s.model for sub in draft.subruns for s in sub.steps if s.model is not None]
    tools = [t for s in draft.steps for t in s.tools]
    tools += [t for sub in draft.subruns for s in sub.steps for t in s.tools]
    draft.model_timing = _MEASURED if calls else "absent"
    draft.tool_timing = _MEASURED if tools else "absent"
    draft.backend = speed_note(speeds)
    timed = sum(1 for c in calls if c.first_token is not None)
    if timed:
        draft.notes.append(f"TTFT measured on {timed} of {len(calls)} model calls (ttft_ms)")
    else:
        draft.absent.update({"model_call.first_token", "model_call.last_token"})
    if failed:
        draft.notes.append(f"{failed} failed llm_request span(s): attempts, not model calls")
    if part > 1:
        draft.notes.append(f"spans that arrived after the run was written (part {part})")
