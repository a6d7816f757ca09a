"""The step-aligned diff of two runs of one task (two profiles, or a run and its replay).

Steps are aligned by what they did: the longest common subsequence of the runs' step
signatures (the tool names each step called, `looplab.report.data.steps`). Aligned steps whose
arguments differ are marked; steps only one run took are insertions or deletions. Per
aligned row the diff holds each phase's seconds in both runs and their difference (B - A),
and the cumulative gap: how far B is ahead (negative) or behind (positive) of A once both
have finished the row. That gap is the picture of compounding for one task.

When B is a live replay of A (or A of B), the replay's diverged steps are marked with
what changed (`looplab.analysis.divergence`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.analysis.divergence import find_divergences, replay_of
from looplab.report.data.records import RunRecord
from looplab.report.data.steps import PHASES, StepRow, step_rows
from looplab.report.views.graph import RunGraphView, run_graph

__all__ = ["MAX_CELLS", "DiffRow", "DiffRun", "DiffView", "align", "diff_key", "diff_view"]

MAX_CELLS = 4_000_000
"""Above this many (steps of A x steps of B) cells, steps are paired by position instead
of by a longest common subsequence (and the diff says so)."""


@dataclass
class DiffRun:
    """One side of a diff."""

    run_id: str
    anchor: str
    group: str
    task: str
    task_s: float
    steps: int
    success: bool | None
    clock: str


@dataclass
class DiffRow:
    """One aligned row: a step of A, a step of B, or both."""

    a: int | None
    b: int | None
    """0-based step indices (None: the run has no such step)."""
    signature: str
    status: str
    """`same`, `arguments differ`, `only in A`, `only in B`."""
    a_parts: dict[str, float | None] | None
    b_parts: dict[str, float | None] | None
    delta: dict[str, float | None]
    """B - A per phase; a step only one run took counts in full (B's value, or minus A's);
    None where a run does not know the value."""
    a_s: float | None
    b_s: float | None
    """The step's wall time in each run."""
    gap_s: float
    """Cumulative: B's elapsed minus A's elapsed once both finished this row."""
    diverged: str = ""
    """What a live replay did differently at this step (empty: nothing)."""


@dataclass
class DiffView:
    """The step-aligned diff of runs A and B."""

    key: str
    """HTML id (`diff-...`), stable for the pair."""
    task: str
    a: DiffRun
    b: DiffRun
    rows: list[DiffRow]
    totals: dict[str, tuple[float, float]]
    """Per phase: (A's sum, B's sum) over the runs' steps."""
    matched: int
    only_a: int
    only_b: int
    notes: list[str] = field(default_factory=list)
    trees: tuple[RunGraphView | None, RunGraphView | None] = (None, None)
    """A's and B's trees of sub-runs (None: flat); the rows align top-level steps only."""


def diff_key(a: RunRecord, b: RunRecord) -> str:
    """The HTML id of the diff of `a` and `b`."""
    digest = hashlib.sha1(f"{a.run_id}\n{b.run_id}".encode()).hexdigest()[:12]
    return f"diff-{digest}"


def align(a: Sequence[str], b: Sequence[str]) -> list[tuple[int | None, int | None]]:
    """Pairs of indices of a longest common subsequence of `a` and `b`, with the elements
    outside it as (i, None) or (None, j), in order (deletions before insertions)."""
    n, m = len(a), len(b)
    if n * m > MAX_CELLS:
        return [(i if i < n else None, i if i < m else None) for i in range(max(n, m))]
    # suffix table: lengths[i][j] = LCS length of a[i:] and b[j:]
    lengths = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = lengths[i], lengths[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    pairs: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            pairs.append((i, None))
            i += 1
        else:
            pairs.append((None, j))
            j += 1
    pairs.extend((k, None) for k in range(i, n))
    pairs.extend((None, k) for k in range(j, m))
    return pairs


def diff_view(a: RunRecord, b: RunRecord) -> DiffView:
    """The step-aligned diff of two runs (A is the reference: deltas are B - A)."""
    steps_a, steps_b = step_rows(a), step_rows(b)
    pairs = align([s.signature for s in steps_a], [s.signature for s in steps_b])
    diverged = _divergences(a, b)
    rows: list[DiffRow] = []
    elapsed_a = elapsed_b = 0.0
    for i, j in pairs:
        sa = steps_a[i] if i is not None else None
        sb = steps_b[j] if j is not None else None
        if sa is not None:
            elapsed_a = sa.end
        if sb is not None:
            elapsed_b = sb.end
        rows.append(_row(sa, sb, elapsed_b - elapsed_a, diverged))
    notes = []
    if len(steps_a) * len(steps_b) > MAX_CELLS:
        notes.append("too many steps to align by tool calls: steps paired by position")
    if any(s.prefill_planned for s in (*steps_a, *steps_b)):
        notes.append(
            "prefill is planned from each run's latency profile (prompt tokens at its "
            "prefill rate), an estimate; TTFT is the rest of the time to the first token"
        )
    if a.task != b.task:
        notes.append(f"different tasks: {a.task} vs {b.task}")
    return DiffView(
        key=diff_key(a, b),
        task=a.task,
        a=_side(a),
        b=_side(b),
        rows=rows,
        totals={k: (_sum(steps_a, k), _sum(steps_b, k)) for k in PHASES},
        matched=sum(1 for i, j in pairs if i is not None and j is not None),
        only_a=sum(1 for _, j in pairs if j is None),
        only_b=sum(1 for i, _ in pairs if i is None),
        notes=notes,
        trees=(run_graph(a.trace), run_graph(b.trace)),
    )


def _row(
    sa: StepRow | None, sb: StepRow | None, gap: float, diverged: dict[tuple[str, int], str]
) -> DiffRow:
    if sa is not None and sb is not None:
        status = "same" if sa.arguments == sb.arguments else "arguments differ"
    else:
        status = "only in A" if sb is None else "only in B"
    delta: dict[str, float | None] = {}
    for key in PHASES:
        # a step only one run took counts in full (its absence in the other is 0 s)
        va = sa.parts.get(key) if sa else 0.0
        vb = sb.parts.get(key) if sb else 0.0
        delta[key] = vb - va if va is not None and vb is not None else None
    either = sa or sb
    return DiffRow(
        a=sa.index if sa else None,
        b=sb.index if sb else None,
        signature=either.signature if either else "",
        status=status,
        a_parts=sa.parts if sa else None,
        b_parts=sb.parts if sb else None,
        delta=delta,
        a_s=sa.wall_s if sa else None,
        b_s=sb.wall_s if sb else None,
        gap_s=gap,
        diverged=(diverged.get(("a", sa.index), "") if sa else "")
        or (diverged.get(("b", sb.index), "") if sb else ""),
    )


def _divergences(a: RunRecord, b: RunRecord) -> dict[tuple[str, int], str]:
    """The replay side's diverged steps ((side, step index) -> what changed)."""
    if a.trace is None or b.trace is None:
        return {}
    if replay_of(b.trace.header) == a.run_id:
        side, found = "b", find_divergences(a.trace, b.trace)
    elif replay_of(a.trace.header) == b.run_id:
        side, found = "a", find_divergences(b.trace, a.trace)
    else:
        return {}
    return {(side, d.step): f"{d.tool}: {d.recorded} -> {d.replayed}" for d in found}


def _side(record: RunRecord) -> DiffRun:
    return DiffRun(
        run_id=record.run_id,
        anchor=record.anchor,
        group=record.group,
        task=record.task,
        task_s=record.task_s,
        steps=record.steps,
        success=record.success,
        clock=record.clock,
    )


def _sum(steps: list[StepRow], key: str) -> float:
    return sum(s.parts.get(key) or 0.0 for s in steps)
