"""Model behaviours for the scripted policy: a small fast model and a large slow one.

The scripted policy plays a bundled task's reference solution; a `ModelBehaviour` changes
how a model of a kind would play it, so two arms differ in what they do, not only in how
fast they decode (`looplab run experiments/configs/fast-vs-smart.yaml`):

- `detours`: the probability of each detour per eligible step (an extra read before a
  step, a wrong first edit with a failing test run and the correction;
  `ScriptedPolicy.imperfection`): more steps;
- `reply_scale`: the visible reply's length against the reference (the profile's draw or
  the step's `text_tokens`), rounded;
- `reasoning_tokens`: hidden reasoning tokens per step (None: the step's or profile's);
- `give_up`: the probability, per task and seed, that the model stops with the task
  unsolved: its last edit is a wrong one, the tests fail, and it finishes anyway, so the
  task's own check says unsolved;
- `hurry_below`: told its remaining time (`agent.tell_remaining_time`: a user message
  `time_left_text` before each call), the model takes no more detours once less than this
  share of the time is left (None: it does not adapt, as Timely Machine found models do
  not).

Each parameter carries its source or says "assumed" (`sources`). Served as model ids
`looplab-small-fast` and `looplab-large-slow` (`policies.POLICIES`); a config names them
as a backend's `policy`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from looplab.tasks import ScriptedStep

__all__ = [
    "BEHAVIOURS",
    "GAVE_UP_SUMMARY",
    "ModelBehaviour",
    "given_up",
    "hurry_from",
    "time_left_text",
]

_TIME_LEFT = re.compile(r"^Time left: (\d+(?:\.\d+)?) s of (\d+(?:\.\d+)?) s\.$")


@dataclass(frozen=True)
class ModelBehaviour:
    """How a kind of model plays a scripted task (see the module doc)."""

    name: str
    description: str
    detours: float = 0.0
    reply_scale: float = 1.0
    reasoning_tokens: int | None = None
    give_up: float = 0.0
    hurry_below: float | None = None
    sources: dict[str, str] = field(default_factory=dict)
    """Parameter -> its source and date, or `assumed` with the reasoning."""


BEHAVIOURS: dict[str, ModelBehaviour] = {
    "small-fast": ModelBehaviour(
        name="small-fast",
        description="a small fast model: more steps, shorter replies, no hidden reasoning, "
        "sometimes leaves a task unsolved",
        detours=0.5,
        reply_scale=0.6,
        reasoning_tokens=0,
        give_up=0.25,
        hurry_below=0.75,
        sources={
            "detours": "assumed 0.5; direction from Timely Machine (arXiv 2601.16486, "
            "2026-01): smaller models take more, shorter interactions",
            "reply_scale": "assumed 0.6 of the reference reply",
            "reasoning_tokens": "assumed 0: a non-reasoning fast tier",
            "give_up": "assumed 0.25; the gap's direction from whatsthebestcodeagent.com "
            "(SWE-bench Verified, 2026): Grok Code Fast 1 50.6% vs Sonnet 4.5 64.0% solved",
            "hurry_below": "assumed 0.75: a model that adapts, the best case of telling it; "
            "Timely Machine (arXiv 2601.16486, 2026-01) found models do not adapt",
        },
    ),
    "large-slow": ModelBehaviour(
        name="large-slow",
        description="a large slow model: the reference steps, longer replies, hidden "
        "reasoning, solves what the reference solves",
        detours=0.0,
        reply_scale=1.5,
        reasoning_tokens=300,
        give_up=0.0,
        sources={
            "detours": "assumed 0: follows the reference solution",
            "reply_scale": "assumed 1.5 of the reference reply",
            "reasoning_tokens": "assumed 300 per step, as the codex-spark claim entry "
            "assumes (looplab/claims/entries/codex-spark.yaml)",
            "give_up": "assumed 0: solves every bundled task it is given",
            "hurry_below": "None: does not adapt to a told budget, as Timely Machine "
            "(arXiv 2601.16486, 2026-01) found",
        },
    ),
}
"""Behaviour name -> behaviour; each is also a simulator policy (`policies.POLICIES`)."""


GAVE_UP_SUMMARY = "I could not make every test pass; stopping here."
"""The finish summary of a plan that gives up."""


def given_up(
    steps: list[ScriptedStep], wrong_edit: Callable[[ScriptedStep], list[ScriptedStep]]
) -> list[ScriptedStep]:
    """`steps` with the task left unsolved: up to its last single edit, that edit made
    wrong (`wrong_edit`'s first two steps: the wrong edit and the failing test run), then
    the plan's finish with `GAVE_UP_SUMMARY`. Unchanged when it has no single edit or no
    finish (a web task: the give-up applies to coding tasks)."""
    edits = [i for i, s in enumerate(steps) if len(s.calls) == 1 and s.calls[0].tool == "edit_file"]
    finish = next((s for s in steps if any(c.tool == "finish" for c in s.calls)), None)
    if not edits or finish is None:
        return steps
    last = edits[-1]
    calls = [
        c.model_copy(update={"args": {**c.args, "summary": GAVE_UP_SUMMARY}})
        if c.tool == "finish"
        else c
        for c in finish.calls
    ]
    quit_step = finish.model_copy(update={"text": "The tests still fail.", "calls": calls})
    return steps[:last] + wrong_edit(steps[last])[:2] + [quit_step]


def time_left_text(left_s: float, total_s: float) -> str:
    """The note an agent told its remaining time sends before a call (one format, which
    `hurry_from` reads): `Time left: 12.3 s of 30 s.`"""
    return f"Time left: {max(0.0, left_s):.1f} s of {total_s:g} s."


def hurry_from(messages: Sequence[tuple[str, str]], behaviour: ModelBehaviour | None) -> int | None:
    """The plan index from which a model that heeds time notes hurries: the index of the
    first assistant reply whose preceding note (`time_left_text`, a user message) left less
    than `behaviour.hurry_below` of the time; None when none did or it does not heed.

    Args:
        messages: the conversation as (role, text), in order.
        behaviour: the model's behaviour (None: the reference player, never hurries).
    """
    if behaviour is None or behaviour.hurry_below is None:
        return None
    replies = 0
    for role, text in messages:
        if role == "assistant":
            replies += 1
        elif role == "user" and (match := _TIME_LEFT.match(text.strip())):
            left, total = float(match[1]), float(match[2])
            if total > 0 and left / total < behaviour.hurry_below:
                return replies
    return None
