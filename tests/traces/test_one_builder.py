"""One trace-event builder (`looplab.traces.assembly`): every producer emits through it."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest

from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import EventBuilder
from looplab.traces.assembly.items import ModelDraft, RunEndDraft, StepDraft, ToolDraft
from looplab.traces.assembly.split import step_split
from looplab.traces.schema import RunEndEvent, StepEvent, ToolCallEvent

PACKAGE = Path(__file__).resolve().parents[2] / "looplab"
BUILDER = PACKAGE / "traces" / "assembly"
EVENTS = {
    "RunStartEvent",
    "ModelCallEvent",
    "ToolCallEvent",
    "SandboxOpEvent",
    "StepEvent",
    "RunEndEvent",
    "Attempt",
}
"""The event models (and a model call's failed attempt) only the builder constructs."""


def _constructions(path: Path) -> list[str]:
    """Every `Event(...)` call of the module, as `file:line Name`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in EVENTS:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}")
    return found


def test_no_module_but_the_builder_constructs_trace_events() -> None:
    """The recorder, the proxy, the importers and the synthetic generators call the builder;
    none constructs a `RunStartEvent(`, `ModelCallEvent(`, ... itself."""
    offenders = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if BUILDER not in path.parents
        for hit in _constructions(path)
    ]
    assert offenders == []


def test_the_builder_constructs_every_event_kind() -> None:
    """The check above is not vacuous: the builder's own module constructs each kind."""
    hits = [hit for path in BUILDER.rglob("*.py") for hit in _constructions(path)]
    names = {hit.rsplit(" ", 1)[1] for hit in hits}
    assert names == EVENTS


def _builder(inferred: bool = False) -> EventBuilder:
    """A builder whose run axis starts at clock 100 s, 2026-01-01 UTC."""
    wall0 = datetime(2026, 1, 1, tzinfo=UTC)
    return EventBuilder("r", RunAxis(100.0, wall0), inferred=inferred)


def test_a_step_split_counts_parallel_tools_once_and_gaps_as_overhead() -> None:
    """Model 100-102; a tool streamed from 101.5 (its part before 102 is model time), two
    parallel tools 102-103 and 102.5-103.5, then a gap, then one 104-104.5: tool time is
    the union after the model call, and model + tools + overhead is the step's wall time."""
    builder = _builder()
    tools = [
        ToolDraft(name="a", start=101.5, end=102.2),
        ToolDraft(name="b", start=102.0, end=103.0),
        ToolDraft(name="c", start=102.5, end=103.5),
        ToolDraft(name="d", start=104.0, end=104.5),
    ]
    draft = StepDraft(model=ModelDraft(start=100.0, end=102.0), tools=tools, start=100.0, end=105.0)
    events = builder.step(0, draft)
    (step,) = [e for e in events if isinstance(e, StepEvent)]
    assert (step.start, step.end) == (0.0, 5.0)
    assert step.model_s == pytest.approx(2.0)
    assert step.tool_s == pytest.approx(1.5 + 0.5)
    assert step.overhead_s == pytest.approx(1.0)
    assert step.estimated == {}  # a live run's overlap is its definition, not an estimate
    assert [e.start for e in events if isinstance(e, ToolCallEvent)] == [1.5, 2.0, 2.5, 4.0]
    assert step.wall_time == datetime(2026, 1, 1, 0, 0, 0, tzinfo=UTC)


def test_the_agent_loop_records_split_their_steps_by_the_same_formula() -> None:
    """`step_split` with a reflection call after the tools: it adds to model time."""
    split = step_split(0.0, 10.0, (0.0, 3.0), [(3.0, 5.0)], [(1.0, 2.0), (6.0, 8.0)])
    assert split == (5.0, 2.0, 3.0)


def test_run_end_totals_are_the_sums_of_the_steps() -> None:
    """Two steps through the builder: run_end's model_s / tool_s sum their splits and it
    ends at the run's measured end."""
    builder = _builder()
    for index, base in enumerate((100.0, 110.0)):
        model = ModelDraft(start=base, end=base + 2.0)
        tool = ToolDraft(name="t", start=base + 2.0, end=base + 5.0)
        builder.step(index, StepDraft(model=model, tools=[tool]))
    end = builder.run_end(RunEndDraft(end_reason="finish", end_time=120.0))
    assert isinstance(end, RunEndEvent)
    assert (end.steps, end.model_s, end.tool_s, end.end) == (2, 4.0, 6.0, 20.0)


def test_an_import_without_timed_tools_has_an_absent_tool_total() -> None:
    """Read after the fact (`inferred`), a run whose tool calls have no times has tool_s
    None, said in the tool's `estimated`; a live run's total is a number."""
    for inferred, expected in ((True, None), (False, 0.0)):
        builder = _builder(inferred)
        step = StepDraft(model=ModelDraft(start=100.0, end=101.0), tools=[ToolDraft(name="t")])
        events = builder.step(0, step)
        tool = next(e for e in events if isinstance(e, ToolCallEvent))
        assert tool.estimated["start"].startswith("not in the source")
        assert builder.run_end(RunEndDraft()).tool_s == expected
