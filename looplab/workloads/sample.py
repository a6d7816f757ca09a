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
- absent parameters: reasoning -> None (the latency profile decides), prompt -> None (not
  reproduced), cached share -> None, tool time and other time -> 0 s.

The same (model, seed) always gives the same shape, whatever else draws. Hidden reasoning
is drawn from its own stream, so a model whose `draws_as` names another draws that
model's tasks exactly, plus its own reasoning tokens.
"""

from __future__ import annotations

import random

from looplab.errors import ConfigError
from looplab.workloads.model import Parameter, WorkloadModel
from looplab.workloads.shape import CONTINUE_TOOL, StepShape, TaskShape, ToolShape

__all__ = ["draw_shape"]

_MESSAGE_OVERHEAD = 8
"""Least prompt growth beyond the previous reply: its and one tool result's overhead."""


def _draw(parameter: Parameter, rng: random.Random) -> float | None:
    if parameter.distribution is None:
        return None
    return max(0.0, parameter.distribution.sample(rng))


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
    names = list(p.tool_names.weights)
    weights = list(p.tool_names.weights.values())
    count = max(1, round(_draw(p.steps, rng) or 1))
    steps: list[StepShape] = []
    prompt: int | None = None
    for index in range(count):
        output = round(_draw(p.output_tokens, rng) or 0)
        reasoning = _draw(p.reasoning_tokens, thinking)
        if index == 0:
            first = _draw(p.initial_prompt_tokens, rng)
            prompt = None if first is None else round(first)
        elif prompt is not None:
            growth = _draw(p.new_prompt_tokens, rng)
            least = steps[-1].output_tokens + _MESSAGE_OVERHEAD
            prompt = None if growth is None else prompt + max(round(growth), least)
        share = _draw(p.cached_share, rng) if index else 0.0
        cached = None if share is None or prompt is None else int(min(share, 1.0) * prompt)
        if cached is not None and index:
            cached = min(cached, steps[-1].prompt_tokens or 0)
        calls = round(_draw(p.tool_calls, rng) or 0)
        tools = [
            ToolShape(
                name=rng.choices(names, weights=weights)[0] if names else "tool",
                seconds=_draw(p.tool_s, rng) or 0.0,
            )
            for _ in range(calls)
        ]
        if not tools and index + 1 < count:
            tools = [ToolShape(name=CONTINUE_TOOL, seconds=0.0)]
        steps.append(
            StepShape(
                output_tokens=output,
                reasoning_tokens=None if reasoning is None else round(reasoning),
                prompt_tokens=prompt,
                cached_tokens=cached,
                tools=tools,
                other_s=_draw(p.other_s, rng) or 0.0,
            )
        )
    return TaskShape(
        id=f"{model.name}-s{seed}", source=f"workload {model.name} seed {seed}", steps=steps
    )
