"""The report's HTML tables: headline (with the comparability banner), per task, every run.

Tables are static HTML that reads without scripts. For the interactive layer they carry
`data-export` (their export table's name), `class="sortable"` with numeric sort keys in
`data-v`, and the filter keys `data-task`, `data-group`, `data-dur` on rows and cells.
"""

from __future__ import annotations

import math
from html import escape

from looplab.report.render.svg import fmt_s
from looplab.report.views.group import GroupView
from looplab.report.views.report_model import ReportModel
from looplab.report.views.speedup import ci_words
from looplab.stats.intervals import MIN_PAIRED_N

ESTIMATED_BY = {"wrap": "the wrap proxy (a tool's time is the gap between model calls)"}
"""Who estimated a run's `est.` values, by its source (default: an importer)."""

__all__ = [
    "ESTIMATED_BY",
    "comparability_banner",
    "headline_table",
    "runs_table",
    "task_table",
]

_VERDICT = {True: "solved", False: "not solved", None: "not checked"}
_HEADLINE_COLUMNS = (
    "profile",
    "decode tok/s",
    "runs",
    "solved",
    "median task",
    "p90 task",
    "median steps",
    "model",
    "tools",
    "overhead",
    "speedup (95% CI)",
)
_RUNS_COLUMNS = (
    "run",
    "task",
    "profile",
    "steps",
    "task",
    "model",
    "tools",
    "overhead",
    "verdict",
    "open",
)

BADGES = {
    "virtual": (
        "virtual clock",
        "model times computed from the latency profile by the virtual clock (tools measured)",
    ),
    "recorded": ("recorded", "times recorded by another harness"),
}
"""Clock badges of a group: clock -> (text, tooltip); wall-clock runs carry none."""


def _num(value: float, text: str) -> str:
    key = f"{value:.6g}" if math.isfinite(value) else ""
    return f'<td data-v="{key}">{text}</td>'


def comparability_banner(model: ReportModel) -> str:
    """A loud banner naming what differs between the compared groups (empty if alike)."""
    compare = model.comparability
    if compare is None or compare.alike:
        return ""
    items = "".join(f"<li>{escape(issue)}</li>" for issue in compare.issues)
    cells = compare.matched_cells
    if len(model.bottom_lines) > 1:  # several comparison groups: each its own figures
        basis = (
            "Each comparison group's bottom line and table row use only the cells (task x "
            "repetition) all its profiles ran; a group with none shared gets no figure; the "
            "other sections show every run."
        )
    elif cells:
        basis = (
            f"The headline uses only the {cells} cell{'s' if cells != 1 else ''} (task x "
            "repetition) every group ran; the other sections show every run."
        )
    else:
        basis = "No cell is shared: no headline figure is computed."
    return (
        f'<div class="warn" role="alert"><strong>Unlike inputs.</strong><ul>{items}</ul>'
        f"<p>{escape(basis)}</p></div>"
    )


def headline_table(model: ReportModel) -> str:
    """The per-group headline table, its badges explained below it."""
    head = "".join(f"<th>{h}</th>" for h in _HEADLINE_COLUMNS)
    rows = "".join(_group_row(g) for g in model.groups)
    hints = []
    if any(g.estimated for g in model.groups):
        who = sorted(
            {ESTIMATED_BY.get(g.source, "an importer") for g in model.groups if g.estimated}
        )
        hints.append(
            '<span class="est">est.</span> marks groups whose times are partly estimated by '
            f"{escape(' or '.join(who))} (see Definitions and provenance); estimated values "
            "are hatched or dashed in the charts."
        )
    clocks = {c for g in model.groups for c in g.clocks if c in BADGES}
    for clock in sorted(clocks):
        text, tip = BADGES[clock]
        hints.append(f'<span class="badge">{text}</span>: {escape(tip)}.')
    if any(not g.reference and g.ci is None for g in model.groups):
        hints.append(
            f"No CI where n is too small: a 95% interval needs at least {MIN_PAIRED_N} paired "
            "tasks (a workload's draws count one each), the rule of the bottom line and the "
            "claim check alike."
        )
    legend = "".join(f'<p class="hint">{h}</p>' for h in hints)
    return (
        f'<div class="scroll"><table class="headline sortable" data-export="headline">'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>{legend}"
    )


def _group_row(group: GroupView) -> str:
    solved = f"{group.solved}/{group.checked}" if group.checked else "unknown"
    if group.reference:
        speedup = "1.00x (reference)"
    elif not math.isfinite(group.speedup):
        speedup = "-"
    elif group.ci and all(math.isfinite(v) for v in group.ci):
        speedup = f"{group.speedup:.2f}x ({group.ci[0]:.2f}-{group.ci[1]:.2f})"
    else:
        words = escape(ci_words(group.paired_tasks, None))
        speedup = f"{group.speedup:.2f}x <span class='hint'>({words})</span>"
    badges = ""
    if group.estimated:
        what = ", ".join(group.estimated)
        who = ESTIMATED_BY.get(group.source, "an importer")
        badges += (
            f' <span class="est" title="estimated by {escape(who)}: {escape(what)}">est.</span>'
        )
    for clock in group.clocks:
        if clock in BADGES:
            text, tip = BADGES[clock]
            badges += f' <span class="badge" title="{escape(tip)}">{text}</span>'
    rate = f"{group.decode_tps:g}" if group.decode_tps else "-"
    return (
        f'<tr data-group="{escape(group.label)}">'
        f'<td><i class="dot" style="--c:{group.color}"></i>{escape(group.label)}{badges}</td>'
        f"{_num(group.decode_tps or math.nan, rate)}{_num(group.runs, str(group.runs))}"
        f"<td>{solved}</td>{_num(group.median_task_s, fmt_s(group.median_task_s))}"
        f"{_num(group.p90_task_s, fmt_s(group.p90_task_s))}"
        f"{_num(group.median_steps, f'{group.median_steps:g}')}"
        f"{_num(group.model_share, f'{group.model_share:.0%}')}"
        f"{_num(group.tool_share, f'{group.tool_share:.0%}')}"
        f"{_num(group.overhead_share, f'{group.overhead_share:.0%}')}"
        f"{_num(group.speedup, speedup)}</tr>"
    )


def task_table(model: ReportModel) -> str:
    """Per task: each group's median time, runs, solved, steps, links to the runs'
    timelines and the step-aligned diff against the slowest group."""
    groups = [g.label for g in model.groups]
    diffs = {(d.task, d.b.group): d.key for d in model.diffs}
    head = "<tr><th>task</th>" + "".join(
        f'<th data-group="{escape(g)}"><i class="dot" style="--c:{model.color(g)}"></i>'
        f"{escape(g)}</th>"
        for g in groups
    )
    head += "<th>speedup</th></tr>"
    rows = []
    for row in model.tasks:
        cells = [f"<td>{escape(row.task)}</td>"]
        for group in groups:
            cell = row.cells.get(group)
            if cell is None:
                cells.append(f'<td data-group="{escape(group)}" data-v="">-</td>')
                continue
            runs, median_s, solved, steps, links = cell
            anchors = " ".join(
                f'<a href="#{anchor}" title="timeline and transcript of this run">'
                f"{escape(text)}</a>"
                for anchor, text in links
            )
            key = diffs.get((row.task, group))
            diff = f' · <a class="diff" href="#{key}">step diff</a>' if key else ""
            cells.append(
                f'<td data-group="{escape(group)}" data-v="{median_s:.6g}">{fmt_s(median_s)} '
                f"<span class='hint'>({runs} runs, solved {solved}, {steps:g} steps)</span>"
                f"<br><span class='runs'>runs: {anchors}{diff}</span></td>"
            )
        speedup = f"{row.speedup:.2f}x" if row.speedup else "-"
        cells.append(_num(row.speedup or math.nan, speedup))
        rows.append(f'<tr data-task="{escape(row.task)}">{"".join(cells)}</tr>')
    return (
        '<div class="scroll"><table class="tasks sortable" data-export="tasks">'
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def runs_table(model: ReportModel) -> str:
    """Every run: task, group, steps, times, verdict; links to its timeline, transcript
    and diffs."""
    head = "".join(f"<th>{h}</th>" for h in _RUNS_COLUMNS)
    rows = []
    for r in model.run_rows:
        links = [f'<a href="#{r.anchor}">timeline{" + transcript" if r.transcript else ""}</a>']
        links += [f'<a class="diff" href="#{key}">{escape(label)}</a>' for key, label in r.diffs]
        rows.append(
            f'<tr data-task="{escape(r.task)}" data-group="{escape(r.group)}" '
            f'data-dur="{r.task_s:.6g}"><td class="id">{escape(r.run_id)}</td>'
            f"<td>{escape(r.task)}</td><td>{escape(r.group)}</td>{_num(r.steps, str(r.steps))}"
            f"{_num(r.task_s, fmt_s(r.task_s))}{_num(r.model_s, fmt_s(r.model_s))}"
            f"{_num(r.tool_s, fmt_s(r.tool_s))}{_num(r.overhead_s, fmt_s(r.overhead_s))}"
            f"<td>{_VERDICT[r.success]}</td><td>{' · '.join(links)}</td></tr>"
        )
    return (
        '<div class="scroll"><table class="runs-table sortable" data-export="runs">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
