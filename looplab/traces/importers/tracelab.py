"""TraceLab round traces (`round_trace.jsonl`) -> looplab traces, one run per session.

TraceLab (uw-syfi/TraceLab) turns real Claude Code and Codex sessions into one JSON line
per LLM round: `provider`, `session_id`, `round_index`, `round_id`, `model`, token
accounting (`input_tokens_total`, `prefix_tokens` = the cached prefix,
`newly_append_tokens`, `output_tokens`, `reasoning_output_tokens`, Claude's cache
fields), `timing_events[]` (the round's inputs: `user_message` / `tool_result`; its
outputs: `reasoning`, `text`, `tool_call`, `usage_report`, each with a timestamp) and
`tools[]` (`emitted_at`, `result_at`, `tool_wall_latency_ms`, `is_error`, sizes).
Its sanitizer removed all content: prompts, messages, tool arguments and results are
absent (their sizes are kept). Rows lacking the Claude-only fields (Codex rows) and rows
with or without `turn_id` / `project` are all accepted, as JSON lines or in TraceLab's
readable rendering (`round_trace.expanded.json`: `===== round 0001 | ... =====` blocks).

Timing (`round_step`, also used for raw sessions by `sessions.py`): the request is taken
to leave at the round's last input event (estimated) and the model call to end at its
last output event (estimated: the harness logs content blocks as they complete); the
first output event bounds the first token from above. Tool times are TraceLab's measured
wall latencies (`emitted_at` -> `result_at`). Rounds that start with a user message follow
human think time, which belongs to no step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import (
    as_float,
    as_int,
    as_str,
    json_records,
    parse_time,
    safe_run_id,
)

__all__ = [
    "TraceLabImporter",
    "add_rounds",
    "import_tracelab",
    "looks_like_tracelab",
    "round_step",
]

FORMAT = "tracelab"
_INPUTS = {"user_message", "tool_result"}
_REQUIRED = ("session_id", "round_index", "timing_events")
_PROVIDERS = {"claude": "Claude Code", "codex": "Codex"}


def looks_like_tracelab(record: Any) -> bool:
    """True for one parsed record shaped like a TraceLab round."""
    return isinstance(record, dict) and all(k in record for k in _REQUIRED)


def import_tracelab(path: Path) -> list[ImportedRun]:
    """Import a TraceLab round trace.

    Args:
        path: one round per line (or per readable block), any number of sessions.

    Returns:
        One run per session, rounds in `round_index` order.

    Raises:
        TraceError: a record that is not JSON or not a round (named `line N`).
    """
    records = json_records(path)
    if len(records) == 1 and isinstance(records[0][1], list):  # a JSON array of rounds
        records = [(f"rounds[{i}]: ", r) for i, r in enumerate(records[0][1])]
    sessions: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for where, record in records:
        if not looks_like_tracelab(record):
            missing = [k for k in _REQUIRED if not isinstance(record, dict) or k not in record]
            raise TraceError(
                f"{where or 'line 1: '}not a TraceLab round (missing {', '.join(missing)})",
                path=str(path),
            )
        session = as_str(record["session_id"]) or str(record["session_id"])
        sessions.setdefault(session, []).append((where.removesuffix(": ") or "line 1", record))
    if not sessions:
        raise TraceError("no TraceLab rounds in the file", path=str(path))
    return [build_run(_session(sid, rows, path)) for sid, rows in sessions.items()]


def _session(session_id: str, rows: list[tuple[str, dict[str, Any]]], path: Path) -> RunDraft:
    rows.sort(key=lambda item: as_int(item[1].get("round_index")) or 0)
    first = rows[0][1]
    provider = as_str(first.get("provider"))
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(session_id),
        source_path=path,
        source_key=session_id,
        task=as_str(first.get("project")) or session_id,
        agent=_PROVIDERS.get(provider or "", provider),
        model=as_str(first.get("model")),
    )
    add_rounds(draft, rows, path)
    draft.model_timing = (
        "estimated: last input event (tool result / user message) -> last output event "
        "(content blocks are logged as they complete)"
    )
    draft.tool_timing = "measured: TraceLab tool_wall_latency_ms (emitted_at -> result_at)"
    draft.notes.append("content removed by TraceLab's sanitizer: sizes kept, text absent")
    draft.absent.update(
        {
            "run_start.prompt",
            "model_call.message",
            "tool_call.arguments",
            "tool_call.output",
            "tool_call.exit_code",
        }
    )
    return draft


def add_rounds(draft: RunDraft, rows: list[tuple[str, dict[str, Any]]], path: Path) -> None:
    """Append one step per round (`(where, row)` pairs, in order) and note the user turns."""
    user_rounds = 0
    for where, row in rows:
        step, from_user = round_step(row, where, path)
        user_rounds += from_user
        draft.steps.append(step)
    turns = {turn for _, row in rows if (turn := as_str(row.get("turn_id")))}
    draft.notes.append(
        f"{user_rounds} rounds start at a user message (human think time before them is "
        "not part of any step)" + (f"; {len(turns)} user turns" if turns else "")
    )


def round_step(row: dict[str, Any], where: str, path: Path) -> tuple[StepDraft, bool]:
    """One TraceLab round as a step, and whether it starts at a user message.

    Raises:
        TraceError: `timing_events` or `tools` malformed (named `where: ...`).
    """
    events = row.get("timing_events")
    if not isinstance(events, list):
        raise TraceError(f"{where}: timing_events is not a list", path=str(path))
    inputs: list[float] = []
    outputs: list[float] = []
    from_user = False
    for k, event in enumerate(events):
        if not isinstance(event, dict) or "timestamp" not in event:
            raise TraceError(f"{where}: timing_events[{k}] has no timestamp", path=str(path))
        when = parse_time(event["timestamp"], f"{where}: timing_events[{k}].timestamp", path)
        kind = as_str(event.get("event_type"))
        if kind in _INPUTS:
            inputs.append(when)
            from_user |= kind == "user_message"
        else:
            outputs.append(when)
    step = StepDraft(model=_round_model(row, inputs, outputs))
    tools = row.get("tools")
    for k, tool in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(tool, dict):
            raise TraceError(f"{where}: tools[{k}] is not an object", path=str(path))
        step.tools.append(_tool(tool, f"{where}: tools[{k}]", path))
    return step, from_user


def _round_model(row: dict[str, Any], inputs: list[float], outputs: list[float]) -> ModelDraft:
    model = ModelDraft(
        start=max(inputs) if inputs else (min(outputs) if outputs else None),
        end=max(outputs) if outputs else None,
        first_token=min(outputs) if outputs else None,
        prompt_tokens=as_int(row.get("input_tokens_total")),
        cached_tokens=as_int(row.get("prefix_tokens")),
        completion_tokens=as_int(row.get("output_tokens")),
        reasoning_tokens=as_int(row.get("reasoning_output_tokens")),
        model=as_str(row.get("model")),
        request_id=as_str(row.get("round_id")),
    )
    model.sent = model.start
    model.last_token = model.end
    model.estimated.update(
        {
            "start": "the round's last input event (the request follows it)",
            "sent": "taken equal to start",
            "end": "the round's last output event",
            "last_token": "the round's last output event",
            "first_token": "the first output event (an upper bound: blocks are logged whole)",
        }
    )
    if not inputs:
        model.estimated["start"] = "the first output event (the round has no input event)"
    return model


def _tool(tool: dict[str, Any], where: str, path: Path) -> ToolDraft:
    emitted, result = tool.get("emitted_at"), tool.get("result_at")
    start = parse_time(emitted, f"{where}.emitted_at", path) if emitted else None
    end = parse_time(result, f"{where}.result_at", path) if result else None
    latency = as_float(tool.get("tool_wall_latency_ms"))
    is_error = tool.get("is_error")
    draft = ToolDraft(
        name=as_str(tool.get("tool_name")) or "unknown",
        start=start,
        end=end,
        call_id=as_str(tool.get("tool_call_id")),
        ok=(not is_error) if isinstance(is_error, bool) else None,
        output_chars=as_int(tool.get("result_chars")),
        duration_measured=True,
    )
    if end is None and start is not None and latency is not None:
        draft.end = start + latency / 1000.0
        draft.estimated["end"] = "emitted_at plus tool_wall_latency_ms"
    return draft


class TraceLabImporter:
    """The registry entry for TraceLab round traces."""

    name = FORMAT
    expects = (
        "a TraceLab round trace: JSON lines (or TraceLab's readable `===== round` blocks), "
        "one LLM round each (`session_id`, `round_index`, `timing_events`, `tools`)"
    )

    def sniff(self, path: Path) -> bool:
        """The first line is a round, or the head has a round's three keys."""
        head = peek(path)
        return looks_like_tracelab(head.first_line) or (
            head.start in ("{", "[", "#") and head.has_key(*_REQUIRED)
        )

    def load(self, path: Path) -> list[ImportedRun]:
        """One run per session (see `import_tracelab`)."""
        return import_tracelab(path)
