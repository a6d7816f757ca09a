"""A hypothesis strategy of flat trace sets: several agents, task sets, clocks, profiles,
prices and failed runs, as `RunRecord`s grouped the way the report groups them.

`trace_sets()` draws a `TraceSet`: per (agent, task set), a clock, two or three profiles
(slow-80, mid-300 unpriced, fast-750), each with a price entry (its own, swapped so the
faster one is cheaper, or none), one to seven tasks, one or two repetitions, model and
tool seconds per step, and a share of unsolved runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import strategies as st

from looplab.report.build import assign_groups
from looplab.report.data.pairing import by_profile, comparison_groups
from looplab.report.data.records import RunRecord
from looplab.traces.identity import Clock
from tests.invariants.flat import PROFILES, RunSpec, flat_run

__all__ = ["TraceSet", "build", "grouped", "trace_sets"]

AGENTS = ("coding", "my-agent")
TASK_SETS = ("coding", "app", "workload/mini-swe-agent-deepseek")
PRICES = ("openai-gpt-5.4-standard", "openai-gpt-5.4-codex-fast", None, "default")


@dataclass(frozen=True)
class TraceSet:
    """The drawn runs' specs (built by `build`)."""

    specs: tuple[RunSpec, ...]


def _task(task_set: str, index: int) -> str:
    """A task of `task_set` (a workload's draws are repetitions of its one id)."""
    return task_set if task_set.startswith("workload/") else f"{task_set}/t{index}"


@st.composite
def _group_specs(draw: st.DrawFn, agent: str, task_set: str) -> list[RunSpec]:
    clock: Clock = "virtual" if draw(st.booleans()) else "wall"
    profiles = draw(
        st.sampled_from((("slow-80", "fast-750"), ("slow-80", "mid-300", "fast-750"), ("slow-80",)))
    )
    prices = {p: draw(st.sampled_from(PRICES)) for p in profiles}
    tasks = 1 if task_set.startswith("workload/") else draw(st.integers(1, 7))
    repetitions = draw(st.integers(1, 3 if task_set.startswith("workload/") else 2))
    unsolved = draw(st.floats(0.0, 0.4))
    specs: list[RunSpec] = []
    for index in range(tasks):
        base = draw(st.floats(0.5, 6.0))
        tool = draw(st.floats(0.0, 3.0))
        for rep in range(repetitions):
            for profile in profiles:
                rate, _ = PROFILES[profile]
                noise = draw(st.floats(0.8, 1.25))
                fail = draw(st.floats(0.0, 1.0))
                specs.append(
                    RunSpec(
                        agent=agent,
                        task=_task(task_set, index),
                        profile=profile,
                        repetition=rep,
                        clock=clock,
                        model_s=base * 80.0 / rate * noise + 0.2,
                        tool_s=tool,
                        steps=2 + index % 3,
                        completion_tokens=50 + 40 * index,
                        success=fail >= unsolved,
                        price=prices[profile],
                    )
                )
    return specs


@st.composite
def trace_sets(draw: st.DrawFn) -> TraceSet:
    """One to three comparison groups of runs (see the module doc)."""
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(AGENTS), st.sampled_from(TASK_SETS)),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    specs: list[RunSpec] = []
    for agent, task_set in pairs:
        group = draw(_group_specs(agent, task_set))
        specs += group
    return TraceSet(tuple(specs))


def build(trace_set: TraceSet, *, scale_unsolved: float = 1.0) -> list[RunRecord]:
    """The set's records, grouped as the report groups them; unsolved runs' step times
    multiplied by `scale_unsolved` (a figure that ignores them does not move)."""
    records = [
        flat_run(
            spec
            if spec.success is not False
            else replace(spec, model_s=spec.model_s * scale_unsolved)
        )
        for spec in trace_set.specs
    ]
    assign_groups(records)
    return records


def grouped(records: list[RunRecord]) -> tuple[dict[str, list[RunRecord]], list[str]]:
    """(runs by group label, labels slowest first within each comparison group), as the
    report model orders them (every drawn profile has a decode rate)."""
    by_group: dict[str, list[RunRecord]] = {}
    for runs in comparison_groups(records).values():
        by_group.update(by_profile(runs))
    return by_group, list(by_group)
