"""The call-level (span) diff of two runs of one task, across sub-runs.

Each run becomes one sequence of calls: its top-level run's model and tool calls in time
order, then each sub-run's in run-tree order (`data/lanes.py`), so parallel sub-agents that
interleave differently at another speed still line up. A call's action is who made it
(`main`, or the sub-agent's name and its place among its parent's sub-runs) and what it
was (`model`, or the tool's name); the two sequences are aligned by the longest common
subsequence of actions (`views.diff.align`, the step diff's). Per aligned call: both
durations and B - A; calls only one run made are inserted (B) or removed (A). The
divergence is the first call that is not aligned. The critical path (at the recorded
timing, `analysis.graph.critical_path`) of both runs is compared: its length and the
sub-runs that bind it.
"""

from __future__ import annotations

from dataclasses import dataclass

from looplab.analysis.graph import critical_path
from looplab.report.data.records import RunRecord
from looplab.report.views.diff import align
from looplab.traces.schema import ModelCallEvent, ToolCallEvent

__all__ = ["Call", "SpanDiff", "SpanRow", "call_sequence", "span_diff"]


@dataclass(frozen=True)
class Call:
    """One model or tool call of a run."""

    who: str
    """`main`, or `<agent> #<n>` for a sub-run (n: its place among its parent's)."""
    what: str
    """`model` or the tool's name."""
    step: int | None
    start: float
    duration_s: float

    @property
    def action(self) -> str:
        """What the alignment compares."""
        return f"{self.who}: {self.what}"


@dataclass(frozen=True)
class SpanRow:
    """An aligned pair of calls, or a call only one run made."""

    a: Call | None
    b: Call | None
    status: str
    """`aligned`, `removed` (only in A) or `inserted` (only in B)."""

    @property
    def delta_s(self) -> float:
        """B - A seconds (a call only one run made counts in full)."""
        return (self.b.duration_s if self.b else 0.0) - (self.a.duration_s if self.a else 0.0)


@dataclass
class SpanDiff:
    """Two runs' calls aligned, with the divergence and the critical paths."""

    a_run: str
    b_run: str
    rows: list[SpanRow]
    divergence: int | None
    """Index into `rows` of the first call not aligned (None: every call aligned)."""
    critical_a_s: float
    critical_b_s: float
    binding_a: str
    binding_b: str
    """The sub-runs that bind each run's end (`main`: its own work)."""

    @property
    def aligned(self) -> int:
        """How many calls were aligned."""
        return sum(r.status == "aligned" for r in self.rows)


def call_sequence(record: RunRecord) -> list[Call]:
    """The run's calls, the top-level run's first, then each sub-run's (tree order)."""
    trace = record.trace
    if trace is None:
        return []
    who: dict[str | None, str] = {None: "main"}
    seen: dict[tuple[str | None, str], int] = {}
    for lane in record.subruns:
        agent = lane.agent or "sub-agent"
        key = (lane.parent, agent)
        seen[key] = seen.get(key, 0) + 1
        who[lane.id] = f"{who.get(lane.parent, 'main')} > {agent} #{seen[key]}"
    order = [None, *(lane.id for lane in record.subruns)]
    calls: list[Call] = []
    for run in order:
        own = [
            e
            for e in trace.events
            if e.subrun == run and isinstance(e, ModelCallEvent | ToolCallEvent)
        ]
        for e in sorted(own, key=lambda e: e.start):
            what = "model" if isinstance(e, ModelCallEvent) else e.name
            calls.append(Call(who[run], what, e.step, e.start, e.end - e.start))
    return calls


def _binding(record: RunRecord) -> tuple[float, str]:
    trace = record.trace
    if trace is None:
        return record.task_s, "main"
    path = critical_path(trace.events, lambda call: None)
    names = {lane.id: lane.name for lane in record.subruns}
    return path.task_s, " > ".join(names.get(b, b) for b in path.binding) or "main"


def span_diff(a: RunRecord, b: RunRecord) -> SpanDiff:
    """The call-level diff of `a` and `b` (B - A)."""
    calls_a, calls_b = call_sequence(a), call_sequence(b)
    pairs = align([c.action for c in calls_a], [c.action for c in calls_b])
    rows = [
        SpanRow(
            calls_a[i] if i is not None else None,
            calls_b[j] if j is not None else None,
            "aligned"
            if i is not None and j is not None
            else "removed"
            if j is None
            else "inserted",
        )
        for i, j in pairs
    ]
    divergence = next((k for k, r in enumerate(rows) if r.status != "aligned"), None)
    critical_a, binding_a = _binding(a)
    critical_b, binding_b = _binding(b)
    return SpanDiff(
        a_run=a.run_id,
        b_run=b.run_id,
        rows=rows,
        divergence=divergence,
        critical_a_s=critical_a,
        critical_b_s=critical_b,
        binding_a=binding_a,
        binding_b=binding_b,
    )
