"""What traces say about each workload parameter: values, and whether they were measured.

`observe(traces)` reads every trace's exact shape (`shape_from_trace`) and collects, per
parameter, the observed values with their provenance: an observation is *estimated* when
the trace names the field it comes from in the event's `estimated` (importers do, with
how: "previous message timestamp -> assistant message timestamp"), else *measured*. A
value the source did not have is not observed at all (never invented): a parameter with
no observation is *absent*.

Which event fields each parameter rests on:

| parameter | from | estimated when `estimated` names |
|---|---|---|
| steps, tool_calls, tool_names | event counts | (counts are measured) |
| output_tokens | model_call completion - reasoning | completion_tokens, reasoning_tokens |
| reasoning_tokens | model_call reasoning_tokens | reasoning_tokens |
| initial/new_prompt_tokens | model_call prompt_tokens | prompt_tokens |
| cached_share | cached_tokens / prompt_tokens | cached_tokens, prompt_tokens |
| tool_s | tool_call durations scaled to the tools phase | any tool_call field; step tool_s |
| other_s | step wall - model - tools | model_call times; step overhead_s; tool_s |
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from looplab.errors import TraceError
from looplab.traces.io import Trace
from looplab.traces.schema import ModelCallEvent, StepEvent, ToolCallEvent, TraceHeader
from looplab.workloads.shape import CONTINUE_TOOL, TaskShape, shape_from_trace

__all__ = ["PARAMETERS", "Observation", "Observations", "observe", "trace_label"]

PARAMETERS: dict[str, str] = {
    "steps": "task",
    "output_tokens": "step",
    "reasoning_tokens": "step",
    "initial_prompt_tokens": "task",
    "new_prompt_tokens": "step",
    "cached_share": "step",
    "tool_calls": "step",
    "tool_s": "call",
    "other_s": "step",
}
"""Parameter name -> what one observation is of (a task, a step, a tool call)."""

_MODEL_TIME_FIELDS = ("start", "end", "sent", "first_token", "last_token", "model_s")


@dataclass
class Observation:
    """The values of one parameter and where they came from."""

    values: list[float] = field(default_factory=list)
    estimated: int = 0
    how: dict[str, None] = field(default_factory=dict)
    traces: dict[str, None] = field(default_factory=dict)

    def add(self, value: float, run_id: str, how: Iterable[str] = ()) -> None:
        """One observation; estimated when `how` names a derivation."""
        notes = list(how)
        self.values.append(float(value))
        self.traces.setdefault(run_id, None)
        if notes:
            self.estimated += 1
            for note in notes:
                self.how.setdefault(note, None)


@dataclass
class Observations:
    """Everything `observe` found: per-parameter values, tool names, the task shapes."""

    parameters: dict[str, Observation] = field(
        default_factory=lambda: {name: Observation() for name in PARAMETERS}
    )
    tool_names: Counter[str] = field(default_factory=Counter)
    tool_name_traces: dict[str, None] = field(default_factory=dict)
    shapes: list[TaskShape] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    """How each used trace is named in provenance (its run id, made unique)."""
    headers: list[TraceHeader] = field(default_factory=list)
    """The used traces' headers, in the same order."""
    skipped: list[str] = field(default_factory=list)
    """Traces that could not be used, with the reason."""


def _how(event: ModelCallEvent | ToolCallEvent | StepEvent, keys: Sequence[str]) -> list[str]:
    return [event.estimated[key] for key in keys if key in event.estimated]


def observe(traces: Sequence[Trace]) -> Observations:
    """Observations of every parameter over `traces` (see the module docstring)."""
    out = Observations()
    ids = Counter(trace.header.run_id for trace in traces)
    for trace in traces:
        try:
            shape = shape_from_trace(trace)
        except TraceError as exc:
            out.skipped.append(str(exc))
            continue
        label = trace_label(trace, repeated=ids[trace.header.run_id] > 1)
        out.shapes.append(shape)
        out.labels.append(label)
        out.headers.append(trace.header)
        _observe_trace(trace, shape, label, out)
    return out


def trace_label(trace: Trace, *, repeated: bool = False) -> str:
    """A trace's name in provenance: its run id, plus its file's name when another
    input has the same run id (e.g. one instance run by two configurations)."""
    if not repeated:
        return trace.header.run_id
    source = trace.header.source_path or (str(trace.path) if trace.path else "")
    return f"{trace.header.run_id} ({Path(source).name})" if source else trace.header.run_id


def _observe_trace(trace: Trace, shape: TaskShape, run: str, out: Observations) -> None:
    p = out.parameters
    p["steps"].add(len(shape.steps), run)
    calls = sorted(trace.model_calls(), key=lambda c: (c.start, c.end))
    # keyed by (sub-run, step): each run of a tree numbers its own steps from 0
    steps: dict[tuple[str | None, int | None], StepEvent] = {
        (s.subrun, s.step): s for s in trace.steps() if s.step is not None
    }
    tools_by_step: dict[tuple[str | None, int | None], list[ToolCallEvent]] = {}
    for tool in trace.tool_calls():
        tools_by_step.setdefault((tool.subrun, tool.step), []).append(tool)
    previous: ModelCallEvent | None = None
    for call, step_shape in zip(calls, shape.steps, strict=True):
        key = (call.subrun, call.step)
        step = steps.get(key) if call.step is not None else None
        tools = tools_by_step.get(key, []) if call.step is not None else []
        if call.completion_tokens is not None:
            keys = ("completion_tokens", "reasoning_tokens")
            p["output_tokens"].add(step_shape.output_tokens, run, _how(call, keys))
        if call.reasoning_tokens is not None:
            p["reasoning_tokens"].add(call.reasoning_tokens, run, _how(call, ["reasoning_tokens"]))
        if previous is None and call.prompt_tokens is not None:
            p["initial_prompt_tokens"].add(call.prompt_tokens, run, _how(call, ["prompt_tokens"]))
        if previous is not None and None not in (call.prompt_tokens, previous.prompt_tokens):
            growth = (call.prompt_tokens or 0) - (previous.prompt_tokens or 0)
            how = _how(call, ["prompt_tokens"]) + _how(previous, ["prompt_tokens"])
            p["new_prompt_tokens"].add(growth, run, how)
        if previous is not None and call.cached_tokens is not None and call.prompt_tokens:
            share = min(1.0, call.cached_tokens / call.prompt_tokens)
            p["cached_share"].add(share, run, _how(call, ["cached_tokens", "prompt_tokens"]))
        recorded = [t for t in step_shape.tools if t.name != CONTINUE_TOOL or tools]
        p["tool_calls"].add(len(recorded), run)
        tool_how = [note for t in tools for note in t.estimated.values()]
        tool_how += _how(step, ["tool_s"]) if step is not None else []
        for played in recorded:
            out.tool_names[played.name] += 1
            out.tool_name_traces.setdefault(run, None)
            p["tool_s"].add(played.seconds, run, tool_how)
        other_how = _how(call, _MODEL_TIME_FIELDS) + tool_how
        other_how += _how(step, ["overhead_s"]) if step is not None else []
        p["other_s"].add(step_shape.other_s, run, other_how)
        previous = call
