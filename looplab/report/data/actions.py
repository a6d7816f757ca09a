"""A computer-use run's actions: what "time per action" counts (`looplab report`'s
"Two minutes for a click?" rows).

**An action is one acting step**: a step whose tool calls include at least one that acts
(anything but the look-only browser tools `snapshot` and `screenshot`, and the workload's
stand-ins for planner and reflection calls, `plan` and `reflect`). Finishing counts as an
action, as browser-use counts its `done`. The steps around an action are part of its time,
not actions of their own:

- a planner call, a look-only step (`snapshot`, `screenshot`) or a reply without a tool
  call belongs to the **next** action (it prepares it);
- a reflection call belongs to the **previous** action (it looks back on it);
- steps after the last action belong to the last one, steps before the first (a
  reflection with nothing to reflect on) to the first.

Both kinds of trace say so in their own way: the live agent makes its planner and
reflection calls inside the acting step (`model_call.purpose`), a computer-use workload
makes them separate steps whose only tool is `PLAN_TOOL` / `REFLECT_TOOL`
(`looplab.workloads.shape`); this one function reads both. An action's time runs from its
first step's start to the next action's first step (the last one's to the run's end), so
a run's actions add up to its task time after the first step's start.

Its parts (`PARTS`) come from `report.steps.step_rows`: the acting calls' TTFT, planned
prefill (the new screenshot and page text; `prefill_planned`), hidden reasoning and
visible decode; planner and reflection calls whole (`planning`); the browser's action,
page-load wait and observation capture, or a workload's drawn action and observation
time (`browser`); the rest (`other`: harness time, gaps between steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from looplab.report.data.records import RunRecord
from looplab.report.data.steps import StepRow, step_rows
from looplab.workloads.shape import PLAN_TOOL, REFLECT_TOOL

__all__ = ["LOOK_TOOLS", "PARTS", "Action", "actions", "is_action"]

LOOK_TOOLS = frozenset({"snapshot", "screenshot"})
"""Browser tools that only look at the page: a step calling nothing else is not an action."""
_DELIBERATION = frozenset({PLAN_TOOL, REFLECT_TOOL})

PARTS: dict[str, str] = {
    "prefill": "prefill (screenshot + page text)",
    "ttft": "TTFT",
    "reasoning": "hidden reasoning",
    "decode": "decode",
    "model": "model (unsplit)",
    "planning": "planning + reflection calls",
    "browser": "page loads + observation",
    "other": "harness, other",
}
"""An action's parts (key -> label), which add up to its time."""

_MODEL_PARTS = ("ttft", "prefill", "reasoning", "decode", "model")
_BROWSER_PARTS = ("tools", "act", "page_wait", "observe")


@dataclass
class Action:
    """One action of a run, with the steps that are part of its time."""

    index: int
    """0-based action index in the run."""
    start: float
    end: float
    """Run-axis seconds: the action's first step's start, the next action's (or run end)."""
    steps: list[int]
    """Indices of the steps it covers (the acting one and those around it)."""
    tools: tuple[str, ...]
    """The acting step's tool names."""
    parts: dict[str, float] = field(default_factory=dict)
    """Seconds per `PARTS` key; they add up to `seconds`."""

    @property
    def seconds(self) -> float:
        """The action's time."""
        return self.end - self.start


def is_action(row: StepRow) -> bool:
    """Whether a step acts (module docstring): a tool call that is neither look-only nor a
    workload's planner/reflection stand-in."""
    return any(t not in LOOK_TOOLS and t not in _DELIBERATION for t in row.tools)


def _group(rows: list[StepRow]) -> list[list[StepRow]]:
    """Steps grouped by action (module docstring), in order; [] when none acts."""
    groups: list[list[StepRow]] = []
    pending: list[StepRow] = []
    for row in rows:
        if is_action(row):
            groups.append([*pending, row])
            pending = []
        elif groups and row.tools and set(row.tools) <= {REFLECT_TOOL}:
            groups[-1].append(row)
        else:
            pending.append(row)
    if groups and pending:
        groups[-1].extend(pending)
    return groups


def _parts(row: StepRow, into: dict[str, float]) -> None:
    """Add a step's phases to an action's parts: a deliberation step's model time is
    planning, an acting or look-only step's is split as its model call was."""
    deliberates = bool(row.tools) and set(row.tools) <= _DELIBERATION
    for key in _MODEL_PARTS:
        value = row.parts.get(key) or 0.0
        into["planning" if deliberates else key] += value
    into["planning"] += row.parts.get("planning") or 0.0
    into["browser"] += sum(row.parts.get(k) or 0.0 for k in _BROWSER_PARTS)
    into["other"] += row.parts.get("overhead") or 0.0


def actions(record: RunRecord) -> list[Action]:
    """The run's actions in order (module docstring); [] when it has no trace or no
    acting step."""
    groups = _group(step_rows(record))
    found: list[Action] = []
    for index, group in enumerate(groups):
        start = group[0].start
        end = groups[index + 1][0].start if index + 1 < len(groups) else record.task_s
        end = max(end, start)
        parts = dict.fromkeys(PARTS, 0.0)
        for row in group:
            _parts(row, parts)
        parts["other"] += (end - start) - sum(parts.values())
        acting = next(r for r in group if is_action(r))
        steps = [r.index for r in group]
        found.append(Action(index, start, end, steps, acting.tools, parts))
    return found
