"""OSWorld results (`traj.jsonl`) -> looplab traces, one run per file.

Accepted (learned from xlang-ai/OSWorld `lib_run_single.py`, `run_single_example`): one
JSON object per line, written after each action: `step_num` (1-based; several actions of
one model reply share it), `action_timestamp` (`%Y%m%d@%H%M%S`, taken just before
`env.step`, the runner's local time, 1 s resolution), `action`, `response` (the model's
reply; absent in some agents' runners), `reward`, `done`, `info`, `screenshot_file`.

Timing: the only times are the action stamps. The interval from one step's first action
to the next step's is measured (1 s resolution): the actions, the wait after them, the
screenshot, and the next model call. The file has no token counts: the next call's output
tokens are estimated from its `response` text (characters / 4) and its time from them
(`browser.MODEL_RULE`); the rest of the interval is the actions'. The first call's start
and the last step's actions' end are not in the source. Stamps are read as UTC (the
runner's zone is not recorded).

Verdict: the runner's `result.txt` next to `traj.jsonl` (the evaluator's score, 0..1):
1 solved, 0 failed, a partial score left unknown (said in a note); without it unknown.
"""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.end_reason import EndReason
from looplab.traces.importers.browser import MODEL_RULE, estimate_model_s, tokens_of_text
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import BadValue, as_int, as_str, json_records, obj

__all__ = ["OsworldImporter", "import_osworld"]

FORMAT = "osworld"
_STAMP = "%Y%m%d@%H%M%S"
_ABSENT = ("prompt_tokens", "cached_tokens", "sent", "first_token", "last_token")


def import_osworld(path: Path) -> list[ImportedRun]:
    """Import one OSWorld `traj.jsonl`.

    Raises:
        TraceError: no line with `step_num` and `action_timestamp`.
    """
    lines = [obj(r) for _, r in json_records(path)]
    rows = [r for r in lines if "action_timestamp" in r and "step_num" in r]
    if not rows:
        raise TraceError("no line with `step_num` and `action_timestamp`", path=str(path))
    groups: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(as_int(row.get("step_num")) or 0, []).append(row)
    task = path.parent.name or path.stem
    draft = RunDraft(fmt=FORMAT, run_id=task, source_path=path, task=task, agent="OSWorld")
    ordered = [groups[k] for k in sorted(groups)]
    for index, group in enumerate(ordered):
        following = ordered[index + 1] if index + 1 < len(ordered) else None
        draft.steps.append(_step(group, following, draft.steps))
    if any(r.get("done") is True for r in rows):
        draft.end_reason = EndReason.DONE
    draft.model_timing = f"estimated: ends at the action stamp (1 s); length {MODEL_RULE}"
    draft.tool_timing = "estimated: action stamp -> the next call's estimated start (1 s stamps)"
    draft.absent.update(f"model_call.{k}" for k in _ABSENT)
    draft.notes.append("action_timestamp has 1 s resolution and no zone: read as UTC")
    _verdict(draft, path.parent / "result.txt")
    return [build_run(draft)]


def _verdict(draft: RunDraft, result: Path) -> None:
    """Success from the runner's `result.txt` score (module doc)."""
    try:
        score = float(result.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return
    if score in (0.0, 1.0):
        draft.success = score == 1.0
        draft.notes.append(f"success from result.txt (score {score:g})")
    else:
        draft.notes.append(f"result.txt scores {score:g} (partial): success left unknown")


def _stamp(row: dict[str, Any]) -> float:
    text = as_str(row.get("action_timestamp")) or ""
    try:
        return datetime.strptime(text, _STAMP).replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise BadValue(f"action_timestamp {text[:40]!r} is not {_STAMP}") from None


def _model(group: list[dict[str, Any]], earliest: float | None) -> ModelDraft:
    """The call that produced this step's actions: it ends at the first action's stamp."""
    end = _stamp(group[0])
    response = group[0].get("response")
    model = ModelDraft(end=end, message={"role": "assistant", "content": as_str(response)})
    if response is not None:
        model.completion_tokens = tokens_of_text(response)
        model.estimated["completion_tokens"] = "response characters / 4"
    length = estimate_model_s(None, model.completion_tokens)
    model.start = end - length if earliest is None else max(earliest, end - length)
    model.estimated["start"] = f"the action stamp minus the call's length, {MODEL_RULE}"
    return model


def _step(
    group: list[dict[str, Any]], following: list[dict[str, Any]] | None, done: list[StepDraft]
) -> StepDraft:
    previous = done[-1].tools[-1].start if done and done[-1].tools else None
    model = _model(group, previous)
    if done and done[-1].tools:  # the previous step's actions ran until this call began
        done[-1].tools[-1].end = model.start
    tools = []
    for row in group:
        action = row.get("action")
        name = obj(action).get("action_type") if isinstance(action, dict) else None
        tools.append(
            ToolDraft(
                name=str(name or "computer")[:64],
                start=_stamp(row),
                arguments=action if isinstance(action, str) else str(action),
                estimated={"end": "the next model call's estimated start"},
            )
        )
    if following is None and tools:
        tools[-1].estimated["end"] = "not in the source: the last actions' end is not stamped"
    for prior, tool in pairwise(tools):
        prior.end = tool.start
    return StepDraft(model=model, tools=tools)


class OsworldImporter:
    """The registry entry for OSWorld trajectories."""

    name = FORMAT
    expects = (
        "an OSWorld traj.jsonl (one object per action: `step_num`, `action_timestamp` "
        "%Y%m%d@%H%M%S, `action`, `response`, `reward`, `done`)"
    )

    def sniff(self, path: Path) -> bool:
        """The first line is an object with `step_num` and `action_timestamp`."""
        first = peek(path).first_line
        return isinstance(first, dict) and "step_num" in first and "action_timestamp" in first

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_osworld`)."""
        return import_osworld(path)
