"""Per-run detail views of a report: the table of every run, the default step-aligned
diffs (one per task and compared group), and which runs carry their transcript.

A report file holds the transcripts of at most `limit` runs (the featured pair first,
then the runs of the default diffs, then the rest in table order) and at most
`TRANSCRIPT_CHARS` characters of transcript text, so 1,000 runs do not make a file of
hundreds of megabytes; the dashboard shows any run's transcript in full.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.analysis.divergence import replay_of
from looplab.report.data.records import RunRecord
from looplab.report.views.diff import DiffView, diff_view
from looplab.report.views.transcript import REPORT_OUTPUT_CHARS, TranscriptView, transcript

__all__ = [
    "TRANSCRIPTS",
    "TRANSCRIPT_CHARS",
    "RunRow",
    "default_pairs",
    "diff_views",
    "run_rows",
    "transcripts",
]

TRANSCRIPTS = 40
"""Default number of runs whose transcript a report file embeds."""

TRANSCRIPT_CHARS = 3_000_000
"""Characters of transcript text a report file embeds at most (outputs cut, see
`REPORT_OUTPUT_CHARS`)."""


@dataclass
class RunRow:
    """One run of the table of runs."""

    run_id: str
    anchor: str
    group: str
    task: str
    steps: int
    task_s: float
    model_s: float
    tool_s: float
    overhead_s: float
    success: bool | None
    clock: str
    source: str
    transcript: bool
    """Whether the file holds its transcript."""
    diffs: list[tuple[str, str]] = field(default_factory=list)
    """(diff id, label) of the default diffs it is a side of."""


def default_pairs(
    by_group: dict[str, list[RunRecord]], order: list[str]
) -> list[tuple[RunRecord, RunRecord]]:
    """Per task: the slowest group's first run (by run id) against the first run of every
    other group that ran the task."""
    pairs: list[tuple[RunRecord, RunRecord]] = []
    tasks = sorted({r.task for runs in by_group.values() for r in runs})
    for task in tasks:
        firsts = [
            min((r for r in by_group[g] if r.task == task), key=lambda r: r.run_id, default=None)
            for g in order
        ]
        present = [r for r in firsts if r is not None]
        pairs.extend((present[0], other) for other in present[1:])
    return pairs


def diff_views(pairs: Sequence[tuple[RunRecord, RunRecord]]) -> list[DiffView]:
    """The diff of each pair."""
    return [diff_view(a, b) for a, b in pairs]


def transcripts(
    records: Sequence[RunRecord],
    first: Sequence[str],
    limit: int,
    *,
    output_chars: int | None = REPORT_OUTPUT_CHARS,
) -> dict[str, TranscriptView]:
    """Transcripts of at most `limit` runs, runs named in `first` (run ids) first, within
    `TRANSCRIPT_CHARS`; keyed by run id."""
    by_id = {r.run_id: r for r in records}
    order = [*dict.fromkeys(i for i in first if i in by_id), *by_id]
    chosen: dict[str, TranscriptView] = {}
    used = 0
    for run_id in dict.fromkeys(order):
        if len(chosen) >= limit:
            break
        record = by_id[run_id]
        recorded = _recorded(record, by_id)
        view = transcript(record, output_chars=output_chars, recorded=recorded)
        if view is None:
            continue
        size = _size(view)
        if used + size > TRANSCRIPT_CHARS and chosen:
            break
        used += size
        chosen[run_id] = view
    return chosen


def _recorded(record: RunRecord, by_id: dict[str, RunRecord]) -> RunRecord | None:
    origin = replay_of(record.trace.header) if record.trace is not None else None
    return by_id.get(origin) if origin else None


def _size(view: TranscriptView) -> int:
    size = len(view.prompt or "")
    for step in view.steps:
        size += len(step.text or "") + sum(len(i) for i in step.images)
        size += sum(len(t.arguments) + len(t.output or "") + 200 for t in step.tools)
    return size


def run_rows(
    records: Sequence[RunRecord],
    order: list[str],
    diffs: Sequence[DiffView],
    embedded: set[str],
) -> list[RunRow]:
    """Every run, by task, group (slowest first) and run id."""
    sides: dict[str, list[tuple[str, str]]] = {}
    for diff in diffs:
        sides.setdefault(diff.a.run_id, []).append((diff.key, f"diff vs {diff.b.group}"))
        sides.setdefault(diff.b.run_id, []).append((diff.key, f"diff vs {diff.a.group}"))
    rank = {g: i for i, g in enumerate(order)}
    rows = [
        RunRow(
            run_id=r.run_id,
            anchor=r.anchor,
            group=r.group,
            task=r.task,
            steps=r.steps,
            task_s=r.task_s,
            model_s=r.model_s,
            tool_s=r.tool_s,
            overhead_s=r.overhead_s,
            success=r.success,
            clock=r.clock,
            source=r.source,
            transcript=r.run_id in embedded,
            diffs=sides.get(r.run_id, []),
        )
        for r in records
    ]
    rows.sort(key=lambda row: (row.task, rank.get(row.group, 0), row.run_id))
    return rows
