"""open-operator-evals results (`results*.json`) -> looplab traces, one run per file.

Accepted (learned from nottelabs/open-operator-evals: `eval/task_types.py`, `TaskResult`,
`Step`, `LLMCall`, and its `WebVoyager30/<agent>/<time>/<task>/<run>/results_no_screenshot
.json`): an object with `success`, `run_id`, `eval` (`eval`, `reason`), `duration_in_s`
(the task's wall time), `agent_answer`, `task` (`id`, `question`, `website_name`) and
`steps`: per step `url`, `duration_in_s` (measured) and `llm_calls`, each with
`input_tokens`, `output_tokens` (measured by the harness), `messages_in`, `message_out`.

Timing: the file has durations, not times: steps are laid end to end from 0 (wall-clock
time absent). A step's model/action split is not recorded: each call is estimated from
its tokens (`browser.MODEL_RULE`), the rest of the step is the browser's (one tool call
named by the reply's first action). Steps of a harness that wrote 0.0 for every step's
duration (the Convergence runs) get an equal share of the task's time, estimated. The
task time beyond the steps (browser start, evaluation) is the run's other time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.importers.browser import (
    estimate_model_s,
    note_split,
    split_step,
    tokens_of_text,
)
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import (
    as_float,
    as_int,
    as_str,
    dig,
    load_json,
    obj,
    safe_run_id,
)

__all__ = ["OpenOperatorEvalsImporter", "import_open_operator_evals"]

FORMAT = "open-operator-evals"
_EQUAL = "steps[].duration_in_s are all 0 (not recorded): an equal share of duration_in_s"


def import_open_operator_evals(path: Path) -> list[ImportedRun]:
    """Import one open-operator-evals result file.

    Raises:
        TraceError: not an object with `steps` and `duration_in_s`.
    """
    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise TraceError("expected an object with `steps` and `duration_in_s`", path=str(path))
    if not data["steps"]:
        raise TraceError(
            f"no steps recorded (duration_in_s {data.get('duration_in_s')!r}: the run failed "
            "before its first step); nothing to import",
            path=str(path),
        )
    total = as_float(data.get("duration_in_s"))
    task = obj(data.get("task"))
    task_id = as_str(task.get("id")) or as_str(data.get("task_id")) or path.parent.name
    draft = RunDraft(
        fmt=FORMAT,
        run_id=safe_run_id(task_id, as_str(data.get("run_id"))),
        source_path=path,
        task=task_id,
        agent="open-operator-evals",
        prompt=as_str(task.get("question")) or as_str(data.get("task_description")),
        success=data.get("success") if isinstance(data.get("success"), bool) else None,
        end_reason=as_str(dig(data, "eval", "eval")),
    )
    durations = [as_float(obj(s).get("duration_in_s")) for s in data["steps"]]
    equal = bool(durations) and total is not None and all(not d for d in durations)
    clock = 0.0
    for index, step in enumerate(data["steps"]):
        length = (total or 0.0) / len(durations) if equal else durations[index] or 0.0
        draft.steps.extend(_steps(obj(step), clock, clock + length, equal))
        clock += length
    draft.end_time = max(clock, total or 0.0)
    draft.absent.update({"wall_time", "model_call.cached_tokens"})
    draft.notes.append("no wall-clock times in the source: steps laid end to end from 0")
    if equal:
        draft.notes.append(_EQUAL)
    note_split(draft, "steps[].duration_in_s (measured)")
    return [build_run(draft)]


def _steps(step: dict[str, Any], start: float, end: float, equal: bool) -> list[StepDraft]:
    """One draft step per LLM call; the browser work is the last call's tool."""
    calls = [obj(c) for c in step.get("llm_calls") or []]
    if not calls:
        tool = ToolDraft(name="browser", start=start, end=end, duration_measured=not equal)
        return [StepDraft(tools=[tool])]
    drafts: list[StepDraft] = []
    cursor = start
    for k, call in enumerate(calls):
        last = k == len(calls) - 1
        out = call.get("message_out")
        model = ModelDraft(
            prompt_tokens=as_int(call.get("input_tokens")),
            completion_tokens=as_int(call.get("output_tokens")),
            message={"role": "assistant", "content": call.get("pretty_out")},
        )
        if model.completion_tokens is None and out is not None:
            model.completion_tokens = tokens_of_text(out)
            model.estimated["completion_tokens"] = "message_out characters / 4"
        tool = ToolDraft(name=_action_name(out), arguments=as_str(step.get("url")) or "")
        # earlier calls of a step take their estimated length; the last one the rest
        length = estimate_model_s(model.prompt_tokens, model.completion_tokens)
        stop = end if last else min(end, cursor + length)
        piece = split_step(cursor, stop, model, tool if last else None)
        cursor = stop
        if equal and piece.model is not None:
            piece.model.estimated["start"] = _EQUAL
        drafts.append(piece)
    return drafts


def _action_name(message_out: Any) -> str:
    """The first action the reply asks for (`click_element`, ...), else `browser`."""
    text = dig(message_out, "content")
    calls = dig(message_out, "tool_calls")
    if isinstance(calls, list) and calls:
        text = dig(calls[0], "function", "arguments")
    try:
        reply = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return "browser"
    actions = obj(reply).get("action", obj(reply).get("actions"))
    first = actions[0] if isinstance(actions, list) and actions else None
    if isinstance(first, dict) and first:
        return str(next(iter(first)))[:64] or "browser"
    return "browser"


class OpenOperatorEvalsImporter:
    """The registry entry for open-operator-evals result files."""

    name = FORMAT
    expects = (
        "an open-operator-evals result (results_no_screenshot.json: an object with "
        "`duration_in_s`, `steps[].duration_in_s`, `steps[].llm_calls[].input_tokens`)"
    )

    def sniff(self, path: Path) -> bool:
        """`duration_in_s`, `agent_answer` and `steps: [` in the head of an object."""
        head = peek(path)
        return (
            head.start == "{"
            and head.has_key("duration_in_s", "agent_answer")
            and head.has_list("steps")
        )

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_open_operator_evals`)."""
        return import_open_operator_evals(path)
