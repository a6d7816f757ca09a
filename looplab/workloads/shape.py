"""A task's shape: the sequence of steps a trace-driven run reproduces.

A `TaskShape` is what a trace-driven live run plays: per step, the visible output tokens
and hidden reasoning tokens the model emits, the prompt it should have reached (prompt
growth, so prefill and the prefix cache behave as in the real run), the tool calls it
asks for (recorded name, how long each lasts) and the harness's other time. It comes
either from one recorded trace (`shape_from_trace`, the exact shape) or from a workload
model's seeded draw (`looplab.workloads.sample.draw_shape`).

From a trace, per step k (one model call and the tool calls it asked for):

- `output_tokens` = completion - reasoning tokens; `reasoning_tokens` as recorded (None
  when the source did not say: the latency profile then decides);
- `prompt_tokens`, `cached_tokens` as recorded (None when absent);
- `tools`: the step's tool calls; their seconds are scaled so that they add up to the
  step's tools phase (`step.tool_s`, the wall time tools took outside the model call):
  calls that overlapped each other or the model call count once, as the recording did;
- `other_s` = the step's wall time (this model call's start to the next one's, or to
  the run's end) minus model time minus tools phase: the harness's own time, gaps
  included, so that `model + tools + other` adds up to the recorded task time. Model
  time here is what re-timing replaces (sent -> last token, or the whole call when
  those are absent); a recorded client queue and stream tail count as other time, as
  re-timing keeps them.

`shape_trace` turns a shape back into a looplab trace with zero-length model calls, so
the one re-timing function (`looplab replay --mode virtual`, `sweep`) predicts what the
shape takes at any profile.
"""

from __future__ import annotations

import hashlib
import re
import statistics
from datetime import UTC, datetime
from typing import Literal

from pydantic import Field

from looplab.config import StrictModel
from looplab.errors import TraceError
from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import EventBuilder
from looplab.traces.assembly.items import ModelDraft, RunEndDraft, StepDraft, ToolDraft
from looplab.traces.end_reason import EndReason
from looplab.traces.io import Trace
from looplab.traces.schema import (
    ModelCallEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)

__all__ = [
    "CONTINUE_TOOL",
    "PLAN_TOOL",
    "REFLECT_TOOL",
    "SHAPE_MARKER",
    "StepShape",
    "TaskShape",
    "ToolShape",
    "shape_from_trace",
    "shape_trace",
    "tool_name",
]

CONTINUE_TOOL = "continue"
"""Tool name a shape uses for a step that had no tool call but was not the last one (the
harness went on without one, e.g. after a malformed reply): the live loop needs a call
to go on, so this one does no work (0 s) and stands for the harness's answer."""

PLAN_TOOL = "plan"
"""Tool name of a planner call's step (computer-use workloads): it does no work (0 s) and
stands for handing the plan to the actor, so the live loop goes on to the next call."""
REFLECT_TOOL = "reflect"
"""Tool name of a reflection call's step, likewise."""

SHAPE_MARKER = re.compile(r"\[looplab-workload ([0-9a-f]{16})\]")
"""How a trace-driven run's first user message names its shape (`TaskShape.marker`): the
simulator's `workload` policy finds the shape it plays by this key, from the prompt
alone, as any policy must."""

_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]+")


def tool_name(recorded: str) -> str:
    """A recorded tool name as an OpenAI function name (`[a-zA-Z0-9_-]{1,64}`)."""
    name = _NAME_CHARS.sub("_", recorded).strip("_")[:64]
    return name or "tool"


class ToolShape(StrictModel):
    """One tool call of a step."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[a-zA-Z0-9_-]+$")
    """The recorded tool's name (as an OpenAI function name)."""
    seconds: float = Field(ge=0)
    """How long the call lasts (tool time)."""
    ok: bool = True
    """False when the recorded call failed (the synthetic tool then reports a failure)."""
    output_tokens: int | None = Field(default=None, ge=0)
    """Tokens of the result, used for prompt growth only when the next step's prompt is
    unknown (None: as few as possible)."""
    wait_s: float = Field(default=0.0, ge=0)
    """Observation time after the call's work (computer use: page-load wait, screenshot),
    spent inside the call after `seconds`."""

    @property
    def total_s(self) -> float:
        """The call's whole length: its work and its observation wait."""
        return self.seconds + self.wait_s


class StepShape(StrictModel):
    """One step: a model call and the tool calls it asks for."""

    output_tokens: int = Field(ge=0)
    """Visible output tokens (text plus tool calls)."""
    reasoning_tokens: int | None = Field(default=None, ge=0)
    """Hidden reasoning tokens; None: the latency profile's draw decides."""
    prompt_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens the call should see (prompt growth); None: not reproduced."""
    cached_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens served from the prefix cache, played as recorded (a backend without
    prompt caching: 0); None: the simulator's prefix cache decides."""
    tools: list[ToolShape] = Field(default_factory=list)
    """Tool calls, run one after another."""
    other_s: float = Field(default=0.0, ge=0)
    """Harness/other time of the step (neither model nor tools)."""
    role: Literal["act", "plan", "reflect"] = "act"
    """`act`: a call that acts (every step of a coding workload); `plan` / `reflect`: a
    computer-use agent's planner or reflection call around an action."""
    subagents: list[list[StepShape]] = Field(default_factory=list)
    """Sub-agents this step spawns (each its steps, one after another), run concurrently
    with each other and with the step's tools; the step ends when all have ended."""

    @property
    def tool_s(self) -> float:
        """The step's tools phase (observation waits included)."""
        return sum(tool.total_s for tool in self.tools)


class TaskShape(StrictModel):
    """A whole task's shape (see the module docstring)."""

    id: str = Field(min_length=1)
    """A readable id (the source run's id, or the model's name and the draw's seed)."""
    source: str
    """Where the shape comes from: `trace <path> (run <id>)` or `workload <name> seed N`."""
    steps: list[StepShape] = Field(min_length=1)
    """The steps, in order."""
    notes: list[str] = Field(default_factory=list)
    """What had to be filled in or changed (e.g. absent token counts)."""

    @property
    def key(self) -> str:
        """A content hash (16 hex digits) naming this exact shape (a shape without
        sub-agents hashes as it did before they existed)."""
        fanned = any(step.subagents for step in self.steps)
        exclude = None if fanned else {"steps": {"__all__": {"subagents"}}}
        return hashlib.sha256(self.model_dump_json(exclude=exclude).encode()).hexdigest()[:16]

    @property
    def actions(self) -> int:
        """Steps that act (planner and reflection calls are not actions)."""
        return sum(1 for step in self.steps if step.role == "act")

    @property
    def marker(self) -> str:
        """`[looplab-workload <key>]`: put in the prompt, it names this shape."""
        return f"[looplab-workload {self.key}]"

    @property
    def tool_names(self) -> list[str]:
        """Distinct tool names (sub-agents' included), in first-use order."""
        names: dict[str, None] = {}
        for step in self.steps:
            for steps in [[step], *step.subagents]:
                for tool in (t for s in steps for t in s.tools):
                    names.setdefault(tool.name, None)
        return list(names)

    def subagent_shape(self, step: int, index: int) -> TaskShape:
        """Sub-agent `index` of step `step` as a shape of its own (its id names both)."""
        steps = self.steps[step].subagents[index]
        return TaskShape(
            id=f"{self.id}-s{step}a{index}", source=f"{self.source}, sub-agent", steps=steps
        )

    def without_cache_hits(self) -> TaskShape:
        """A copy whose cache hits the simulator's prefix cache decides (cached = None)."""
        steps = [_uncached(step) for step in self.steps]
        note = "cache hits: the simulator's prefix cache"
        return self.model_copy(update={"steps": steps, "notes": [*self.notes, note]})

    def scaled(self, tool_scale: float = 1.0, other_scale: float = 1.0) -> TaskShape:
        """A copy with tool seconds and other time multiplied (benchmarks shorten tools),
        sub-agents' steps included."""
        if tool_scale == 1.0 and other_scale == 1.0:
            return self
        steps = [_scaled_step(step, tool_scale, other_scale) for step in self.steps]
        note = f"tool time x{tool_scale:g}, other time x{other_scale:g}"
        return self.model_copy(update={"steps": steps, "notes": [*self.notes, note]})


def _uncached(step: StepShape) -> StepShape:
    """`step` and its sub-agents' steps with cache hits left to the simulator."""
    subagents = [[_uncached(s) for s in sub] for sub in step.subagents]
    return step.model_copy(update={"cached_tokens": None, "subagents": subagents})


def _scaled_step(step: StepShape, tool_scale: float, other_scale: float) -> StepShape:
    """`step` with tool seconds and other time multiplied, its sub-agents' steps too."""
    tools = [
        t.model_copy(update={"seconds": t.seconds * tool_scale, "wait_s": t.wait_s * tool_scale})
        for t in step.tools
    ]
    subagents = [[_scaled_step(s, tool_scale, other_scale) for s in sub] for sub in step.subagents]
    update = {"tools": tools, "other_s": step.other_s * other_scale, "subagents": subagents}
    return step.model_copy(update=update)


def shape_from_trace(trace: Trace) -> TaskShape:
    """The exact shape of one recorded run (see the module docstring).

    Raises:
        TraceError: the trace is incomplete, has no model call, or no call has token counts.
    """
    where = str(trace.path) if trace.path else trace.header.run_id
    end = trace.end
    calls = sorted(trace.model_calls(), key=lambda c: (c.start, c.end))
    if end is None or not calls:
        raise TraceError(f"{where}: a shape needs a complete trace with model calls")
    known = [c.completion_tokens - (c.reasoning_tokens or 0) for c in calls if c.completion_tokens]
    if not known:
        raise TraceError(f"{where}: no model call has token counts; a shape needs them")
    fill = round(statistics.median(known))
    # keyed by (sub-run, step): each run of a tree numbers its own steps from 0
    steps_by_index = {(s.subrun, s.step): s for s in trace.steps() if s.step is not None}
    tools_by_step: dict[tuple[str | None, int], list[ToolCallEvent]] = {}
    for tool in trace.tool_calls():
        if tool.step is not None:
            tools_by_step.setdefault((tool.subrun, tool.step), []).append(tool)
    notes: list[str] = []
    shapes: list[StepShape] = []
    for position, call in enumerate(calls):
        following = calls[position + 1].start if position + 1 < len(calls) else end.end
        wall = max(0.0, following - call.start) + (call.start if position == 0 else 0.0)
        key = (call.subrun, call.step) if call.step is not None else None
        tools = tools_by_step.get(key, []) if key is not None else []
        step = steps_by_index.get(key) if key is not None else None
        phase = step.tool_s if step is not None else sum(t.duration_s for t in tools)
        output = (call.completion_tokens or 0) - (call.reasoning_tokens or 0)
        if call.completion_tokens is None:
            output = fill
            notes.append(f"step {position}: completion tokens absent, the run's median {fill}")
        tool_shapes = _tool_shapes(tools, phase)
        if not tool_shapes and position + 1 < len(calls):
            tool_shapes = [ToolShape(name=CONTINUE_TOOL, seconds=round(max(0.0, phase), 6))]
        model_s = _retimed_part(call)
        shapes.append(
            StepShape(
                output_tokens=max(0, output),
                reasoning_tokens=call.reasoning_tokens,
                prompt_tokens=call.prompt_tokens,
                cached_tokens=call.cached_tokens,
                tools=tool_shapes,
                other_s=round(max(0.0, wall - model_s - sum(t.seconds for t in tool_shapes)), 6),
            )
        )
    source = f"trace {where} (run {trace.header.run_id})"
    return TaskShape(id=trace.header.run_id, source=source, steps=shapes, notes=notes)


def _retimed_part(call: ModelCallEvent) -> float:
    """The part of a recorded call that re-timing replaces: without the client queue
    (scheduled -> sent) and the tail after the last token, which it keeps as recorded."""
    queue = (call.sent - call.start) if call.sent is not None else 0.0
    tail = (call.end - call.last_token) if call.last_token is not None else 0.0
    return max(0.0, call.end - call.start - queue - tail)


def _tool_shapes(tools: list[ToolCallEvent], phase: float) -> list[ToolShape]:
    """The step's calls, their seconds scaled to add up to the tools phase."""
    if not tools:
        return []
    durations = [max(0.0, t.duration_s) for t in tools]
    total = sum(durations)
    phase = max(0.0, phase)
    if total > 0:
        seconds = [d * phase / total for d in durations]
    else:
        seconds = [phase / len(tools)] * len(tools)
    return [
        ToolShape(name=tool_name(t.name), seconds=round(s, 6), ok=t.ok is not False)
        for t, s in zip(tools, seconds, strict=True)
    ]


def shape_trace(shape: TaskShape, run_id: str | None = None) -> Trace:
    """A looplab trace of `shape` whose model calls take no time (for virtual re-timing).

    Everything but model time is laid out as the shape says (tools one after another,
    then the other time), so re-timing it at a profile predicts the shape's task time.
    """
    run = run_id or f"shape-{shape.id}"
    created = datetime(2000, 1, 1, tzinfo=UTC)
    builder = EventBuilder(run, RunAxis(0.0))
    events: list[TraceEvent] = [builder.run_start(task=shape.id)]
    t = 0.0
    for index, step in enumerate(shape.steps):
        start = t
        call = ModelDraft(
            start=t,
            end=t,
            prompt_tokens=step.prompt_tokens,
            cached_tokens=step.cached_tokens,
            completion_tokens=step.output_tokens + (step.reasoning_tokens or 0),
            reasoning_tokens=step.reasoning_tokens,
        )
        tools = []
        for tool in step.tools:
            tools.append(ToolDraft(name=tool.name, start=t, end=t + tool.total_s))
            t += tool.total_s
        t += step.other_s
        events += builder.step(index, StepDraft(model=call, tools=tools, start=start, end=t))
    events.append(builder.run_end(RunEndDraft(end_reason=EndReason.FINISH, end_time=t)))
    header = TraceHeader(
        run_id=run,
        created=created,
        source="workload-shape",
        task=shape.id,
        clock="virtual",
        notes=[f"shape of {shape.source}", *shape.notes],
    )
    return Trace(header=header, events=events)
