"""Inspect sample events -> steps: model events start steps, tool and sandbox events join them.

Timing: model and tool events carry their start (`timestamp`) and end (`completed`):
measured. `working_time` excludes Inspect's waits for rate limits and connection slots, so
`sent` = `completed - working_time` (estimated) and `sent - start` is client queueing.
Older events: a model event with only `output.time` lasts that long from its timestamp,
a tool event with only `working_time` likewise. Events with no end at all come from
Inspect releases that stamped an event when it was recorded, i.e. when it ended (in
0.3.41 logs a generate step's model event comes 12.6 s after the step began, and the
next event 0.5 ms after it): they end at their timestamp and start at the previous
event's time (estimated). Samples without events (the oldest logs) give steps from
`messages`, every time absent.

References (`Refs`): long strings moved to `sample.attachments` (`attachment://<hash>`),
older logs' `transcript.content` (`tc://<hash>`), and model inputs de-duplicated into
`sample.message_pool` (`input_refs`: `[start, end)` ranges) are resolved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.importers.drafts import ModelDraft, RunDraft, SandboxDraft, StepDraft, ToolDraft
from looplab.traces.importers.source import as_float, as_int, as_str, obj, parse_time

__all__ = ["Refs", "steps_from_events", "steps_from_messages", "text_of"]

_END_STAMPED = (
    "the previous event's time (the event has no end field: Inspect stamped it when it ended)"
)


class Refs:
    """Resolves Inspect's content references within one sample (see the module doc)."""

    def __init__(self, sample: dict[str, Any]) -> None:
        self.tables = {
            "attachment://": obj(sample.get("attachments")),
            "tc://": obj(obj(sample.get("transcript")).get("content")),
        }
        pool = sample.get("message_pool")
        self.message_pool: list[Any] = pool if isinstance(pool, list) else []

    def resolve(self, value: Any) -> Any:
        """`value` with every reference replaced by its content (unknown ones kept)."""
        if isinstance(value, str):
            for prefix, table in self.tables.items():
                if value.startswith(prefix):
                    return table.get(value.removeprefix(prefix), value)
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def model_input(self, event: dict[str, Any]) -> list[Any]:
        """A model event's input messages: `input`, or its `input_refs` into the pool."""
        given = event.get("input")
        if isinstance(given, list) and given:
            return [self.resolve(m) for m in given]
        messages: list[Any] = []
        refs = event.get("input_refs")
        for pair in refs if isinstance(refs, list) else []:
            if isinstance(pair, list) and len(pair) == 2:
                start, end = as_int(pair[0]), as_int(pair[1])
                if start is not None and end is not None and 0 <= start <= end:
                    messages.extend(self.message_pool[start:end])
        return [self.resolve(m) for m in messages]


def steps_from_events(
    events: list[Any], label: str, refs: Refs, draft: RunDraft, path: Path
) -> None:
    """Append the steps of a sample's events to `draft` and say how times were obtained.

    Raises:
        TraceError: an entry that is not an event, or a bad timestamp (named `label[j]`).
    """
    walker = _Walker(events, label, refs, draft, path)
    for j, event in enumerate(events):
        walker.event(j, event)
    draft.model_timing = "; ".join(sorted(walker.how_model - {""})) or "absent"
    draft.tool_timing = "; ".join(sorted(walker.how_tool - {""})) or "absent"
    if not any(s.model and s.model.sent is not None for s in draft.steps):
        draft.absent.add("model_call.sent")
    draft.absent.update({"model_call.first_token", "model_call.last_token"})


class _Walker:
    """The state of one pass over a sample's events."""

    def __init__(
        self, events: list[Any], label: str, refs: Refs, draft: RunDraft, path: Path
    ) -> None:
        self.label, self.refs, self.draft, self.path = label, refs, draft, path
        self.step: StepDraft | None = None
        self.open_spans: dict[str, float] = {}
        self.how_model: set[str] = set()
        self.how_tool: set[str] = set()
        self.span_names = {
            str(e.get("id")): as_str(e.get("name"))
            for e in events
            if isinstance(e, dict) and e.get("event") == "span_begin"
        }
        self.stamps = [
            parse_time(e["timestamp"], f"{label}[{j}].timestamp", path)
            if isinstance(e, dict) and e.get("timestamp") is not None
            else None
            for j, e in enumerate(events)
        ]
        self.last_time: float | None = None
        """The latest time seen so far (timestamps and ends): where an end-stamped event began."""

    def event(self, j: int, event: Any) -> None:
        where = f"{self.label}[{j}]"
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise TraceError(f"{where}: not an event (no `event` kind)", path=str(self.path))
        kind, start = event["event"], self.stamps[j]
        self._dispatch(kind, event, start, where)
        ends = [t for t in (start, self.last_time) if t is not None]
        self.last_time = max(ends) if ends else None

    def _dispatch(self, kind: str, event: dict[str, Any], start: float | None, where: str) -> None:
        if kind == "span_begin" and start is not None:
            self.open_spans[str(event.get("id"))] = start
        elif kind == "span_end" and start is not None:
            self._span_end(event, start)
        elif kind == "model":
            model = _model(event, start, self.last_time, self.refs, where, self.path)
            self.how_model.add(model.how)
            self._seen(model.draft.end)
            self.step = StepDraft(model=model.draft)
            self.draft.steps.append(self.step)
        elif kind == "tool":
            if self.step is None:
                self.step = StepDraft()
                self.draft.steps.append(self.step)
            tool, how = _tool(event, start, self.last_time, self.refs, where, self.path)
            self.how_tool.add(how)
            self._seen(tool.end)
            self.step.tools.append(tool)
        elif kind == "sandbox" and self.step is not None:
            end = event.get("completed")
            self.step.sandbox.append(
                SandboxDraft(
                    op=as_str(event.get("action")) or "sandbox",
                    start=start,
                    end=parse_time(end, f"{where}.completed", self.path) if end else None,
                    detail=as_str(event.get("cmd")) or as_str(event.get("file")) or "",
                )
            )

    def _seen(self, end: float | None) -> None:
        if end is not None and (self.last_time is None or end > self.last_time):
            self.last_time = end

    def _span_end(self, event: dict[str, Any], end: float) -> None:
        span_id = str(event.get("id"))
        began = self.open_spans.pop(span_id, None)
        first = self.step is None and self.draft.sandbox_start_s is None
        if first and began is not None and self.span_names.get(span_id) == "init":
            self.draft.sandbox_start_s = end - began
            self.draft.sandbox_start_how = "Inspect's `init` span (sample and sandbox setup)"


class _Model:
    """A model draft and how its time was obtained."""

    def __init__(self, draft: ModelDraft, how: str) -> None:
        self.draft, self.how = draft, how


def _model(
    event: dict[str, Any],
    start: float | None,
    previous: float | None,
    refs: Refs,
    where: str,
    path: Path,
) -> _Model:
    model = _model_draft(event, start, refs)
    output = obj(event.get("output"))
    completed = event.get("completed")
    took, working = as_float(output.get("time")), as_float(event.get("working_time"))
    if completed and start is not None:
        model.end = parse_time(completed, f"{where}.completed", path)
        model.duration_measured = True
        if working is not None:
            model.sent = model.end - working
            model.estimated["sent"] = (
                "completed minus working_time (Inspect's working time excludes waits for "
                "rate limits and connection slots)"
            )
        return _Model(model, "measured: model event timestamp -> completed")
    if took is not None and start is not None:
        model.end = start + took
        model.duration_measured = True
        model.estimated["end"] = "timestamp plus output.time"
        return _Model(model, "measured: output.time (placed from the event timestamp)")
    model.start, model.end = previous, start
    if start is None or previous is None:
        return _Model(model, "")
    model.estimated["start"] = _END_STAMPED
    return _Model(model, "estimated: previous event -> model event timestamp (its end)")


def _model_draft(event: dict[str, Any], start: float | None, refs: Refs) -> ModelDraft:
    output = obj(event.get("output"))
    usage = obj(output.get("usage"))
    choices = output.get("choices")
    first = obj(choices[0]) if isinstance(choices, list) and choices else {}
    name = as_str(event.get("model")) or as_str(output.get("model")) or ""
    prompt = as_int(usage.get("input_tokens"))
    cache_read = as_int(usage.get("input_tokens_cache_read"))
    if prompt is not None and name.startswith("anthropic/"):
        # Anthropic reports uncached input apart from cache reads and writes
        prompt += (cache_read or 0) + (as_int(usage.get("input_tokens_cache_write")) or 0)
    message = first.get("message")
    return ModelDraft(
        start=start,
        prompt_tokens=prompt,
        cached_tokens=cache_read,
        completion_tokens=as_int(usage.get("output_tokens")),
        reasoning_tokens=as_int(usage.get("reasoning_tokens")),
        finish_reason=as_str(first.get("stop_reason")),
        model=as_str(output.get("model")) or name or None,
        message=refs.resolve(message) if isinstance(message, dict) else None,
    )


def _tool(
    event: dict[str, Any],
    start: float | None,
    previous: float | None,
    refs: Refs,
    where: str,
    path: Path,
) -> tuple[ToolDraft, str]:
    error = event.get("error")
    message = error.get("message") if isinstance(error, dict) else (str(error) if error else None)
    result = text_of(refs.resolve(event.get("result")))
    tool = ToolDraft(
        name=as_str(event.get("function")) or "unknown",
        start=start,
        call_id=as_str(event.get("id")),
        arguments=json.dumps(refs.resolve(event.get("arguments") or {}), ensure_ascii=False),
        ok=message is None,
        error=None if message is None else str(message),
        output=result,
        output_chars=None if result is None else len(result),
    )
    completed, working = event.get("completed"), as_float(event.get("working_time"))
    if completed and start is not None:
        tool.end = parse_time(completed, f"{where}.completed", path)
        tool.duration_measured = True
        return tool, "measured: tool event timestamp -> completed"
    if working is not None and start is not None:
        tool.end = start + working
        tool.duration_measured = True
        tool.estimated["end"] = "timestamp plus working_time"
        return tool, "measured: working_time (placed from the event timestamp)"
    tool.start, tool.end = previous, start
    if start is None or previous is None:
        return tool, ""
    tool.estimated["start"] = _END_STAMPED
    return tool, "estimated: previous event -> tool event timestamp (its end)"


def steps_from_messages(
    messages: list[Any], label: str, refs: Refs, draft: RunDraft, path: Path
) -> None:
    """The oldest logs: no events, so steps come from the conversation and times are absent.

    Raises:
        TraceError: an entry that is not a chat message (named `label[j]`).
    """
    by_id: dict[str, ToolDraft] = {}
    for j, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TraceError(f"{label}[{j}]: not a chat message", path=str(path))
        if message.get("role") == "assistant":
            step = StepDraft(model=ModelDraft(message=refs.resolve(message)))
            for call in message.get("tool_calls") or []:
                call = obj(call)
                tool = ToolDraft(
                    name=as_str(call.get("function")) or "unknown",
                    call_id=as_str(call.get("id")),
                    arguments=json.dumps(call.get("arguments") or {}),
                )
                step.tools.append(tool)
                by_id[str(call.get("id"))] = tool
            draft.steps.append(step)
        elif message.get("role") == "tool":
            result = by_id.get(str(message.get("tool_call_id")))
            if result is not None:
                result.output = text_of(refs.resolve(message.get("content")))
                result.output_chars = len(result.output or "")
                result.ok = message.get("error") is None
    draft.notes.append("sample has no events: steps from messages; no times, no usage")
    draft.absent.update({"model_call.prompt_tokens", "model_call.completion_tokens"})


def text_of(value: Any) -> str | None:
    """Inspect content (a string, or a list of content parts) as text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, dict):
                inner = item.get("text", item.get("content"))
                parts.append(text_of(inner) or "")
            else:
                parts.append(str(item))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False)
