"""The dashboard's list pages: `/runs` (every run under the root, filtered by the URL)
and `/task?name=<task>` (a task's runs, filtered the same way, and the step-aligned
diffs between runs of one agent, each cell showing B - A time).

Diffs are offered within an agent only: two agents' runs of a task take different steps,
so a step-aligned diff of them compares nothing (the side-by-side compare does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from urllib.parse import urlencode

from looplab.report.assets import inline_scripts
from looplab.report.dashboard.experiments import Experiment, Reports
from looplab.report.dashboard.pages import MATRIX_RUNS, diff_url, message_page, run_url
from looplab.report.dashboard.run_lists import (
    all_runs,
    filter_form,
    filter_runs,
    parse_filter,
    run_list_table,
)
from looplab.report.data.records import RunRecord
from looplab.report.render.page import shell
from looplab.report.render.scales import fmt_s
from looplab.report.views.run_metrics import RunMetrics

__all__ = ["runs_page", "task_page"]


def _shell(title: str, body: str) -> str:
    """A list page: the stylesheet and the scripts (sortable headers)."""
    return shell(title, f"<main>{body}</main>", scripts=inline_scripts())


def _links(
    reports: Reports, rows: Sequence[tuple[Experiment, RunRecord, RunMetrics]]
) -> dict[str, str]:
    return {r.run_id: run_url(reports, r) for _, r, _ in rows}


def runs_page(reports: Reports, params: Mapping[str, str]) -> str:
    """Every run under the root that the URL's filter keeps.

    Raises:
        ConfigError: a bad filter value (`run_lists.parse_filter`).
    """
    keep = parse_filter(params)
    found = all_runs(reports)
    rows = filter_runs(found, keep)
    body = (
        "<p><a href='/'>index</a></p>"
        f"<h1>Runs</h1><p class='sub' id='run-count'>{len(rows)} of {len(found)} runs "
        "(sort by any column; the filter is in the URL)</p>"
        f"{filter_form('/runs', found, keep)}{run_list_table(rows, _links(reports, rows))}"
    )
    return _shell("looplab: runs", body)


def task_page(reports: Reports, params: Mapping[str, str]) -> str:
    """Every run of the task `name` (filtered by the rest of the URL), and the diffs
    between runs of one agent."""
    task = params.get("name", "")
    found = reports.runs_of(task)
    if not found:
        return message_page(404, f"no run of task {task!r} under this root")
    keep = parse_filter({**params, "task": task})
    rows = filter_runs(found, keep)
    form = filter_form(f"/task?{urlencode({'name': task})}", found, keep).replace(
        '<button type="submit">',
        f'<input type="hidden" name="name" value="{escape(task)}"><button type="submit">',
    )
    by_agent: dict[str, list[tuple[Experiment, RunRecord, RunMetrics]]] = {}
    for row in rows:
        by_agent.setdefault(row[2].agent, []).append(row)
    grids = "".join(_matrix(reports, agent, runs) for agent, runs in sorted(by_agent.items()))
    body = (
        f"<p><a href='/'>index</a> · <a href='/runs?{urlencode({'task': task})}'>these runs "
        f"in the run list</a></p><h1>{escape(task)}: {len(found)} runs</h1>"
        f"<p class='sub' id='run-count'>{len(rows)} of {len(found)} shown</p>{form}"
        f"{run_list_table(rows, _links(reports, rows))}"
        "<h2>Step-aligned diff of two runs of one agent</h2>"
        "<p class=\"hint\">Row A, column B: B's task time minus A's (▲ slower, ▼ faster); "
        "open a cell for the step-aligned diff. Runs of different agents take different "
        "steps: compare those side by side from the index.</p>"
        f"{grids}"
    )
    return _shell(f"looplab: {task}", body)


def _matrix(
    reports: Reports, agent: str, rows: Sequence[tuple[Experiment, RunRecord, RunMetrics]]
) -> str:
    """One agent's runs of a task: B - A time per pair, each a link to its diff."""
    shown = list(rows[:MATRIX_RUNS])
    label = {  # runs of one task come from several experiments: name each one's
        r.run_id: f"{r.experiment or r.input_name} · {r.profile} #{i + 1}"
        for i, (_, r, _) in enumerate(shown)
    }
    head = "".join(
        f"<th title='{escape(r.run_id)}'>B: {escape(label[r.run_id])}</th>" for _, r, _ in shown
    )
    body = []
    for _, a, ma in shown:
        cells = "".join(
            "<td>·</td>"
            if a is b
            else _cell(reports, a, b, mb.time_s - ma.time_s, mb.steps - ma.steps)
            for _, b, mb in shown
        )
        body.append(
            f"<tr><th title='{escape(a.run_id)}'>A: {escape(label[a.run_id])}</th>{cells}</tr>"
        )
    more = (
        f'<p class="hint">The first {MATRIX_RUNS} of {len(rows)} runs; filter above, or pick '
        "any two in the index's form.</p>"
        if len(rows) > MATRIX_RUNS
        else ""
    )
    return (
        f'<h3>agent {escape(agent)}: {len(rows)} runs</h3><div class="scroll">'
        f'<table class="matrix" data-agent="{escape(agent)}"><thead><tr><th></th>{head}</tr>'
        f"</thead><tbody>{''.join(body)}</tbody></table></div>{more}"
    )


def _cell(reports: Reports, a: RunRecord, b: RunRecord, dt: float, dsteps: int) -> str:
    mark = "worse" if dt > 0 else "better" if dt < 0 else ""
    arrow = {"worse": " ▲", "better": " ▼", "": ""}[mark]
    steps = f", {dsteps:+d} steps" if dsteps else ""
    return (
        f'<td class="{mark}" data-v="{dt:.6g}"><a class="pair" '
        f'href="{escape(diff_url(reports, a, b))}" title="B - A: {fmt_s(dt)}{steps}">'
        f"{'+' if dt >= 0 else '-'}{fmt_s(abs(dt))}{arrow}</a>"
        f"{f'<br><span class=hint>{dsteps:+d} steps</span>' if dsteps else ''}</td>"
    )
