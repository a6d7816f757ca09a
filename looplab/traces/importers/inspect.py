"""Inspect AI eval logs (`.json` and `.eval`) -> looplab traces, one run per sample.

Variants accepted (learned from UKGovernmentBEIS/inspect_ai: `log/_log.py`,
`log/_transcript.py`, `log/_recorders/eval.py`, its test logs):

- `.json`: one `EvalLog` object (`version`, `status`, `eval`, `plan`, `results`, `stats`,
  `samples[]`).
- `.eval`: a zip with `header.json` (the log without samples; `_journal/start.json`
  while the eval is still running) and one `samples/<id>_epoch_<n>.json` per sample.
- sample events in `sample.events` (0.3.46 and later, long strings moved to
  `sample.attachments` as `attachment://<hash>`) or in `sample.transcript.events` (older).
- model events with `completed` and `working_time` (0.3.5x and later), with only
  `output.time` (older), or with neither (then the next event's time ends them, estimated).
- tool events with `completed` / `working_time`, or without (next event's time).
- samples without events (the oldest logs): steps from `messages`, times absent.

Timing: model and tool events carry their start (`timestamp`) and end (`completed`):
measured. `working_time` excludes Inspect's waits for rate limits and connection slots, so
`sent` = `completed - working_time` (estimated) and `sent - start` is client queueing.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.importers._common import (
    ImportedRun,
    ModelDraft,
    RunDraft,
    SandboxDraft,
    StepDraft,
    ToolDraft,
    as_int,
    build_run,
    load_json,
    obj,
    parse_time,
    safe_run_id,
)

__all__ = ["import_inspect", "looks_like_inspect"]

FORMAT = "inspect"
_ATTACHMENT = "attachment://"


def looks_like_inspect(data: Any) -> bool:
    """True for a parsed JSON value shaped like an Inspect `EvalLog`."""
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "version" in data


def import_inspect(path: Path) -> list[ImportedRun]:
    """Import an Inspect eval log.

    Args:
        path: a `.json` EvalLog or a `.eval` zip.

    Returns:
        One run per sample (and epoch).

    Raises:
        TraceError: not an Inspect log, a corrupt zip, or a malformed event (named
            `samples[i].events[j]`).
    """
    header, samples = _read(path)
    if not looks_like_inspect(header):
        raise TraceError(
            "not an Inspect eval log: expected an object with `version` and `eval`",
            path=str(path),
        )
    if not samples:
        raise TraceError(
            "the log has no samples (was it written with log_samples=False?)", path=str(path)
        )
    return [build_run(_sample(header, label, sample, path)) for label, sample in samples]


def _read(path: Path) -> tuple[Any, list[tuple[str, Any]]]:
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
                head = "header.json" if "header.json" in names else "_journal/start.json"
                if head not in names:
                    raise TraceError(
                        "zip has neither header.json nor _journal/start.json: not an "
                        "Inspect .eval log",
                        path=str(path),
                    )
                header = _zip_json(archive, head, path)
                samples = [
                    (name, _zip_json(archive, name, path))
                    for name in sorted(n for n in names if n.startswith("samples/"))
                    if name.endswith(".json")
                ]
        except zipfile.BadZipFile as exc:
            raise TraceError(f"corrupt .eval zip: {exc}", path=str(path)) from None
        return header, samples
    data = load_json(path)
    raw = data.get("samples") if isinstance(data, dict) else None
    samples = [(f"samples[{i}]", s) for i, s in enumerate(raw or [])]
    return data, samples


def _zip_json(archive: zipfile.ZipFile, name: str, path: Path) -> Any:
    try:
        return json.loads(archive.read(name).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise TraceError(f"{name}: not valid JSON ({exc})", path=str(path)) from None


class _Attachments:
    def __init__(self, table: Any) -> None:
        self.table = table if isinstance(table, dict) else {}

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str) and value.startswith(_ATTACHMENT):
            return self.table.get(value[len(_ATTACHMENT) :], value)
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value


def _sample(header: dict[str, Any], label: str, sample: Any, path: Path) -> RunDraft:
    if not isinstance(sample, dict):
        raise TraceError(f"{label}: not a sample object", path=str(path))
    spec = header["eval"]
    att = _Attachments(sample.get("attachments"))
    epoch = sample.get("epoch", 1)
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(spec.get("task"), sample.get("id"), f"epoch{epoch}"),
        source_path=path,
        task=f"{spec.get('task')}/{sample.get('id')}",
        agent=", ".join(
            str(step.get("solver"))
            for step in (header.get("plan") or {}).get("steps", [])
            if isinstance(step, dict)
        )
        or None,
        model=spec.get("model"),
        prompt=_text(att.resolve(sample.get("input"))),
        sandbox=obj(spec.get("sandbox")),
    )
    events = sample.get("events")
    where = "events"
    if not isinstance(events, list):
        transcript = sample.get("transcript")
        events = transcript.get("events") if isinstance(transcript, dict) else None
        where = "transcript.events"
    if isinstance(events, list) and events:
        _walk(events, f"{label}.{where}", att, draft, path)
    else:
        _messages(sample.get("messages") or [], f"{label}.messages", att, draft, path)
    _ending(sample, att, draft)
    return draft


def _walk(events: list[Any], label: str, att: _Attachments, draft: RunDraft, path: Path) -> None:
    step: StepDraft | None = None
    open_spans: dict[str, float] = {}
    how_model: set[str] = set()
    how_tool: set[str] = set()
    stamps = [
        parse_time(e["timestamp"], f"{label}[{j}].timestamp", path)
        if isinstance(e, dict) and "timestamp" in e
        else None
        for j, e in enumerate(events)
    ]
    for j, event in enumerate(events):
        where = f"{label}[{j}]"
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise TraceError(f"{where}: not an event (no `event` kind)", path=str(path))
        kind = event["event"]
        start = stamps[j]
        following = next((t for t in stamps[j + 1 :] if t is not None), None)
        if kind == "span_begin" and start is not None:
            open_spans[str(event.get("id"))] = start
        elif kind == "span_end" and start is not None:
            began = open_spans.pop(str(event.get("id")), None)
            is_init = began is not None and _span_name(events, event.get("id")) == "init"
            if is_init and began is not None and draft.sandbox_start_s is None and step is None:
                draft.sandbox_start_s = start - began
                draft.sandbox_start_how = "Inspect's `init` span (sample and sandbox setup)"
        elif kind == "model":
            model = _model(event, start, following, att, where, how_model, path)
            step = StepDraft(model=model)
            draft.steps.append(step)
        elif kind == "tool":
            if step is None:
                step = StepDraft()
                draft.steps.append(step)
            step.tools.append(_tool(event, start, following, att, how_tool, where, path))
        elif kind == "sandbox" and step is not None:
            end = event.get("completed")
            step.sandbox.append(
                SandboxDraft(
                    op=str(event.get("action") or "sandbox"),
                    start=start,
                    end=parse_time(end, f"{where}.completed", path) if end else None,
                    detail=str(event.get("cmd") or event.get("file") or ""),
                )
            )
    draft.model_timing = "; ".join(sorted(how_model)) or "absent"
    draft.tool_timing = "; ".join(sorted(how_tool)) or "absent"
    if not any(s.model and s.model.sent is not None for s in draft.steps):
        draft.absent.add("model_call.sent")
    draft.absent.update({"model_call.first_token", "model_call.last_token"})


def _span_name(events: list[Any], span_id: Any) -> str | None:
    for event in events:
        if (
            isinstance(event, dict)
            and event.get("event") == "span_begin"
            and event.get("id") == span_id
        ):
            return str(event.get("name"))
    return None


def _model(
    event: dict[str, Any],
    start: float | None,
    following: float | None,
    att: _Attachments,
    where: str,
    how: set[str],
    path: Path,
) -> ModelDraft:
    output = obj(event.get("output"))
    usage = obj(output.get("usage"))
    choices = output.get("choices") or [{}]
    first = choices[0] if isinstance(choices[0], dict) else {}
    name = str(event.get("model") or output.get("model") or "")
    prompt = as_int(usage.get("input_tokens"))
    cache_read = as_int(usage.get("input_tokens_cache_read"))
    if prompt is not None and name.startswith("anthropic/"):
        # Anthropic reports uncached input apart from cache reads and writes
        prompt += (cache_read or 0) + (as_int(usage.get("input_tokens_cache_write")) or 0)
    model = ModelDraft(
        start=start,
        prompt_tokens=prompt,
        cached_tokens=cache_read,
        completion_tokens=as_int(usage.get("output_tokens")),
        reasoning_tokens=as_int(usage.get("reasoning_tokens")),
        finish_reason=first.get("stop_reason"),
        model=output.get("model") or name or None,
        message=att.resolve(first.get("message"))
        if isinstance(first.get("message"), dict)
        else None,
    )
    completed, working, took = event.get("completed"), event.get("working_time"), output.get("time")
    if completed and start is not None:
        model.end = parse_time(completed, f"{where}.completed", path)
        model.duration_measured = True
        how.add("measured: model event timestamp -> completed")
        if isinstance(working, int | float):
            model.sent = model.end - float(working)
            model.estimated["sent"] = (
                "completed minus working_time (Inspect's working time excludes waits for "
                "rate limits and connection slots)"
            )
    elif isinstance(took, int | float) and start is not None:
        model.end = start + float(took)
        model.duration_measured = True
        model.estimated["end"] = "timestamp plus output.time"
        how.add("measured: output.time (placed from the event timestamp)")
    elif following is not None:
        model.end = following
        model.estimated["end"] = "the next event's timestamp"
        how.add("estimated: model event timestamp -> next event timestamp")
    return model


def _tool(
    event: dict[str, Any],
    start: float | None,
    following: float | None,
    att: _Attachments,
    how: set[str],
    where: str,
    path: Path,
) -> ToolDraft:
    error = event.get("error")
    message = error.get("message") if isinstance(error, dict) else (str(error) if error else None)
    result = _text(att.resolve(event.get("result")))
    tool = ToolDraft(
        name=str(event.get("function") or "unknown"),
        start=start,
        call_id=event.get("id"),
        arguments=json.dumps(att.resolve(event.get("arguments") or {}), ensure_ascii=False),
        ok=message is None,
        error=message,
        output=result,
        output_chars=None if result is None else len(result),
    )
    completed, working = event.get("completed"), event.get("working_time")
    if completed and start is not None:
        tool.end = parse_time(completed, f"{where}.completed", path)
        tool.duration_measured = True
        how.add("measured: tool event timestamp -> completed")
    elif isinstance(working, int | float) and start is not None:
        tool.end = start + float(working)
        tool.duration_measured = True
        tool.estimated["end"] = "timestamp plus working_time"
        how.add("measured: working_time (placed from the event timestamp)")
    elif following is not None:
        tool.end = following
        tool.estimated["end"] = "the next event's timestamp"
        how.add("estimated: tool event timestamp -> next event timestamp")
    return tool


def _messages(
    messages: list[Any], label: str, att: _Attachments, draft: RunDraft, path: Path
) -> None:
    """The oldest logs: no events, so steps come from the conversation and times are absent."""
    by_id: dict[str, ToolDraft] = {}
    for j, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TraceError(f"{label}[{j}]: not a chat message", path=str(path))
        if message.get("role") == "assistant":
            step = StepDraft(model=ModelDraft(message=att.resolve(message)))
            for call in message.get("tool_calls") or []:
                tool = ToolDraft(
                    name=str(call.get("function")),
                    call_id=call.get("id"),
                    arguments=json.dumps(call.get("arguments") or {}),
                )
                step.tools.append(tool)
                by_id[str(call.get("id"))] = tool
            draft.steps.append(step)
        elif message.get("role") == "tool":
            result = by_id.get(str(message.get("tool_call_id")))
            if result is not None:
                result.output = _text(att.resolve(message.get("content")))
                result.output_chars = len(result.output or "")
                result.ok = message.get("error") is None
    draft.notes.append("sample has no events: steps from messages; no times, no usage")
    draft.absent.update({"model_call.prompt_tokens", "model_call.completion_tokens"})


def _ending(sample: dict[str, Any], att: _Attachments, draft: RunDraft) -> None:
    error = sample.get("error")
    limit = sample.get("limit")
    if error:
        draft.end_reason = "error"
        draft.error = str(error.get("message") if isinstance(error, dict) else error)
    elif isinstance(limit, dict) and limit.get("type"):
        draft.end_reason = f"{limit['type']}_limit"
    else:
        draft.end_reason = "finish"
    scores = obj(sample.get("scores"))
    if len(scores) == 1:
        name, score = next(iter(scores.items()))
        value = score.get("value") if isinstance(score, dict) else None
        verdict: dict[Any, bool] = {"C": True, "I": False, 1: True, 0: False}
        if isinstance(value, str | int | float | bool) and value in verdict:
            draft.success = verdict[value]
            draft.notes.append(f"success from the `{name}` score ({value!r})")
        explanation = score.get("explanation") if isinstance(score, dict) else None
        draft.check_output = _text(att.resolve(explanation))
        if draft.check_output:
            draft.check_output = draft.check_output[:2000]
    elif scores:
        draft.notes.append(f"{len(scores)} scores ({', '.join(scores)}): success left unknown")


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, dict):
                inner = item.get("text", item.get("content"))
                parts.append(_text(inner) or "")
            else:
                parts.append(str(item))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False)
