"""Whether the compared groups are alike: same cells (task x repetition), same clock, same
kind of source. What differs is named, loudly, and the headline is computed over the
matched cells only (cells every group ran).

A cell is a task and a repetition (the experiment cell's `repetition`; runs without one
are numbered in run-id order within their group and task), so unequal repetitions match
as many repetitions as both groups have.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.report.data.records import RunRecord

__all__ = ["Comparability", "cell_key", "comparability", "comparability_per_key", "keyed"]

_CLOCKS = {
    "wall": "wall clock (measured)",
    "virtual": "virtual clock (model times computed from the profile)",
    "recorded": "recorded by another harness",
}


@dataclass
class Comparability:
    """What the compared groups share and what differs between them."""

    matched_tasks: list[str]
    """Tasks every group ran."""
    matched_cells: int
    """Cells (task x repetition) every group ran."""
    cells: dict[str, int]
    """Per group: its cells."""
    only: dict[str, list[str]] = field(default_factory=dict)
    """Per group: tasks not every group ran."""
    issues: list[str] = field(default_factory=list)
    """What differs, as sentences (empty: the groups are alike)."""

    @property
    def alike(self) -> bool:
        """True when nothing differs."""
        return not self.issues


def cell_key(record: RunRecord, fallback: int) -> tuple[str, int]:
    """(task, repetition) of a run; `fallback` when its cell has no repetition."""
    value = _repetition(record)
    return record.task, value if value is not None else fallback


def _repetition(record: RunRecord) -> int | None:
    trace = record.trace
    return trace.header.cell.repetition if trace is not None else None


def keyed(runs: Sequence[RunRecord]) -> dict[tuple[str, int], list[RunRecord]]:
    """A group's runs by cell."""
    by_task: dict[str, list[RunRecord]] = defaultdict(list)
    for run in runs:
        by_task[run.task].append(run)
    cells: dict[tuple[str, int], list[RunRecord]] = defaultdict(list)
    for task_runs in by_task.values():
        for index, run in enumerate(sorted(task_runs, key=lambda r: r.run_id)):
            cells[cell_key(run, index)].append(run)
    return cells


def comparability(by_group: dict[str, list[RunRecord]], order: list[str]) -> Comparability:
    """Compare the groups' cells, clocks and sources."""
    cells = {g: keyed(by_group[g]) for g in order}
    tasks = {g: {t for t, _ in cells[g]} for g in order}
    matched_tasks = set.intersection(*tasks.values()) if order else set()
    matched = set.intersection(*(set(c) for c in cells.values())) if order else set()
    result = Comparability(
        matched_tasks=sorted(matched_tasks),
        matched_cells=len(matched),
        cells={g: len(cells[g]) for g in order},
    )
    if len(order) < 2:
        return result
    for group in order:
        extra = sorted(tasks[group] - matched_tasks)
        if extra:
            result.only[group] = extra
    if result.only:
        listed = "; ".join(
            f"only {g} ran {len(t)} task{'s' if len(t) != 1 else ''} ({', '.join(t[:4])}"
            f"{', ...' if len(t) > 4 else ''})"
            for g, t in result.only.items()
        )
        result.issues.append(f"Different task sets: {listed}.")
    repetitions = {g: _repetitions(cells[g], matched_tasks) for g in order}
    if len(set(repetitions.values())) > 1:
        listed = ", ".join(f"{g} {r}" for g, r in repetitions.items())
        result.issues.append(f"Different repetitions per task: {listed}.")
    clocks = {g: sorted({r.clock for r in by_group[g]}) for g in order}
    if len({tuple(c) for c in clocks.values()}) > 1:
        listed = "; ".join(
            f"{g}: {', '.join(_CLOCKS.get(c, c) for c in cs)}" for g, cs in clocks.items()
        )
        result.issues.append(f"Different clocks: {listed}.")
    sources = {g: sorted({r.source for r in by_group[g]}) for g in order}
    if len({tuple(s) for s in sources.values()}) > 1:
        listed = "; ".join(f"{g}: {', '.join(s)}" for g, s in sources.items())
        result.issues.append(f"Different sources: {listed} (timed by different harnesses).")
    return result


def _repetitions(cells: dict[tuple[str, int], list[RunRecord]], tasks: set[str]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for task, _ in cells:
        if task in tasks:
            counts[task] += 1
    values = sorted(set(counts.values()))
    if not values:
        return "none"
    low, high = values[0], values[-1]
    return f"{low} per task" if low == high else f"{low}-{high} per task"


def comparability_per_key(
    by_group: dict[str, list[RunRecord]], parts: list[list[str]], labels: list[str]
) -> Comparability:
    """`comparability` within each comparison group (`parts`: each key's groups, `labels`:
    each key's label), merged: what differs between two keys (their task sets, clocks,
    sources) is by design and never pooled, so it is no issue, unless the inputs share no
    key at all (two inputs compared side by side that cannot be) or a key has a single
    profile (its counterpart fell into another key: what differs is said); what differs
    between the profiles of one key is, prefixed with the key's label when there are
    several."""
    merged = Comparability(matched_tasks=[], matched_cells=0, cells={})
    inputs: dict[str, set[str]] = defaultdict(set)
    for part, label in zip(parts, labels, strict=True):
        for group in part:
            for run in by_group[group]:
                inputs[run.input_name].add(label)
    if len(inputs) > 1 and not set.intersection(*inputs.values()):
        listed = "; ".join(f"{name}: {', '.join(sorted(ls))}" for name, ls in inputs.items())
        merged.issues.append(
            f"The inputs share no comparison group (agent, task set, clock): {listed}; each "
            "is compared within itself, never pooled."
        )
    for part, label in zip(parts, labels, strict=True):
        one = comparability(by_group, part)
        merged.matched_tasks += one.matched_tasks
        merged.matched_cells += one.matched_cells
        merged.cells.update(one.cells)
        merged.only.update(one.only)
        prefix = f"{label}: " if len(parts) > 1 else ""
        merged.issues += [prefix + issue for issue in one.issues]
        if len(part) > 1 and one.matched_cells == 0 and len(parts) > 1:
            merged.issues.append(f"{label}: no cell is shared: no figure for it.")
    if len(parts) > 1 and any(len(part) < 2 for part in parts):
        # a group with one profile: the profiles meant to be compared fell into different
        # groups (another clock, task set or agent); say what differs between them
        merged.issues += comparability(by_group, [g for part in parts for g in part]).issues
    return merged
