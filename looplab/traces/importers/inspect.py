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

import re
import zipfile
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.end_reason import EndReason, harness_limit
from looplab.traces.importers.archive import check_count, read_member
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import RunDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.inspect_events import (
    Refs,
    steps_from_events,
    steps_from_messages,
    text_of,
)
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import as_int, as_str, load_json, loads, obj, safe_run_id

__all__ = ["InspectImporter", "import_inspect", "looks_like_inspect"]

FORMAT = "inspect"


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
                members = sorted(
                    n for n in names if n.startswith("samples/") and n.endswith(".json")
                )
                check_count(archive, members, path)
                samples = [(name, _zip_json(archive, name, path)) for name in members]
        except zipfile.BadZipFile as exc:
            raise TraceError(f"corrupt .eval zip: {exc}", path=str(path)) from None
        return header, samples
    data = load_json(path)
    raw = data.get("samples") if isinstance(data, dict) else None
    samples = [(f"samples[{i}]", s) for i, s in enumerate(raw or [])]
    return data, samples


def _zip_json(archive: zipfile.ZipFile, name: str, path: Path) -> Any:
    try:
        return loads(read_member(archive, name, path).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise TraceError(f"{name}: not valid JSON ({exc})", path=str(path)) from None


def _sample(header: dict[str, Any], label: str, sample: Any, path: Path) -> RunDraft:
    if not isinstance(sample, dict):
        raise TraceError(f"{label}: not a sample object", path=str(path))
    spec = obj(header.get("eval"))
    refs = Refs(sample)
    task, sample_id = as_str(spec.get("task")), as_str(sample.get("id"))
    plan = obj(header.get("plan")).get("steps")
    solvers = (
        [as_str(obj(step).get("solver")) for step in plan if isinstance(step, dict)]
        if isinstance(plan, list)
        else []
    )
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(task, sample_id, f"epoch{as_int(sample.get('epoch')) or 1}"),
        source_path=path,
        source_key=label,
        task=f"{task}/{sample_id}",
        agent=", ".join(s for s in solvers if s) or None,
        model=as_str(spec.get("model")),
        prompt=text_of(refs.resolve(sample.get("input"))),
        sandbox=obj(spec.get("sandbox")),
    )
    events = sample.get("events")
    where = "events"
    if not isinstance(events, list):
        events = obj(sample.get("transcript")).get("events")
        where = "transcript.events"
    if isinstance(events, list) and events:
        steps_from_events(events, f"{label}.{where}", refs, draft, path)
        draft.prompt = draft.prompt or _first_prompt(events, refs)
    else:
        messages = sample.get("messages")
        messages = messages if isinstance(messages, list) else []
        steps_from_messages(messages, f"{label}.messages", refs, draft, path)
    _ending(sample, refs, draft)
    return draft


def _first_prompt(events: list[Any], refs: Refs) -> str | None:
    """The last user message of the first model call's input (resolving `input_refs`)."""
    for event in events:
        if isinstance(event, dict) and event.get("event") == "model":
            users = [m for m in refs.model_input(event) if obj(m).get("role") == "user"]
            return text_of(users[-1].get("content")) if users else None
    return None


def _ending(sample: dict[str, Any], att: Refs, draft: RunDraft) -> None:
    error = sample.get("error")
    limit = sample.get("limit")
    if error:
        draft.end_reason = EndReason.ERROR
        draft.error = str(error.get("message") if isinstance(error, dict) else error)
    elif isinstance(limit, dict) and limit.get("type"):
        draft.end_reason = harness_limit(str(limit["type"]))
    else:
        draft.end_reason = EndReason.FINISH
    scores = obj(sample.get("scores"))
    if len(scores) == 1:
        name, score = next(iter(scores.items()))
        value = score.get("value") if isinstance(score, dict) else None
        verdict: dict[Any, bool] = {"C": True, "I": False, 1: True, 0: False}
        if isinstance(value, str | int | float | bool) and value in verdict:
            draft.success = verdict[value]
            draft.notes.append(f"success from the `{name}` score ({value!r})")
        explanation = score.get("explanation") if isinstance(score, dict) else None
        draft.check_output = text_of(att.resolve(explanation))
        if draft.check_output:
            draft.check_output = draft.check_output[:2000]
    elif scores:
        draft.notes.append(f"{len(scores)} scores ({', '.join(scores)}): success left unknown")


class InspectImporter:
    """The registry entry for Inspect AI eval logs."""

    name = FORMAT
    expects = (
        "an Inspect eval log: a .eval zip (header.json, samples/*.json) or a .json EvalLog "
        "(`version`, `eval`, `samples`)"
    )

    def sniff(self, path: Path) -> bool:
        """A zip with `header.json` or `_journal/start.json`, or an object with `version`
        and an `eval` object."""
        head = peek(path)
        if head.zip_names is not None:
            return bool(head.zip_names & {"header.json", "_journal/start.json"})
        return (
            head.start == "{"
            and head.has_key("version")
            and re.search(r'"eval"\s*:\s*\{', head.text) is not None
        )

    def load(self, path: Path) -> list[ImportedRun]:
        """One run per sample and epoch (see `import_inspect`)."""
        return import_inspect(path)
