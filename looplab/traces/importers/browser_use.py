"""browser-use agent history (`AgentHistoryList.save_to_file`) -> looplab traces.

Accepted (learned from browser-use/browser-use `browser_use/agent/views.py`, tags 0.1.40
and later): an object `{"history": [...], "usage": {...}?}`; per item `model_output`
(`current_state` / `evaluation_previous_goal`, `memory`, `next_goal`, and `action`: a
list of `{action_name: params}`), `result` (list of `ActionResult`: `is_done`,
`success`, `error`, `extracted_content`), `state` (`url`, `title`, `screenshot`...) and
`metadata` (`StepMetadata`: `step_start_time`, `step_end_time` (epoch seconds, measured
around the whole step: observation, model call and actions), `step_number`, and in
0.1.x `input_tokens`, the message manager's estimate of the prompt: characters / 3 and
800 tokens per image). Newer versions drop `input_tokens` and add a run-level `usage`
(`total_prompt_tokens`, `total_completion_tokens`, `total_prompt_cached_tokens`).

Tokens: `input_tokens` as recorded (an estimate by browser-use); otherwise an equal share
of `usage`'s totals (estimated); output tokens an equal share of `usage`, else the
`model_output` JSON's characters / 4 (estimated). Timing: the step is measured; the model
call is estimated from its tokens (`browser.MODEL_RULE`) and the rest is the browser's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from looplab.errors import TraceError
from looplab.traces.end_reason import EndReason
from looplab.traces.importers.browser import note_split, split_step, tokens_of_text
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.sniff import peek
from looplab.traces.importers.source import as_float, as_int, as_str, load_json, obj

__all__ = ["BrowserUseImporter", "import_browser_use"]

FORMAT = "browser-use"
_SHARE = "an equal share of the run's `usage` total"


def import_browser_use(path: Path) -> list[ImportedRun]:
    """Import one saved browser-use history.

    Raises:
        TraceError: no `history` list, or an item without `metadata` times.
    """
    data = load_json(path)
    history = data.get("history") if isinstance(data, dict) else None
    if not isinstance(history, list):
        raise TraceError("expected an object with a `history` list", path=str(path))
    usage = obj(data.get("usage"))
    draft = RunDraft(
        fmt=FORMAT,
        run_id=path.name.removesuffix(".json"),
        source_path=path,
        task=path.name.removesuffix(".json"),
        agent="browser-use",
        model=next(iter(obj(usage.get("by_model"))), None),
    )
    steps = len(history) or 1
    for index, item in enumerate(history):
        _step(draft, obj(item), index, usage, steps, path)
    last = obj(history[-1]) if history else {}
    done = [obj(r) for r in last.get("result") or [] if obj(r).get("is_done")]
    if done:
        draft.end_reason = EndReason.DONE
        success = done[-1].get("success")
        draft.success = success if isinstance(success, bool) else None
    if not usage and not any(obj(h).get("metadata", {}).get("input_tokens") for h in history):
        draft.absent.add("model_call.prompt_tokens")
    draft.absent.add("model_call.cached_tokens")
    note_split(draft, "metadata.step_start_time -> step_end_time (measured)")
    return [build_run(draft)]


def _step(
    draft: RunDraft, item: dict[str, Any], index: int, usage: dict[str, Any], n: int, path: Path
) -> None:
    meta = obj(item.get("metadata"))
    start, end = as_float(meta.get("step_start_time")), as_float(meta.get("step_end_time"))
    if start is None or end is None:
        where = f"history[{index}].metadata"
        raise TraceError(f"{where}: no step_start_time/step_end_time", path=str(path))
    output = item.get("model_output")
    if as_int(meta.get("step_number")) == 0:  # the initial actions: run without a model call
        tool = _tool(item, output)
        tool.start, tool.end = start, end
        tool.estimated["duration"] = "browser-use records the initial actions with no length"
        draft.steps.append(StepDraft(tools=[tool]))
        draft.notes.append("history[0] (step_number 0): the initial actions, no model call")
        return
    model = ModelDraft(prompt_tokens=as_int(meta.get("input_tokens")), message=_message(output))
    if model.prompt_tokens is not None:
        model.estimated["prompt_tokens"] = "browser-use's estimate (characters / 3, 800 per image)"
    elif as_int(usage.get("total_prompt_tokens")) is not None:
        model.prompt_tokens = round((as_int(usage.get("total_prompt_tokens")) or 0) / n)
        model.estimated["prompt_tokens"] = _SHARE
    total_out = as_int(usage.get("total_completion_tokens"))
    if total_out is not None:
        model.completion_tokens = round(total_out / n)
        model.estimated["completion_tokens"] = _SHARE
    elif output is not None:
        model.completion_tokens = tokens_of_text(output)
        model.estimated["completion_tokens"] = "model_output JSON characters / 4"
    tool = _tool(item, output)
    draft.steps.append(split_step(start, end, model, tool))


def _tool(item: dict[str, Any], output: Any) -> ToolDraft:
    """The step's browser work (observation, actions), named by its first action, else
    `browser` (a step without model output still observed the page)."""
    actions = obj(output).get("action")
    if not isinstance(actions, list):
        actions = []
    first = obj(actions[0]) if actions else {}
    errors = [str(obj(r).get("error")) for r in item.get("result") or [] if obj(r).get("error")]
    return ToolDraft(
        name=str(next(iter(first), "browser"))[:64] or "browser",
        arguments=json.dumps(actions, ensure_ascii=False)[:4000],
        ok=not errors,
        error="; ".join(errors) or None,
        output=as_str(obj(item.get("state")).get("url")),
    )


def _message(output: Any) -> dict[str, Any] | None:
    if output is None:
        return None
    return {"role": "assistant", "content": json.dumps(output, ensure_ascii=False)[:4000]}


class BrowserUseImporter:
    """The registry entry for browser-use agent histories."""

    name = FORMAT
    expects = (
        "a browser-use agent history (AgentHistoryList.save_to_file: `history[]` with "
        "`model_output`, `result`, `state`, `metadata.step_start_time`/`step_end_time`)"
    )

    def sniff(self, path: Path) -> bool:
        """`history: [` and `model_output` near the start of an object."""
        head = peek(path)
        return head.start == "{" and head.has_list("history") and head.has_key("model_output")

    def load(self, path: Path) -> list[ImportedRun]:
        """One run (see `import_browser_use`)."""
        return import_browser_use(path)
