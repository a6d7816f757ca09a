"""The report model: every view's numbers, computed from run records (no rendering here).

Groups are the compared backends (profiles), ordered slowest first; the slowest is the
reference every speedup is measured against. A speedup is computed over runs that are not
known to have failed their check (imported runs without a verdict count), paired by task:
only tasks such runs exist for in both groups; the headline sentence says how many tasks
and runs it rests on and how many runs were unsolved, and gives no number at all when no
task pairs up (a broken environment must not produce a confident figure). `build_model`
returns plain dataclasses that `render.py` draws and `asdict` serializes (the JSON
embedded in each report).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.report.claims.rows import ClaimView
from looplab.report.claims.views import claim_view
from looplab.report.data.knobs import KnobRow, knob_rows
from looplab.report.data.pairing import ComparisonKey, arm_model, claim_groups, comparison_key
from looplab.report.data.records import RunRecord
from looplab.report.views.bottom_line import BottomLine, bottom_lines, picked_caps
from looplab.report.views.choice import ChoiceView, choice_views
from looplab.report.views.compare import Comparability, comparability_per_key, keyed
from looplab.report.views.detail import (
    TRANSCRIPTS,
    RunRow,
    default_pairs,
    diff_views,
    run_rows,
    transcripts,
)
from looplab.report.views.diff import DiffView
from looplab.report.views.group import GroupView, headline_sentence
from looplab.report.views.money import CapsView, MoneyView, caps_view, money_view
from looplab.report.views.nodes import NodeRow, node_rows
from looplab.report.views.runs import TaskRow, TimelineView, featured, task_rows, timeline
from looplab.report.views.speedup import paired_speedup
from looplab.report.views.steps import SlowdownRow, StepLatencyView, slowdown_rows, step_latency
from looplab.report.views.success import SuccessView, success_view
from looplab.report.views.sweep import SweepView, sweep_view
from looplab.report.views.time_split import (
    COMPONENTS,
    FamilyView,
    components,
    compounding,
    families,
    mean_components,
    planning_by_group,
    task_breakdown,
)
from looplab.report.views.transcript import TranscriptView
from looplab.stats.intervals import CurvePoint, cdf_points, median, quantile
from looplab.traces.inputs import SetAside

__all__ = [
    "COMPONENTS",
    "PALETTE",
    "FamilyView",
    "ReportModel",
    "SweepView",
    "TaskRow",
    "TimelineView",
    "build_model",
    "components",
    "headline",
]

PALETTE = ["#D55E00", "#0072B2", "#CC79A7", "#009E73", "#56B4E9", "#E69F00", "#000000"]
"""Profile colours (Okabe-Ito, colour-blind safe), assigned slowest first."""

FIXED_COLORS = {"slow-80": "#D55E00", "fast-750": "#0072B2"}
"""The mission's pair keeps its colours in every report (vermillion slow, blue fast)."""


@dataclass
class ReportModel:
    """Everything a report shows."""

    title: str
    inputs: list[str]
    runs: int
    groups: list[GroupView]
    sentence: str
    compounding: dict[str, list[CurvePoint]]
    families: list[FamilyView]
    length_points: dict[str, list[tuple[float, float, str]]]
    """Per group: (steps, task s, task) of every run (task time vs task length)."""
    breakdown_groups: dict[str, dict[str, float]]
    """Mean seconds per run by component; for runs with sub-agents, of the critical path."""
    breakdown_tasks: list[tuple[str, str, dict[str, float]]]
    sweep: SweepView | None
    step_latency: StepLatencyView | None
    """Model latency per step against step index and context length."""
    slowdown: list[SlowdownRow]
    """Task time split into "more steps" and "slower steps" (context growth)."""
    distributions: dict[str, dict[str, list[tuple[float, float]]]]
    tasks: list[TaskRow]
    featured: list[TimelineView]
    timelines: list[TimelineView]
    notes: list[str] = field(default_factory=list)
    comparability: Comparability | None = None
    """What the groups share and what differs (the headline uses matched cells only)."""
    diffs: list[DiffView] = field(default_factory=list)
    nodes: list[NodeRow] = field(default_factory=list)
    """Per-node medians when the runs ran on more than one node (else empty)."""
    knobs: list[KnobRow] = field(default_factory=list)
    """The knob table (`report/data/knobs.py`) when the runs have axes (else empty)."""
    """The default step-aligned diffs: per task, the slowest group's run against each
    other group's."""
    transcripts: dict[str, TranscriptView] = field(default_factory=dict)
    """The transcripts the report embeds, by run id (bounded: `views_detail`)."""
    run_rows: list[RunRow] = field(default_factory=list)
    """Every run, for the table of runs."""
    planning: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per group whose runs made planning or reflection calls: their share of task time."""
    bottom_lines: list[BottomLine] = field(default_factory=list)
    """One sentence per comparison group (`views/bottom_line.py`), shown before the claim."""
    claim: ClaimView | None = None
    """The claim check: these runs, the shipped corpus re-timed, the Amdahl band and the
    published claims side by side (`views_claim`)."""
    money: MoneyView | None = None
    """Cost per task per agent and profile, the price of waiting (`views/money.py`)."""
    caps: CapsView | None = None
    total_work: dict[str, float] = field(default_factory=dict)
    """Per group with runs that have sub-agents: their mean total work per run (every
    branch's own time summed; `RunRecord.work_s`), shown beside the critical-path split."""
    """Success-under-cap curves: these runs and the corpus re-timed (`views/money.py`)."""
    set_aside: list[SetAside] = field(default_factory=list)
    """Trace files found but not counted, and why (named in every view of the report)."""
    choice: list[ChoiceView] = field(default_factory=list)
    """Which to use: per pair of arms with checked runs, the policy table and behaviour
    shift (`views/choice.py`)."""
    success: SuccessView | None = None
    """Success-aware figures per arm on paired tasks, under the deadline
    (`views/success.py`)."""

    def color(self, group: str) -> str:
        """The colour of a group (the same in every view); a bare profile name that is no
        group's label (the corpus re-timed at slow-80 and fast-750) gets the mission
        pair's fixed colour, else grey."""
        fallback = FIXED_COLORS.get(group, "#666666")
        return next((g.color for g in self.groups if g.label == group), fallback)


def headline(records: Sequence[RunRecord]) -> list[GroupView]:
    """Per group, slowest first: median/p90 task time, solved, steps, split, speedup + CI,
    over the cells every group ran (`views_compare`).

    The summary `looplab run` prints and the report's headline table.
    """
    by_group, order = _grouped(records)
    return _groups(_matched(by_group, order), order) if order else []


def _grouped(records: Sequence[RunRecord]) -> tuple[dict[str, list[RunRecord]], list[str]]:
    """Runs by group; groups ordered by decode rate, lowest (the reference) first.

    The reference is the experimental factor, never the noise: groups are ordered by their
    profile's decode rate when every group has one, else slowest median task time first.
    """
    by_group: dict[str, list[RunRecord]] = defaultdict(list)
    for record in records:
        by_group[record.group].append(record)
    rates = {g: by_group[g][0].decode_tps for g in by_group}
    keys = {g: comparison_key(by_group[g][0]) for g in by_group}
    if all(rate for rate in rates.values()):
        order = sorted(by_group, key=lambda g: (keys[g], rates[g] or 0.0, g))
    else:
        order = sorted(by_group, key=lambda g: (keys[g], -median([r.task_s for r in by_group[g]])))
    return by_group, order


def _per_key(order: list[str], by_group: dict[str, list[RunRecord]]) -> list[list[str]]:
    """`order` cut into runs of groups of one comparison key each (`data/pairing.py`):
    speedups, matched cells and headlines never cross a key."""
    cut: dict[ComparisonKey, list[str]] = {}
    for group in order:
        cut.setdefault(comparison_key(by_group[group][0]), []).append(group)
    return list(cut.values())


def _matched(by_group: dict[str, list[RunRecord]], order: list[str]) -> dict[str, list[RunRecord]]:
    """Each group's runs in the cells (task x repetition) every group ran; every run when
    no cell is shared (the sentence then refuses a figure)."""
    out: dict[str, list[RunRecord]] = {}
    for part in _per_key(order, by_group):
        cells = {g: keyed(by_group[g]) for g in part}
        shared = set.intersection(*(set(c) for c in cells.values()))
        for g in part:
            out[g] = [r for k in sorted(shared) for r in cells[g][k]] if shared else by_group[g]
    return out


def build_model(
    records: Sequence[RunRecord],
    title: str,
    inputs: Sequence[str],
    *,
    transcript_limit: int = TRANSCRIPTS,
    deadline_s: float | None = None,
) -> ReportModel:
    """Compute every view from complete runs (`RunRecord.group` says how they compare).

    Args:
        records: the runs.
        title: the page title.
        inputs: the inputs' names.
        transcript_limit: embed the transcripts of at most this many runs.
        deadline_s: the user's deadline (None: the bottom line picks a cap).
    """
    by_group, order = _grouped(records)
    parts = _per_key(order, by_group)
    labels = [comparison_key(by_group[part[0]][0]).label for part in parts]
    compare = comparability_per_key(by_group, parts, labels)
    groups = _groups(_matched(by_group, order), order)
    lines = bottom_lines(records, deadline_s)
    timelines = [timeline(r) for r in records]
    shown = featured(by_group, order)
    diffs = diff_views(default_pairs(by_group, order))
    first = [t.run_id for t in shown] + [s.run_id for d in diffs for s in (d.a, d.b)]
    embedded = transcripts(records, first, transcript_limit)
    return ReportModel(
        title=title,
        inputs=list(inputs),
        runs=len(records),
        groups=groups,
        sentence=_sentence(groups, compare, lines),
        bottom_lines=lines,
        compounding={g: compounding(by_group[g]) for g in order},
        families=families(by_group, order),
        length_points={g: [(float(r.steps), r.task_s, r.task) for r in by_group[g]] for g in order},
        breakdown_groups={g: mean_components(by_group[g]) for g in order},
        total_work=_total_work(by_group, order),
        breakdown_tasks=task_breakdown(by_group, order),
        sweep=sweep_view(by_group, groups),
        step_latency=step_latency(by_group, order),
        slowdown=slowdown_rows(by_group, order),
        distributions={
            "ttft": {g: cdf_points([v for r in by_group[g] for v in r.ttfts]) for g in order},
            "decode": {g: cdf_points([v for r in by_group[g] for v in r.decodes]) for g in order},
            "tool": {g: cdf_points([v for r in by_group[g] for v in r.tool_times]) for g in order},
        },
        tasks=task_rows(by_group, order),
        featured=shown,
        timelines=sorted(timelines, key=lambda t: (t.task, order.index(t.group), t.run_id)),
        notes=_notes(records),
        nodes=node_rows(records),
        knobs=knob_rows(records),
        comparability=compare,
        diffs=diffs,
        transcripts=embedded,
        run_rows=run_rows(records, order, diffs, set(embedded)),
        claim=claim_view(*claim_groups(by_group, order)),
        planning=planning_by_group(by_group, order),
        money=money_view(by_group, order),
        caps=caps_view(by_group, order),
        choice=choice_views(records),
        success=success_view(records, deadline_s, picked=picked_caps(lines)),
    )


def _sentence(
    groups: Sequence[GroupView], compare: Comparability, lines: Sequence[BottomLine]
) -> str:
    """The headline sentence, refused when the groups share no cell, flagged when they
    differ otherwise; with several comparison groups (agents, task sets, clocks), their
    bottom lines instead of one pooled figure."""
    if len(lines) > 1:
        return f"{len(lines)} comparison groups, never pooled: " + " ".join(
            line.text for line in lines
        )
    if len(groups) >= 2 and compare.matched_cells == 0:
        return "No headline: the compared groups share no task. " + " ".join(compare.issues)
    sentence = headline_sentence(groups)
    if sentence and compare.issues:
        cells = compare.matched_cells
        sentence += (
            f" Unlike inputs: over the {cells} matched cell{'s' if cells != 1 else ''} only."
        )
    return sentence


def _groups(by_group: dict[str, list[RunRecord]], order: list[str]) -> list[GroupView]:
    """Each group's view; its speedup against the reference (slowest) group of its own
    comparison key, never another agent's, task set's or clock's."""
    views: list[GroupView] = []
    colors = _colors(by_group, order)
    firsts = {part[0]: part for part in _per_key(order, by_group)}
    reference: list[RunRecord] = []
    index = 0
    for label in order:
        if label in firsts:
            reference, index = by_group[label], 0
        else:
            index += 1
        runs = by_group[label]
        times = [r.task_s for r in runs]
        total = sum(times) or 1.0
        checked = [r for r in runs if r.outcome != "unknown"]
        paired = paired_speedup(reference, runs)
        speedup = paired.speedup if paired.speedup is not None else math.nan
        ci = paired.ci if index > 0 else None
        rates = {r.decode_tps for r in runs}
        views.append(
            GroupView(
                label=label,
                color=colors[label],
                decode_tps=rates.pop() if len(rates) == 1 else None,
                source=runs[0].source,
                runs=len(runs),
                solved=sum(1 for r in checked if r.outcome == "solved"),
                checked=len(checked),
                median_task_s=median(times),
                p90_task_s=quantile(times, 0.9),
                median_steps=median([float(r.steps) for r in runs]),
                model_share=sum(r.model_s for r in runs) / total,
                tool_share=sum(r.tool_s for r in runs) / total,
                overhead_share=sum(r.overhead_s for r in runs) / total,
                speedup=speedup,
                ci=ci,
                reference=index == 0,
                estimated=sorted({e for r in runs for e in r.estimated}),
                clocks=sorted({r.clock for r in runs}),
                paired_tasks=paired.n,
                paired_runs=len(paired.fast_runs),
                reference_runs=len(paired.slow_runs),
                comparison=comparison_key(runs[0]).label,
                model=arm_model(runs),
            )
        )
    return views


def _colors(by_group: dict[str, list[RunRecord]], order: list[str]) -> dict[str, str]:
    colors: dict[str, str] = {}
    for label in order:
        fixed = FIXED_COLORS.get(by_group[label][0].profile)
        if fixed is not None and fixed not in colors.values():
            colors[label] = fixed
    free = [c for c in PALETTE if c not in colors.values()]
    for index, label in enumerate(g for g in order if g not in colors):
        colors[label] = free[index % len(free)] if free else PALETTE[index % len(PALETTE)]
    return colors


def _notes(records: Sequence[RunRecord]) -> list[str]:
    notes: list[str] = []
    seen: set[str] = set()
    for record in records:
        if record.source == "looplab" or record.source in seen:
            continue
        seen.add(record.source)
        absent = ", ".join(record.absent) or "nothing"
        notes.append(f"{record.source} ({record.group}): absent in the source: {absent}.")
        notes.extend(f"{record.source}: {note}" for note in record.notes)
    return notes


def _total_work(by_group: dict[str, list[RunRecord]], order: list[str]) -> dict[str, float]:
    """Mean total work per run of each group's runs with sub-agents (groups without none)."""
    out: dict[str, float] = {}
    for group in order:
        work = [r.work_s for r in by_group[group] if r.work_s is not None]
        if work:
            out[group] = sum(work) / len(work)
    return out
