"""OpenHands runs -> looplab traces.

Variants accepted (learned from All-Hands-AI/OpenHands: `evaluation/utils/shared.py`,
`openhands/events/serialization`, the frontend's event types):

- eval output JSONL (`output.jsonl`): one instance per line, `instance_id`, `instruction`,
  `metadata` (agent_class, llm_config.model), `history`, `metrics` (`response_latencies`,
  `token_usages`, both keyed by `response_id`), `error`, `test_result`.
  `history` is a list of serialized events (0.9 and later) or, in older releases, a list
  of `[action, observation]` pairs (`compatibility_for_eval_history_pairs`).
- a trajectory JSON: a plain list of serialized events (the GUI's and
  `save_trajectory_path`'s export), or an object with `history`/`trajectory`.

Events are V0 `event_to_dict` output: `id`, ISO `timestamp` (no zone), `source`, then
`action` + `args` or `observation` + `content` + `extras` + `cause` (the action's id);
function-calling agents add `tool_call_metadata` (function name, tool call id, the raw
`model_response` with its `usage` and `created`).

Timing: a model call ends at its first action's timestamp and lasts its measured
`response_latencies` entry (the start is placed by subtraction); without latencies it runs
from the previous event, an estimate. A tool call runs from its action's timestamp to its
observation's (both recorded). Timestamps carry no zone: the offset is recovered from the
responses' `created` epoch where present, else they are read as UTC.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.importers._common import (
    ImportedRun,
    ModelDraft,
    RunDraft,
    StepDraft,
    ToolDraft,
    as_int,
    build_run,
    is_naive_iso,
    obj,
    parse_time,
    read_text,
    safe_run_id,
)

__all__ = ["import_openhands", "looks_like_openhands"]

FORMAT = "openhands"
_NOT_TOOLS = {"message", "system", "recall", "agent_state_changed", "change_agent_state"}


def looks_like_openhands(data: Any) -> bool:
    """True for a parsed JSON value shaped like an OpenHands instance or event list."""
    if isinstance(data, dict):
        return isinstance(data.get("history"), list) and (
            "instance_id" in data or "metrics" in data or "instruction" in data
        )
    if isinstance(data, list) and data and isinstance(data[0], dict):
        first = data[0]
        return "timestamp" in first and ("action" in first or "observation" in first)
    return False


def import_openhands(path: Path) -> list[ImportedRun]:
    """Import an OpenHands eval output JSONL or a trajectory JSON.

    Args:
        path: `output.jsonl` (one instance per line) or a `.json` event list.

    Returns:
        One run per instance (per line) or one run for a trajectory.

    Raises:
        TraceError: not OpenHands output, or a malformed record (named `line N: ...` or
            `history[i]: ...`).
    """
    text = read_text(path)
    records: list[tuple[str, Any]] = []
    try:
        records.append(("", json.loads(text)))
    except json.JSONDecodeError:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"line {number}: ", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise TraceError(
                    f"line {number}: not valid JSON ({exc.msg})", path=str(path)
                ) from None
    runs: list[ImportedRun] = []
    for where, record in records:
        if isinstance(record, list):
            record = {"history": record}
        elif isinstance(record, dict) and "history" not in record and "trajectory" in record:
            record = {**record, "history": record["trajectory"]}
        if not looks_like_openhands(record) and not (
            isinstance(record, dict) and isinstance(record.get("history"), list)
        ):
            raise TraceError(
                f"{where}not an OpenHands instance: expected an object with `history` "
                "(and `instance_id`, `metrics`) or a list of events",
                path=str(path),
            )
        runs.append(build_run(_instance(record, where, path, len(runs))))
    if not runs:
        raise TraceError("no OpenHands instances in the file", path=str(path))
    return runs


@dataclass
class _Latencies:
    """Measured response latencies and token usages, by response id and in call order."""

    by_id: dict[str, float] = field(default_factory=dict)
    order: list[tuple[str, float]] = field(default_factory=list)
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)


def _instance(record: dict[str, Any], where: str, path: Path, index: int) -> RunDraft:
    metadata = obj(record.get("metadata"))
    llm = obj(metadata.get("llm_config"))
    instance = record.get("instance_id")
    stem = path.name.split(".")[0]
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(instance or (f"{stem}-{index}" if index else stem)),
        source_path=path,
        task=str(instance) if instance is not None else None,
        agent=metadata.get("agent_class"),
        model=llm.get("model"),
        prompt=record.get("instruction") if isinstance(record.get("instruction"), str) else None,
    )
    events = _flatten(record["history"], where, path)
    latencies = _metrics(record.get("metrics"))
    offset = _naive_offset(events, path, draft)
    _walk(events, latencies, offset, draft, where, path)
    error = record.get("error")
    finished = any(e.get("action") == "finish" for e in events)
    if error:
        draft.error = str(error)
        draft.end_reason = "step_limit" if "maximum iteration" in str(error) else "error"
    elif finished:
        draft.end_reason = "finish"
    elif "error" in record or "test_result" in record:
        draft.end_reason = "stopped"
    report = (
        (record.get("test_result") or {}) if isinstance(record.get("test_result"), dict) else {}
    )
    resolved = (
        (report.get("report") or {}).get("resolved")
        if isinstance(report.get("report"), dict)
        else None
    )
    draft.success = resolved if isinstance(resolved, bool) else None
    if draft.success is None and report.get("git_patch") is not None:
        draft.notes.append("test_result holds the patch only: success was not checked")
    return draft


def _flatten(history: list[Any], where: str, path: Path) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    pairs = bool(history) and all(isinstance(h, list) for h in history)
    for i, item in enumerate(history):
        parts = item if pairs else [item]
        for k, event in enumerate(parts):
            label = f"{where}history[{i}]" + (f"[{k}]" if pairs else "")
            if not isinstance(event, dict):
                raise TraceError(f"{label}: not an event object", path=str(path))
            if "kind" in event and "action" not in event and "observation" not in event:
                raise TraceError(
                    f"{label}: an OpenHands V1 SDK event (kind={event['kind']!r}); only V0 "
                    "events (`action`/`observation`) are supported",
                    path=str(path),
                )
            if not event or (pairs and event.get("action") == "null"):
                continue
            events.append({**event, "_where": label})
    return events


def _metrics(metrics: Any) -> _Latencies:
    result = _Latencies()
    if not isinstance(metrics, dict):
        return result
    for item in metrics.get("response_latencies") or []:
        if isinstance(item, dict) and isinstance(item.get("latency"), int | float):
            rid = str(item.get("response_id") or "")
            result.order.append((rid, float(item["latency"])))
            if rid:
                result.by_id[rid] = float(item["latency"])
    for item in metrics.get("token_usages") or []:
        if isinstance(item, dict) and item.get("response_id"):
            result.usage[str(item["response_id"])] = item
    return result


def _naive_offset(events: list[dict[str, Any]], path: Path, draft: RunDraft) -> float:
    """Seconds between naive event timestamps and UTC, from responses' `created`."""
    for event in events:
        response = _response(event)
        created = response.get("created") if response else None
        stamp = event.get("timestamp")
        if isinstance(created, int | float) and is_naive_iso(stamp):
            local = parse_time(stamp, event["_where"], path)
            offset = round((local - float(created)) / 900.0) * 900.0
            if offset:
                draft.notes.append(
                    f"timestamps have no zone: shifted by {-offset / 3600:+.2f} h, the offset "
                    "to the responses' `created` epoch (rounded to 15 min)"
                )
            return offset
    if any(is_naive_iso(e.get("timestamp")) for e in events):
        draft.notes.append("timestamps have no zone: read as UTC (durations are unaffected)")
    return 0.0


def _response(event: dict[str, Any]) -> dict[str, Any]:
    meta = event.get("tool_call_metadata")
    response = meta.get("model_response") if isinstance(meta, dict) else None
    return response if isinstance(response, dict) else {}


def _walk(
    events: list[dict[str, Any]],
    lat: _Latencies,
    offset: float,
    draft: RunDraft,
    where: str,
    path: Path,
) -> None:
    by_action: dict[Any, ToolDraft] = {}
    steps_by_response: dict[str, StepDraft] = {}
    used: set[str] = set()
    action_ids = {str(_response(e).get("id")) for e in events if _response(e).get("id")}
    position = {rid: i for i, (rid, _) in enumerate(lat.order) if rid}
    next_pos = 0
    order_index = 0
    prev_time: float | None = None
    measured = estimated_calls = 0
    for event in events:
        label = event["_where"]
        when = (
            parse_time(event["timestamp"], f"{label}.timestamp", path, naive_offset_s=offset)
            if "timestamp" in event
            else None
        )
        if (
            "action" in event
            and event.get("source") == "agent"
            and event["action"]
            not in {
                "system",
                "recall",
                "change_agent_state",
            }
        ):
            response = _response(event)
            rid = str(response.get("id") or "")
            step = steps_by_response.get(rid) if rid else None
            if rid in position:
                next_pos = max(next_pos, position[rid] + 1)
            if step is None:
                model, order_index, was_measured = _model(
                    event, response, rid, lat, used, order_index, when, prev_time
                )
                measured += was_measured
                estimated_calls += not was_measured
                step = StepDraft(model=model)
                draft.steps.append(step)
                if rid:
                    steps_by_response[rid] = step
            if event["action"] not in _NOT_TOOLS:
                tool = _tool(event, response, when)
                step.tools.append(tool)
                by_action[event.get("id")] = tool
        elif "observation" in event:
            caused = by_action.get(event.get("cause"))
            if caused is not None:
                _observe(caused, event, when)
            elif event.get("observation") == "error" and event.get("source") == "agent":
                orphan = lat.order[next_pos] if next_pos < len(lat.order) else None
                if orphan and orphan[0] not in action_ids and when is not None:
                    next_pos += 1
                    used.add(orphan[0])
                    measured += 1
                    draft.steps.append(StepDraft(model=_rejected(orphan, lat, when)))
                    draft.notes.append(
                        f"{label}: the harness rejected response {orphan[0]}'s tool call "
                        f"({str(event.get('content'))[:120]}): a model call without tool calls"
                    )
        if when is not None:
            prev_time = when
    for tool in by_action.values():
        if tool.end is None and tool.start is not None and tool.name in {"finish", "think"}:
            tool.end = tool.start
            tool.estimated["end"] = f"`{tool.name}` has no observation: taken as instant"
    unmatched = [rid for rid, _ in lat.order if rid and rid not in used]
    if unmatched:
        draft.notes.append(
            f"{len(unmatched)} response latencies match no action (rejected or non-tool "
            "responses): not imported as model calls"
        )
    draft.model_timing = (
        f"measured: metrics.response_latencies ({measured} calls), placed to end at the "
        f"action's timestamp; {estimated_calls} estimated from the previous event"
        if measured
        else "estimated: previous event timestamp -> action timestamp"
    )
    draft.tool_timing = "measured: action timestamp -> observation timestamp (`cause`)"
    draft.absent.update({"model_call.sent", "model_call.first_token", "model_call.last_token"})
    if not lat.usage:
        draft.notes.append("metrics.token_usages absent: tokens from each model_response.usage")


def _model(
    event: dict[str, Any],
    response: dict[str, Any],
    rid: str,
    lat: _Latencies,
    used: set[str],
    order_index: int,
    when: float | None,
    prev_time: float | None,
) -> tuple[ModelDraft, int, bool]:
    latency = lat.by_id.get(rid) if rid else None
    if latency is None and not rid and not lat.by_id and order_index < len(lat.order):
        latency = lat.order[order_index][1]  # no ids at all: match in call order
        order_index += 1
    if rid:
        used.add(rid)
    usage = lat.usage.get(rid) or {}
    raw = obj(response.get("usage"))
    choices = response.get("choices") or [{}]
    first = (
        choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    )
    message = first.get("message") if isinstance(first.get("message"), dict) else None
    details = obj(raw.get("prompt_tokens_details"))
    model = ModelDraft(
        end=when,
        prompt_tokens=as_int(usage.get("prompt_tokens", raw.get("prompt_tokens"))),
        cached_tokens=as_int(usage.get("cache_read_tokens", details.get("cached_tokens"))),
        completion_tokens=as_int(usage.get("completion_tokens", raw.get("completion_tokens"))),
        finish_reason=first.get("finish_reason"),
        model=response.get("model"),
        request_id=rid or None,
        message=message
        or {
            "role": "assistant",
            "content": (event.get("args") or {}).get("thought") or event.get("message"),
        },
    )
    if when is not None and latency is not None:
        model.start = when - latency
        model.estimated["start"] = "action timestamp minus the measured response latency"
        model.duration_measured = True
        return model, order_index, True
    if when is not None and prev_time is not None:
        model.start = prev_time
        model.estimated["start"] = "the previous event's timestamp (the request follows it)"
    return model, order_index, False


def _rejected(orphan: tuple[str, float], lat: _Latencies, when: float) -> ModelDraft:
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
    call_id = meta.get("tool_call_id")
    arguments = None
    for choice in response.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        for call in (message or {}).get("tool_calls") or []:
            if isinstance(call, dict) and call.get("id") == call_id:
                arguments = (call.get("function") or {}).get("arguments")
    if arguments is None:
        args = {k: v for k, v in (event.get("args") or {}).items() if k != "thought"}
        arguments = json.dumps(args, ensure_ascii=False)
    return ToolDraft(
        name=str(meta.get("function_name") or event.get("action")),
        start=when,
        call_id=call_id,
        arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
    )


def _observe(tool: ToolDraft, event: dict[str, Any], when: float | None) -> None:
    extras = obj(event.get("extras"))
    meta = obj(extras.get("metadata"))
    code = as_int(meta.get("exit_code", extras.get("exit_code")))
    content = event.get("content")
    output = content if isinstance(content, str) else json.dumps(content)
    tool.end = when
    tool.output = output
    tool.output_chars = len(output)
    tool.exit_code = code if code is None or code >= 0 else None
    is_error = event.get("observation") == "error"
    tool.ok = (not is_error) if code is None or code < 0 else code == 0
    tool.error = output if is_error else None
