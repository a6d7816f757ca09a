"""`solution.yaml`: a task's reference steps, and the placeholder rules they share with
the prompt (`substitute`, `prompt_pattern`) and with parametric families
(`expand_solution`)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from looplab.config import StrictModel

__all__ = [
    "FamilySpec",
    "ScriptedCall",
    "ScriptedStep",
    "Solution",
    "expand_solution",
    "prompt_pattern",
    "substitute",
]


class ScriptedCall(StrictModel):
    """One tool call of a reference step."""

    tool: str
    """Tool (function) name."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Arguments; `{placeholder}` strings are filled from the prompt and family item."""
    expect: str | None = None
    """A substring the tool's result must contain for the script to go on."""


class ScriptedStep(StrictModel):
    """One step (one model call) of a reference solution."""

    text: str = ""
    """Visible text before the tool calls."""
    text_tokens: int | None = Field(default=None, ge=0)
    """Visible text length in tokens (text padded with lorem); None: the profile decides."""
    reasoning_tokens: int | None = Field(default=None, ge=0)
    """Hidden reasoning tokens of the step; None: drawn from the profile."""
    calls: list[ScriptedCall] = Field(default_factory=list)
    """Tool calls, in order."""
    merged: int = Field(default=1, ge=1)
    """Reference steps this one stands for (a fan-out plan merges steps): without
    `text_tokens` its visible size is that many of the profile's output draws summed."""


class FamilySpec(StrictModel):
    """A parametric family: the prompt's `{parameter}` picks how many items are in play."""

    parameter: str = "n"
    """Placeholder name in the prompt."""
    items: list[dict[str, str]]
    """Per-item values (e.g. file, old and new text of one bug); item i is in play if i < n."""
    per_item: list[ScriptedStep]
    """Steps repeated for each item in play, `{key}` filled from the item."""
    suffix: list[ScriptedStep] = Field(default_factory=list)
    """Steps after the per-item ones."""


class Solution(StrictModel):
    """`solution.yaml`: the reference steps an expert agent takes."""

    steps: list[ScriptedStep]
    """Steps in order (for a family: the steps before the per-item ones)."""
    family: FamilySpec | None = None
    """Set for a parametric family."""


def substitute(value: Any, values: dict[str, str]) -> Any:
    """Replace `{key}` in every string inside `value` (dicts and lists walked)."""
    if isinstance(value, str):
        for key, replacement in values.items():
            value = value.replace("{" + key + "}", replacement)
        return value
    if isinstance(value, dict):
        return {k: substitute(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, values) for v in value]
    return value


def prompt_pattern(template: str) -> re.Pattern[str]:
    """A regex matching a prompt template with any `{name}` values (digits for `{n}`)."""
    pattern = ""
    for part in re.split(r"(\{[a-z_]+\})", template.strip()):
        if re.fullmatch(r"\{[a-z_]+\}", part):
            name = part[1:-1]
            pattern += rf"(?P<{name}>\d+)" if name == "n" else rf"(?P<{name}>\S+?)"
        else:
            pattern += re.escape(part)
    return re.compile(pattern, re.DOTALL)


def expand_solution(solution: Solution, values: dict[str, str]) -> list[ScriptedStep]:
    """The solution's steps with placeholders filled and a family expanded.

    Args:
        solution: the parsed solution.
        values: placeholder values (from the prompt; the family parameter among them).
    """
    steps = list(solution.steps)
    family = solution.family
    if family is not None:
        count = int(values.get(family.parameter, "0"))
        for item in family.items[:count]:
            steps += [_fill(step, item) for step in family.per_item]
        steps += family.suffix
    return [_fill(step, values) for step in steps]


def _fill(step: ScriptedStep, values: dict[str, str]) -> ScriptedStep:
    data = step.model_dump()
    data["text"] = substitute(step.text, values)
    data["calls"] = [substitute(call, values) for call in data["calls"]]
    return ScriptedStep.model_validate(data)
