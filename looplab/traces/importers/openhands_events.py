"""OpenHands V0 events -> steps: model calls from agent actions, tools from action/observation.

A model call ends at its first action's timestamp and lasts its measured
`response_latencies` entry (the start is placed by subtraction); without latencies it runs
from the previous event, an estimate. Actions of one model response (same `response_id`)
share a step. A tool call runs from its action's timestamp to its observation's
(`cause` = the action's id). An `error` observation from the agent with an unmatched
measured latency is a model call whose tool call the harness rejected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.source import (
    as_float,
    as_int,
    as_str,
    is_naive_iso,
    obj,
    parse_time,
)

__all__ = ["Latencies", "naive_offset", "read_metrics", "walk_events"]

_NOT_TOOLS = {"message", "system", "recall", "agent_state_changed", "change_agent_state"}
_NOT_MODEL = {"system", "recall", "change_agent_state"}


@dataclass
class Latencies:
    """Measured response latencies and token usages, by response id and in call order."""

    by_id: dict[str, float] = field(default_factory=dict)
    order: list[tuple[str, float]] = field(default_factory=list)
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_metrics(metrics: Any) -> Latencies:
    """`metrics.response_latencies` and `metrics.token_usages` of an eval instance."""
    result = Latencies()
    if not isinstance(metrics, dict):
        return result
    for item in _list(metrics.get("response_latencies")):
        latency = as_float(item.get("latency")) if isinstance(item, dict) else None
        if latency is not None:
            rid = as_str(item.get("response_id")) or ""
            result.order.append((rid, latency))
            if rid:
                result.by_id[rid] = latency
    for item in _list(metrics.get("token_usages")):
        usage_id = as_str(item.get("response_id")) if isinstance(item, dict) else None
        if usage_id:
            result.usage[usage_id] = item
    return result


def naive_offset(events: list[dict[str, Any]], path: Path, draft: RunDraft) -> float:
    """Seconds between naive event timestamps and UTC, from responses' `created`."""
    for event in events:
        created = as_float(_response(event).get("created"))
        stamp = event.get("timestamp")
        if created is not None and is_naive_iso(stamp):
            local = parse_time(stamp, event["_where"], path)
            offset = round((local - created) / 900.0) * 900.0
            if offset:
                draft.notes.append(
                    f"timestamps have no zone: shifted by {-offset / 3600:+.2f} h, the offset "
                    "to the responses' `created` epoch (rounded to 15 min)"
                )
            return offset
    if any(is_naive_iso(e.get("timestamp")) for e in events):
        draft.notes.append("timestamps have no zone: read as UTC (durations are unaffected)")
    return 0.0


def walk_events(
    events: list[dict[str, Any]], lat: Latencies, offset: float, draft: RunDraft, path: Path
) -> None:
    """Append the steps of `events` to `draft` and say how its times were obtained."""
    walker = _Walker(events, lat, draft)
    for event in events:
        label = event["_where"]
        stamp = event.get("timestamp")
        when = (
            None
            if stamp is None
            else parse_time(stamp, f"{label}.timestamp", path, naive_offset_s=offset)
        )
        action = as_str(event.get("action"))
        if action is not None and event.get("source") == "agent" and action not in _NOT_MODEL:
            walker.action(event, when)
        elif "observation" in event:
            walker.observation(event, when)
        if when is not None:
            walker.prev_time = when
    walker.finish()


class _Walker:
    """The state of one pass over an instance's events."""

    def __init__(self, events: list[dict[str, Any]], lat: Latencies, draft: RunDraft) -> None:
        self.lat = lat
        self.draft = draft
        self.by_action: dict[str, ToolDraft] = {}
        self.steps_by_response: dict[str, StepDraft] = {}
        self.used: set[str] = set()
        self.action_ids = {rid for e in events if (rid := as_str(_response(e).get("id")))}
        self.position = {rid: i for i, (rid, _) in enumerate(lat.order) if rid}
        self.next_pos = 0
        self.order_index = 0
        self.prev_time: float | None = None
        self.measured = 0
        self.estimated = 0

    def action(self, event: dict[str, Any], when: float | None) -> None:
        response = _response(event)
        rid = as_str(response.get("id")) or ""
        step = self.steps_by_response.get(rid) if rid else None
        if rid in self.position:
            self.next_pos = max(self.next_pos, self.position[rid] + 1)
        if step is None:
            step = StepDraft(model=self._model(event, response, rid, when))
            self.draft.steps.append(step)
            if rid:
                self.steps_by_response[rid] = step
        if event.get("action") not in _NOT_TOOLS:
            tool = _tool(event, response, when)
            step.tools.append(tool)
            self.by_action[str(event.get("id"))] = tool

    def observation(self, event: dict[str, Any], when: float | None) -> None:
        caused = self.by_action.get(str(event.get("cause")))
        if caused is not None:
            _observe(caused, event, when)
            return
        if event.get("observation") != "error" or event.get("source") != "agent":
            return
        orphan = self.lat.order[self.next_pos] if self.next_pos < len(self.lat.order) else None
        if orphan and orphan[0] not in self.action_ids and when is not None:
            self.next_pos += 1
            self.used.add(orphan[0])
            self.measured += 1
            self.draft.steps.append(StepDraft(model=_rejected(orphan, self.lat, when)))
            self.draft.notes.append(
                f"{event['_where']}: the harness rejected response {orphan[0]}'s tool call "
                f"({str(event.get('content'))[:120]}): a model call without tool calls"
            )

    def _model(
        self, event: dict[str, Any], response: dict[str, Any], rid: str, when: float | None
    ) -> ModelDraft:
        latency = self.lat.by_id.get(rid) if rid else None
        no_ids = latency is None and not rid and not self.lat.by_id
        if no_ids and self.order_index < len(self.lat.order):  # match in call order
            latency = self.lat.order[self.order_index][1]
            self.order_index += 1
        if rid:
            self.used.add(rid)
        model = _model_draft(event, response, self.lat.usage.get(rid) or {}, rid, when)
        if when is not None and latency is not None:
            model.start = when - latency
            model.estimated["start"] = "action timestamp minus the measured response latency"
            model.duration_measured = True
            self.measured += 1
            return model
        if when is not None and self.prev_time is not None:
            model.start = self.prev_time
            model.estimated["start"] = "the previous event's timestamp (the request follows it)"
        self.estimated += 1
        return model

    def finish(self) -> None:
        draft, lat = self.draft, self.lat
        for tool in self.by_action.values():
            if tool.end is None and tool.start is not None and tool.name in {"finish", "think"}:
                tool.end = tool.start
                tool.estimated["end"] = f"`{tool.name}` has no observation: taken as instant"
        unmatched = [rid for rid, _ in lat.order if rid and rid not in self.used]
        if unmatched:
            draft.notes.append(
                f"{len(unmatched)} response latencies match no action (rejected or non-tool "
                "responses): not imported as model calls"
            )
        draft.model_timing = (
            f"measured: metrics.response_latencies ({self.measured} calls), placed to end at "
            f"the action's timestamp; {self.estimated} estimated from the previous event"
            if self.measured
            else "estimated: previous event timestamp -> action timestamp"
        )
        draft.tool_timing = "measured: action timestamp -> observation timestamp (`cause`)"
        draft.absent.update({"model_call.sent", "model_call.first_token", "model_call.last_token"})
        if not lat.usage:
            draft.notes.append("metrics.token_usages absent: tokens from each model_response.usage")


def _response(event: dict[str, Any]) -> dict[str, Any]:
    return obj(obj(event.get("tool_call_metadata")).get("model_response"))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _first_choice(response: dict[str, Any]) -> dict[str, Any]:
    choices = _list(response.get("choices"))
    return obj(choices[0]) if choices else {}


def _model_draft(
    event: dict[str, Any],
    response: dict[str, Any],
    usage: dict[str, Any],
    rid: str,
    when: float | None,
) -> ModelDraft:
    raw = obj(response.get("usage"))
    first = _first_choice(response)
    message = first.get("message") if isinstance(first.get("message"), dict) else None
    details = obj(raw.get("prompt_tokens_details"))
    thought = obj(event.get("args")).get("thought")
    return ModelDraft(
        end=when,
        prompt_tokens=as_int(usage.get("prompt_tokens", raw.get("prompt_tokens"))),
        cached_tokens=as_int(usage.get("cache_read_tokens", details.get("cached_tokens"))),
        completion_tokens=as_int(usage.get("completion_tokens", raw.get("completion_tokens"))),
        finish_reason=as_str(first.get("finish_reason")),
        model=as_str(response.get("model")),
        request_id=rid or None,
        message=message
        or {"role": "assistant", "content": as_str(thought) or as_str(event.get("message"))},
    )


def _rejected(orphan: tuple[str, float], lat: Latencies, when: float) -> ModelDraft:
    """A measured response whose tool call the harness rejected (an `error` observation)."""
    rid, latency = orphan
    usage = lat.usage.get(rid) or {}
    return ModelDraft(
        start=when - latency,
        end=when,
        request_id=rid or None,
        prompt_tokens=as_int(usage.get("prompt_tokens")),
        completion_tokens=as_int(usage.get("completion_tokens")),
        cached_tokens=as_int(usage.get("cache_read_tokens")),
        duration_measured=True,
        estimated={
            "start": "error observation timestamp minus the measured response latency",
            "end": "the error observation's timestamp (the response itself is not recorded)",
        },
    )


def _tool(event: dict[str, Any], response: dict[str, Any], when: float | None) -> ToolDraft:
    meta = obj(event.get("tool_call_metadata"))
    call_id = as_str(meta.get("tool_call_id"))
    arguments: Any = None
    for choice in _list(response.get("choices")):
        for call in _list(obj(obj(choice).get("message")).get("tool_calls")):
            if isinstance(call, dict) and call_id is not None and call.get("id") == call_id:
                arguments = obj(call.get("function")).get("arguments")
    if arguments is None:
        arguments = {k: v for k, v in obj(event.get("args")).items() if k != "thought"}
    return ToolDraft(
        name=as_str(meta.get("function_name")) or as_str(event.get("action")) or "unknown",
        start=when,
        call_id=call_id,
        arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
    )


def _observe(tool: ToolDraft, event: dict[str, Any], when: float | None) -> None:
    extras = obj(event.get("extras"))
    code = as_int(obj(extras.get("metadata")).get("exit_code", extras.get("exit_code")))
    content = event.get("content")
    output = content if isinstance(content, str) else json.dumps(content)
    tool.end = when
    tool.output = output
    tool.output_chars = len(output)
    tool.exit_code = code if code is None or code >= 0 else None
    is_error = event.get("observation") == "error"
    tool.ok = (not is_error) if code is None or code < 0 else code == 0
    tool.error = output if is_error else None
