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

from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.end_reason import EndReason
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import RunDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.openhands_events import naive_offset, read_metrics, walk_events
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import as_str, json_records, obj, safe_run_id

__all__ = ["OpenHandsImporter", "import_openhands", "looks_like_openhands"]

FORMAT = "openhands"


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
    records = json_records(path)
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


def _instance(record: dict[str, Any], where: str, path: Path, index: int) -> RunDraft:
    metadata = obj(record.get("metadata"))
    instance = as_str(record.get("instance_id"))
    stem = path.name.split(".")[0]
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(instance or (f"{stem}-{index}" if index else stem)),
        source_path=path,
        source_key=f"{where}{index}",
        task=instance,
        agent=as_str(metadata.get("agent_class")),
        model=as_str(obj(metadata.get("llm_config")).get("model")),
        prompt=as_str(record.get("instruction")),
    )
    events = _flatten(record["history"], where, path)
    if record["history"] and not any("action" in e or "observation" in e for e in events):
        raise TraceError(
            f"{where}history has no OpenHands events (objects with `action` or `observation`)",
            path=str(path),
        )
    latencies = read_metrics(record.get("metrics"))
    walk_events(events, latencies, naive_offset(events, path, draft), draft, path)
    _outcome(record, events, draft)
    return draft


def _outcome(record: dict[str, Any], events: list[dict[str, Any]], draft: RunDraft) -> None:
    """End reason from `error` / a `finish` action; success from `test_result.report`."""
    error = record.get("error")
    if error:
        draft.error = str(error)
        draft.end_reason = (
            EndReason.STEP_LIMIT if "maximum iteration" in str(error) else EndReason.ERROR
        )
    elif any(e.get("action") == "finish" for e in events):
        draft.end_reason = EndReason.FINISH
    elif "error" in record or "test_result" in record:
        draft.end_reason = EndReason.STOPPED
    result = obj(record.get("test_result"))
    resolved = obj(result.get("report")).get("resolved")
    draft.success = resolved if isinstance(resolved, bool) else None
    if draft.success is None and result.get("git_patch") is not None:
        draft.notes.append("test_result holds the patch only: success was not checked")


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


class OpenHandsImporter:
    """The registry entry for OpenHands eval output and event-list trajectories."""

    name = FORMAT
    expects = (
        "eval output JSONL (one instance per line: `instance_id`, `history`, `metrics`) or "
        "a trajectory: a JSON list of events (`timestamp`, `source`, `action`/`observation`)"
    )

    def sniff(self, path: Path) -> bool:
        """An instance object (`instance_id` with `history`/`instruction`/`metrics`), or
        events: `timestamp` plus an `action`/`observation` key, in a list or `history`."""
        head = peek(path)
        if head.start == "{" and head.has_key("instance_id"):
            return any(head.has_key(k) for k in ("history", "instruction", "metrics"))
        events = head.has_key("timestamp") and (
            head.has_key("action") or head.has_key("observation")
        )
        if head.start == "[":
            return events
        return (
            head.start == "{"
            and events
            and (head.has_list("history") or head.has_list("trajectory"))
        )

    def load(self, path: Path) -> list[ImportedRun]:
        """One run per instance (see `import_openhands`)."""
        return import_openhands(path)
