"""Seeded draws of task shapes from a workload model.

`draw_shape(model, seed)` draws one task: its number of steps, then per step the visible
output and hidden reasoning tokens, the prompt (the first call's, then growth per step),
the tool calls (how many, which, how long) and the other time. Parameters are drawn
independently of each other (a model of marginals: `looplab calibrate` prints how far
the per-task totals this gives are from the observed ones). Rules:

- counts are rounded to integers; a task has at least one step;
- the prompt grows by at least the previous step's output plus 8 tokens (the reply is in
  the next prompt, with the message overhead of the reply and one tool result);
- the cached prefix of step k >= 1 is `cached_share x prompt`, at most the previous
  step's prompt (only what an earlier request sent can be cached); step 0 has none;
- a step that draws no tool call but is not the last gets the zero-second
  `continue` call (the harness went on without a tool), so the live loop continues;
- `initial_cached_share` (optional): step 0's cached prefix is that share of its prompt,
  drawn from the fan-out stream;
- `fanout` (optional): an acting step but the last spawns, with its probability, `count`
  sub-agents of `steps` steps each (`StepShape.subagents`), drawn from a stream of their
  own, so a workload's own steps are the same with or without fan-out;
- absent parameters: reasoning -> None (the latency profile decides), prompt -> None (not
  reproduced), cached share -> None, tool time and other time -> 0 s.

The same (model, seed) always gives the same shape, whatever else draws. Hidden reasoning
is drawn from its own stream, so a model whose `draws_as` names another draws that
model's tasks exactly, plus its own reasoning tokens.

Computer-use workloads (`observation_s`, `planner`, `reflection`; see `model.py`): each
drawn step is one ACTION; its actor call is drawn as above, the last tool call gets the
drawn observation time (`wait_s`), and a planner call before it and a reflection call
after it are added (role `plan` / `reflect`, a zero-second `plan` / `reflect` tool so
the loop goes on). Their tokens, their cached share and the growth of a reflection on
the last action come from a stream of their own, so a variant with `draws_as` naming
a workload without them plays that workload's actions exactly, plus its calls. The
observation (the drawn growth) reaches the first call after the action; a call after a
planner or reflection grows the prompt by that call's reply only. `position_factors`
multiply an action's tool and observation time by its position band's factor (no draw).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from looplab.errors import ConfigError
from looplab.workloads.model import CallParameters, Parameter, WorkloadModel
from looplab.workloads.shape import (
    CONTINUE_TOOL,
    PLAN_TOOL,
    REFLECT_TOOL,
    StepShape,
    TaskShape,
    ToolShape,
)

__all__ = ["draw_shape"]

_MESSAGE_OVERHEAD = 8
"""Least prompt growth beyond the previous reply: its and one tool result's overhead."""


def _draw(parameter: Parameter, rng: random.Random) -> float | None:
    if parameter.distribution is None:
        return None
    return max(0.0, parameter.distribution.sample(rng))


@dataclass
class _Action:
    """One drawn action: its actor call, before prompts are laid out."""

    step: StepShape
    first_prompt: float | None
    growth: float | None
    share: float | None
    seen: int | None = None
    """Tokens of the observation every call of this action prefills (None: no floor)."""


def draw_shape(model: WorkloadModel, seed: int) -> TaskShape:
    """One task shape drawn from `model` with `seed` (see the module docstring).

    Raises:
        ConfigError: the model has no distribution for steps or output tokens.
    """
    p = model.parameters
    for name in ("steps", "output_tokens"):
        if getattr(p, name).distribution is None:
            raise ConfigError(
                f"workload {model.name!r} has no distribution for {name}; a shape needs one",
                field=f"parameters.{name}",
            )
    key = model.draws_as or model.name
    rng = random.Random(f"looplab-workload:{key}:{seed}")
    thinking = random.Random(f"looplab-workload:{key}:{seed}:reasoning")
    planning = random.Random(f"looplab-workload:{key}:{seed}:planning")
    count = max(1, round(_draw(p.steps, rng) or 1))
    actions = [_action(model, index, count, rng, thinking) for index in range(count)]
    fanning = random.Random(f"looplab-workload:{key}:{seed}:fanout")
    if p.initial_cached_share is not None:
        actions[0].share = _draw(p.initial_cached_share, fanning)
    steps = _layout(model, actions, planning)
    if p.fanout is not None:
        steps = _with_subagents(model, steps, fanning)
    return TaskShape(
        id=f"{model.name}-s{seed}", source=f"workload {model.name} seed {seed}", steps=steps
    )


def _action(
    model: WorkloadModel, index: int, count: int, rng: random.Random, thinking: random.Random
) -> _Action:
    """The actor call of action `index` (draws in the order every workload has used)."""
    p = model.parameters
    output = round(_draw(p.output_tokens, rng) or 0)
    reasoning = _draw(p.reasoning_tokens, thinking)
    first = _draw(p.initial_prompt_tokens, rng) if index == 0 else None
    growth = _draw(p.new_prompt_tokens, rng) if index else None
    share = _draw(p.cached_share, rng) if index else 0.0
    calls = round(_draw(p.tool_calls, rng) or 0)
    names = list(p.tool_names.weights)
    weights = list(p.tool_names.weights.values())
    tools = [
        ToolShape(
            name=rng.choices(names, weights=weights)[0] if names else "tool",
            seconds=_draw(p.tool_s, rng) or 0.0,
        )
        for _ in range(calls)
    ]
    if not tools and (index + 1 < count or p.reflection is not None):
        tools = [ToolShape(name=CONTINUE_TOOL, seconds=0.0)]
    other = _draw(p.other_s, rng) or 0.0
    if p.observation_s is not None and tools:
        wait = _draw(p.observation_s, rng) or 0.0
        tools[-1] = tools[-1].model_copy(update={"wait_s": wait})
    if p.position_factors is not None:
        scale = p.position_factors.factor(index)
        tools = [_scaled(t, scale) for t in tools]
    seen = None
    if p.observation_tokens is not None:
        seen = round(_draw(p.observation_tokens, rng) or 0)
    step = StepShape(
        output_tokens=output,
        reasoning_tokens=None if reasoning is None else round(reasoning),
        tools=tools,
        other_s=other,
    )
    return _Action(step, first, growth, share, seen)


def _scaled(tool: ToolShape, scale: float) -> ToolShape:
    return tool.model_copy(update={"seconds": tool.seconds * scale, "wait_s": tool.wait_s * scale})


def _layout(
    model: WorkloadModel, actions: list[_Action], planning: random.Random
) -> list[StepShape]:
    """The calls in order ([planner] actor [reflection] per action), with their prompts
    and cached prefixes; the observation's growth goes to the first call after an action."""
    p = model.parameters
    steps: list[StepShape] = []
    prompt: int | None = None
    for index, action in enumerate(actions):
        observed = index > 0 and p.reflection is None
        if p.planner is not None:
            prompt = _prompt(steps, prompt, action, observed, action.growth)
            steps.append(_extra(p.planner, "plan", steps, prompt, planning, action))
            observed = False
        prompt = _prompt(steps, prompt, action, observed, action.growth)
        cached = _cached(prompt, action.share, steps, action.seen)
        steps.append(
            action.step.model_copy(update={"prompt_tokens": prompt, "cached_tokens": cached})
        )
        if p.reflection is not None:
            following = actions[index + 1].growth if index + 1 < len(actions) else None
            if index + 1 == len(actions):
                following = _draw(p.new_prompt_tokens, planning)
            prompt = _prompt(steps, prompt, None, True, following)
            steps.append(_extra(p.reflection, "reflect", steps, prompt, planning, action))
    if steps[-1].role != "act":  # the run ends on this call: no tool follows it
        steps[-1] = steps[-1].model_copy(update={"tools": []})
    return steps


def _prompt(
    steps: list[StepShape],
    prompt: int | None,
    action: _Action | None,
    observed: bool,
    growth: float | None,
) -> int | None:
    """The next call's prompt: the first call's drawn prompt; after an action's observation
    the previous prompt plus the drawn growth (at least the previous reply and its
    overhead; None when growth is absent); else the previous reply and overhead only."""
    if not steps:
        first = action.first_prompt if action is not None else None
        return None if first is None else round(first)
    if prompt is None:
        return None
    least = steps[-1].output_tokens + _MESSAGE_OVERHEAD
    if not observed:
        return prompt + least
    return None if growth is None else prompt + max(round(growth), least)


def _cached(
    prompt: int | None, share: float | None, steps: list[StepShape], seen: int | None
) -> int | None:
    """`share x prompt`, at most the previous call's prompt (only what was sent is cached)
    and at most the prompt before the newest observation's `seen` tokens."""
    if share is None or prompt is None:
        return None
    cached = int(min(share, 1.0) * prompt)
    if seen is not None:
        cached = min(cached, max(0, prompt - seen))
    return min(cached, steps[-1].prompt_tokens or 0) if steps else cached


def _extra(
    call: CallParameters,
    role: Literal["plan", "reflect"],
    steps: list[StepShape],
    prompt: int | None,
    planning: random.Random,
    action: _Action,
) -> StepShape:
    """A planner or reflection call, drawn from the `planning` stream; its cached share is
    its action's (it sees the same observation)."""
    output = round(_draw(call.output_tokens, planning) or 0)
    reasoning = _draw(call.reasoning_tokens, planning)
    share = action.share if steps else 0.0
    return StepShape(
        output_tokens=output,
        reasoning_tokens=None if reasoning is None else round(reasoning),
        prompt_tokens=prompt,
        cached_tokens=_cached(prompt, share, steps, action.seen),
        tools=[ToolShape(name=PLAN_TOOL if role == "plan" else REFLECT_TOOL, seconds=0.0)],
        role=role,
    )


def _with_subagents(
    model: WorkloadModel, steps: list[StepShape], fanning: random.Random
) -> list[StepShape]:
    """Each acting step but the last spawns sub-agents with `fanout.probability`: `count`
    of them, each `steps` steps drawn like the task's own (a first prompt, growth, cache
    share, tools), from the `fanning` stream (the task's own draws are unchanged)."""
    fanout = model.parameters.fanout
    assert fanout is not None
    out: list[StepShape] = []
    for index, step in enumerate(steps):
        spawns = index + 1 < len(steps) and step.role == "act"
        if not spawns or fanning.random() >= fanout.probability:
            out.append(step)
            continue
        count = max(1, round(_draw(fanout.count, fanning) or 1))
        subagents = []
        for _ in range(count):
            length = max(1, round(_draw(fanout.steps, fanning) or 1))
            actions = [_action(model, i, length, fanning, fanning) for i in range(length)]
            if model.parameters.initial_cached_share is not None:
                actions[0].share = _draw(model.parameters.initial_cached_share, fanning)
            subagents.append(_layout(model, actions, fanning))
        out.append(step.model_copy(update={"subagents": subagents}))
    return out
