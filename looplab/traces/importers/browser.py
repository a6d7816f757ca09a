"""Browser-agent records: the one rule that splits a step without a model/action split.

Browser-agent records (browser-use history, open-operator-evals results, OSWorld
`traj.jsonl`, AgentLab summaries) time whole steps: observation capture, the model call
and the browser actions together. Where a record has no split, the model call is
estimated from its tokens by one stated rule, and the rest of the step is the browser's
(action execution, page-load wait, observation capture):

    model_s = TTFT_S + input_tokens x PREFILL_S_PER_TOKEN + output_tokens / DECODE_TPS

capped at the step's measured time. TTFT 0.5 s and decode 80 tok/s are the lab's slow
reference (GPT-4o measures TTFT 0.45 s at 131 tok/s, Artificial Analysis 2026-06; 80 tok/s
is the lab's `slow-80` preset); the prefill term is SWE-Effi's fitted slope (arXiv
2509.09853, GPT-4o-mini: 4.27e-5 s per input token). Where a record has no output token
count, it is estimated from the reply's characters (CHARS_PER_TOKEN). Every value so
derived is named in the event's `estimated`.
"""

from __future__ import annotations

import json
from typing import Any

from looplab.traces.importers.drafts import ModelDraft, RunDraft, StepDraft, ToolDraft

__all__ = [
    "CHARS_PER_TOKEN",
    "DECODE_TPS",
    "MODEL_RULE",
    "PREFILL_S_PER_TOKEN",
    "TTFT_S",
    "estimate_model_s",
    "split_step",
    "tokens_of_text",
]

TTFT_S = 0.5
"""Assumed time to first token of the recorded model (s)."""
DECODE_TPS = 80.0
"""Assumed decode rate of the recorded model (tokens/s)."""
PREFILL_S_PER_TOKEN = 4.27e-5
"""Assumed prefill cost per input token (s), SWE-Effi's fit."""
CHARS_PER_TOKEN = 4.0
"""Characters per token where a record has text but no token count."""
MODEL_RULE = (
    f"estimated from tokens: {TTFT_S:g} s TTFT + {PREFILL_S_PER_TOKEN:g} s per input token "
    f"+ output tokens / {DECODE_TPS:g} tok/s, capped at the step's measured time"
)
"""How an estimated model call's length is derived (the events' `estimated` say it)."""
_REST = "the step's measured time minus the estimated model call (actions, page load, observation)"


def tokens_of_text(value: Any) -> int:
    """Estimated tokens of a reply: its JSON text's characters / CHARS_PER_TOKEN."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, round(len(text) / CHARS_PER_TOKEN)) if text else 0


def estimate_model_s(input_tokens: int | None, output_tokens: int | None) -> float:
    """The model call's estimated length by the module rule (uncapped)."""
    return TTFT_S + (input_tokens or 0) * PREFILL_S_PER_TOKEN + (output_tokens or 0) / DECODE_TPS


def split_step(start: float, end: float, model: ModelDraft, tool: ToolDraft | None) -> StepDraft:
    """A step of measured wall time `start..end`: the model call first, estimated from its
    tokens; the tool (browser actions, page load, observation) the rest.

    Args:
        start: the step's measured start (absolute seconds).
        end: the step's measured end.
        model: the call (tokens filled in); its times are set here.
        tool: the step's browser work, or None for a step without one.
    """
    wall = max(0.0, end - start)
    length = min(wall, estimate_model_s(model.prompt_tokens, model.completion_tokens))
    model.start, model.end = start, start + length
    model.estimated["start"] = "the step's measured start (the call is placed first)"
    model.estimated["end"] = MODEL_RULE
    step = StepDraft(model=model)
    if tool is not None:
        tool.start, tool.end = start + length, end
        tool.estimated["start"] = "the estimated end of the model call"
        tool.estimated["duration"] = _REST
        step.tools.append(tool)
    return step


def note_split(draft: RunDraft, steps_timed: str) -> None:
    """The draft's timing notes for steps split by `split_step`."""
    draft.model_timing = f"estimated: {MODEL_RULE}"
    draft.tool_timing = f"estimated: {steps_timed} minus the estimated model call"
    draft.absent.update({"model_call.sent", "model_call.first_token", "model_call.last_token"})
