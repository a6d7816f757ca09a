"""Per-step timing of one run: the rows the step-aligned diff and the transcript share.

A step's wall time is split into the phases below; they add up to the step's wall time
(model time the phases do not cover, such as client queueing, the stream's tail and failed
attempts, is harness-side time and counted as overhead, as the run-level split does):

| phase       | what                                                                   |
|-------------|------------------------------------------------------------------------|
| `ttft`      | request sent -> first token of any kind, minus the planned prefill     |
| `prefill`   | the prompt's uncached tokens at the run's profile prefill rate (planned |
|             | by `looplab.latency.timing`, so estimated; None without a profile)    |
| `reasoning` | hidden reasoning decode                                                |
| `decode`    | first -> last visible token                                            |
| `model`     | a model call the source could not split (imported traces)             |
| `planning`  | the step's planning and reflection calls (`model_call.purpose`)        |
| `tools`     | the step's tool phase (parallel calls count once), less its browser    |
|             | phases:                                                                |
| `act`       | browser actions themselves (`tool_call.phases`)                        |
| `page_wait` | waiting for the page's load after an action                            |
| `observe`   | capturing the snapshot or screenshot the model sees                    |
| `overhead`  | the rest of the step's wall time                                       |

TTFT, prefill, reasoning and decode are the step's action call's (its only call, or the
one with `purpose: actor`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from looplab.latency.spec import recorded_profile
from looplab.latency.timing import TimingModel
from looplab.report.data.records import RunRecord
from looplab.traces.schema import ModelCallEvent, StepEvent, ToolCallEvent

__all__ = ["PHASES", "StepRow", "step_rows"]

PHASES: dict[str, str] = {
    "ttft": "TTFT",
    "prefill": "prefill",
    "reasoning": "reasoning",
    "decode": "decode",
    "model": "model (unsplit)",
    "planning": "planning + reflection",
    "tools": "tools",
    "act": "browser action",
    "page_wait": "page-load wait",
    "observe": "observation",
    "overhead": "overhead",
}
"""The phases of a step (key -> column label), in timeline order."""


@dataclass(frozen=True, slots=True)
class StepRow:
    """One step of a run: what it called and how long each phase took (seconds)."""

    index: int
    """0-based step index."""
    start: float
    end: float
    """Run-axis seconds of the step's start and end."""
    tools: tuple[str, ...]
    """Tool names in call order (empty: the model answered without a tool)."""
    arguments: tuple[str, ...]
    """The calls' arguments, as the model sent them."""
    parts: dict[str, float | None]
    """Seconds per `PHASES` key (None: the source does not know it)."""
    prefill_planned: bool
    """Whether `prefill` was planned from the profile (an estimate) rather than measured."""

    @property
    def signature(self) -> str:
        """What the step did, for alignment: its tool names (`(answer)` without tools)."""
        return " + ".join(self.tools) if self.tools else "(answer)"

    @property
    def wall_s(self) -> float:
        """The step's wall time."""
        return self.end - self.start


def step_rows(record: RunRecord, subrun: str | None = None) -> list[StepRow]:
    """The steps of the run (or of its sub-run `subrun`) in order (empty when the record
    has no trace)."""
    trace = record.trace
    if trace is None:
        return []
    own = trace.run_events(subrun)  # another run of the tree has its own steps
    calls: dict[int, ModelCallEvent] = {}
    side: dict[int, float] = defaultdict(float)
    for call in own.model_calls:
        if call.purpose in ("planner", "reflection"):
            side[call.step or 0] += call.end - call.start
        else:
            calls.setdefault(call.step or 0, call)
    tools: dict[int, list[ToolCallEvent]] = defaultdict(list)
    for tool in own.tool_calls:
        tools[tool.step or 0].append(tool)
    events = {s.step or 0: s for s in own.steps}
    indices = sorted(set(calls) | set(tools) | set(events))
    timing = _timing(record)
    return [
        _row(i, calls.get(i), tools.get(i, []), events.get(i), timing, side.get(i, 0.0))
        for i in indices
    ]


def _browser(event: StepEvent | None) -> dict[str, float]:
    """The step's browser phases, scaled down to its tool time where parallel calls
    make them add up to more."""
    if event is None:
        return {}
    split = {k: v for k, v in event.phases.items() if k in ("act", "page_wait", "observe")}
    total = sum(split.values())
    scale = event.tool_s / total if total > event.tool_s > 0 else 1.0
    return {k: v * scale for k, v in split.items()}


def _timing(record: RunRecord) -> TimingModel | None:
    profile = recorded_profile(record.profile_spec)
    return TimingModel.from_profile(profile) if profile is not None else None


def _row(
    index: int,
    call: ModelCallEvent | None,
    tools: list[ToolCallEvent],
    event: StepEvent | None,
    timing: TimingModel | None,
    planning: float = 0.0,
) -> StepRow:
    ordered = sorted(tools, key=lambda t: t.start)
    starts = [e.start for e in (call, event, *ordered) if e is not None]
    ends = [e.end for e in (call, event, *ordered) if e is not None]
    start, end = min(starts), max(ends)
    model_s = event.model_s if event else (call.end - call.start if call else 0.0)
    tool_s = event.tool_s if event else _union(ordered)
    parts: dict[str, float | None] = dict.fromkeys(PHASES, 0.0)
    planned = False
    ttft = call.ttft_s if call else None
    decode = call.decode_s if call else None
    if call is not None and ttft is not None and decode is not None:
        reasoning = call.reasoning_s or 0.0
        prefill = None
        if timing is not None and call.prompt_tokens is not None:
            prefill = min(ttft, timing.prefill_s(call.prompt_tokens, call.cached_tokens or 0))
            planned = True
        parts.update(
            ttft=ttft - (prefill or 0.0), prefill=prefill, reasoning=reasoning, decode=decode
        )
        rest = max(0.0, model_s - planning - ttft - reasoning - decode)
    else:
        parts.update(ttft=None, prefill=None, decode=None, model=model_s - planning)
        rest = 0.0
    parts["planning"] = planning
    browser = _browser(event)
    parts.update(browser)
    parts["tools"] = max(0.0, tool_s - sum(browser.values()))
    overhead = event.overhead_s if event else (end - start) - model_s - tool_s
    parts["overhead"] = max(0.0, overhead) + rest
    return StepRow(
        index=index,
        start=start,
        end=end,
        tools=tuple(t.name for t in ordered),
        arguments=tuple(t.arguments for t in ordered),
        parts=parts,
        prefill_planned=planned,
    )


def _union(tools: list[ToolCallEvent]) -> float:
    """Wall time covered by the calls (parallel calls count once)."""
    total, reach = 0.0, float("-inf")
    for tool in tools:
        if tool.end > reach:
            total += tool.end - max(tool.start, reach)
            reach = tool.end
    return total
