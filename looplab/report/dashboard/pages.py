"""The dashboard's own pages: the index of experiments, every run of a task (with the
matrix of step-aligned diffs: any two runs of a task are one click apart), one run in
full (timeline, where the time goes, the whole transcript), and the diff of two runs.

Reports themselves are `page.render_page`; these pages share its stylesheet and scripts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote, urlencode

from looplab.analysis.divergence import replay_of
from looplab.report.assets import asset, inline_scripts
from looplab.report.build import assign_groups
from looplab.report.dashboard.experiments import Experiment, Reports, live_signature
from looplab.report.data.exports import diff_table
from looplab.report.data.records import RunRecord
from looplab.report.render.diff import diff_section
from looplab.report.render.gantt import flame_chart, gantt_chart
from looplab.report.render.page import page_data, set_aside_notice, shell
from looplab.report.render.svg import fmt_s
from looplab.report.render.transcript import transcript_html
from looplab.report.views.diff import diff_view
from looplab.report.views.group import GroupView
from looplab.report.views.report_model import build_model
from looplab.report.views.transcript import transcript
from looplab.traces.io import Trace

__all__ = [
    "MATRIX_RUNS",
    "LiveState",
    "diff_page",
    "in_progress_page",
    "index_page",
    "live",
    "live_state",
    "message_page",
    "run_page",
    "run_url",
    "task_page",
    "waiting_page",
]

MATRIX_RUNS = 40
"""A task page shows the matrix of diffs for at most this many runs (a form for more)."""

_VERDICT = {True: "solved", False: "not solved", None: "not checked"}
_LIVE = '<script id="live" data-state="{url}" data-signature="{signature}">{script}</script>'


@dataclass(frozen=True)
class LiveState:
    """Where a served page polls for changes, and the traces' signature it was built from
    (so a change between building the page and its first poll still reloads it)."""

    url: str
    signature: str


def live_state(experiment: Experiment) -> LiveState:
    """Where a page about `experiment` polls, and the signature it is built from."""
    url = "/api/state?" + urlencode({"path": experiment.rel})
    return LiveState(url, live_signature([experiment]))


def live(state: LiveState) -> str:
    """The live-refresh script, polling `state.url` (see `assets/live.js`)."""
    return _LIVE.format(
        url=escape(state.url), signature=escape(state.signature), script=asset("live.js")
    )


def _page(title: str, body: str, *, state: LiveState | None = None) -> str:
    extra = live(state) if state else ""
    return shell(title, f"<main>{body}</main>{extra}")


def message_page(status: int, message: str) -> str:
    """An error page: the status and what was refused or failed."""
    return _page(
        "looplab dashboard",
        f"<h1>{status}</h1><p>{escape(message)}</p><p><a href='/'>the index</a></p>",
    )


def run_url(reports: Reports, record: RunRecord) -> str:
    """The dashboard URL of a run's page."""
    path = record.trace.path if record.trace is not None else None
    return "/run/" + quote(reports.relative(path)) if path is not None else "#"


def _diff_url(reports: Reports, a: RunRecord, b: RunRecord) -> str:
    pick = [reports.relative(r.trace.path) for r in (a, b) if r.trace and r.trace.path]
    return "/diff?" + urlencode({"a": pick[0], "b": pick[1]}) if len(pick) == 2 else "#"


def _experiment_row(reports: Reports, experiment: Experiment) -> str:
    name = (
        f'<a class="report" href="/report/{quote(experiment.rel)}">{escape(experiment.name)}</a>'
        f'<br><span class="hint">{escape(experiment.rel)}</span>'
    )
    if experiment.description:
        name += f'<br><span class="hint">{escape(experiment.description)}</span>'
    status = '<span class="badge">running</span>' if experiment.running else ""
    if experiment.unfinished and not experiment.running:
        status = f'<span class="hint">{experiment.unfinished} unfinished trace(s)</span>'
    model = experiment.model
    if experiment.error is None and model is None:
        return (
            f"<tr><td>{name}</td><td>{status}</td><td>0</td>"
            f'<td colspan="2">{experiment.unfinished} run(s) started, none ended yet</td></tr>'
        )
    if experiment.error is not None or model is None:
        error = escape(experiment.error or "no report")
        return (
            f'<tr class="bad"><td>{name}</td><td>{status}</td>'
            f'<td colspan="3" class="err">cannot be read: {error}</td></tr>'
        )
    groups = "<br>".join(
        f'<i class="dot" style="--c:{g.color}"></i>{escape(g.label)}: {_group_numbers(g)}'
        for g in model.groups
    )
    counts: dict[str, int] = {}
    for record in experiment.records:
        counts[record.task] = counts.get(record.task, 0) + 1
    tasks = " ".join(
        f'<a class="task" href="/task?{urlencode({"name": t})}">{escape(t)}</a>'
        f'<span class="hint">&nbsp;({n})</span>'
        for t, n in sorted(counts.items())
    )
    lines = "".join(
        f'<br><b class="bottom-line">{escape(line.text)}</b>'
        for line in model.bottom_lines
        if len(model.bottom_lines) == 1
    )
    return (
        f"<tr><td>{name}</td><td>{status}</td><td>{model.runs}</td><td>{groups}</td>"
        f"<td>{escape(model.sentence)}{lines}<br>{tasks}"
        f"{set_aside_notice(model.set_aside)}</td></tr>"
    )


def _group_numbers(group: GroupView) -> str:
    """`3.15 s median, 2 runs, 2.41x` in words where a number would be NaN or empty."""
    runs = f"{group.runs} run{'s' if group.runs != 1 else ''}"
    if group.median_task_s <= 0:
        return f"no measured task time, {runs}"
    if group.reference:
        speed = "reference"
    elif math.isfinite(group.speedup):
        speed = f"{group.speedup:.2f}x"
    else:
        speed = "no task paired with the reference"
    return f"{fmt_s(group.median_task_s)} median, {runs}, {speed}"


def index_page(reports: Reports) -> str:
    """Experiments with their headline numbers and tasks, and the compare/diff form."""
    experiments = reports.experiments()
    rows = "".join(_experiment_row(reports, e) for e in experiments)
    table = (
        '<div class="scroll"><table class="experiments"><thead><tr><th>experiment</th>'
        "<th>status</th><th>runs</th><th>profiles (median task time, speedup)</th>"
        "<th>headline · tasks (open one to diff any two of its runs)</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
        if rows
        else "<p>No experiments (directories with traces/*.jsonl) under this root.</p>"
    )
    form = _compare_forms(reports, experiments)
    body = (
        f"<h1>looplab dashboard</h1><p class='sub'>{escape(str(reports.root))} (read-only)</p>"
        f"{table}{form}"
    )
    state = LiveState("/api/state", live_signature(experiments))
    return _page("looplab dashboard", body, state=state)


def _options(pairs: Sequence[tuple[str, str]], selected: int) -> str:
    """`<option>`s of (value, label), the one at `selected` selected."""
    return "".join(
        f'<option value="{escape(value)}"{" selected" if i == selected else ""}>'
        f"{escape(label)}</option>"
        for i, (value, label) in enumerate(pairs)
    )


def _compare_forms(reports: Reports, experiments: Sequence[Experiment]) -> str:
    """Two forms, each picking its own kind: two experiments to compare (B defaults to the
    second one) and two runs to diff, named with their experiment (B defaults to another
    run of A's task, so the defaults work as they are)."""
    readable = [e for e in experiments if e.model is not None]
    forms = ""
    if len(readable) >= 2:
        pairs = [(e.rel, e.name if e.name == e.rel else f"{e.name} ({e.rel})") for e in readable]
        forms += (
            '<form action="/compare" method="get"><h2>Compare two experiments</h2>'
            f'<label>A <select name="a" id="pick-a">{_options(pairs, 0)}</select></label> '
            f'<label>B <select name="b" id="pick-b">{_options(pairs, 1)}</select></label> '
            '<button type="submit" id="compare">compare reports</button></form>'
        )
    runs = [(e, r) for e in readable for r in e.records[:200]]
    if len(runs) >= 2:
        pairs = [
            (_rel(reports, r), f"{e.name} · {r.group} · {r.task} · {r.run_id}") for e, r in runs
        ]
        first_task = runs[0][1].task
        second = next((i for i, (_, r) in enumerate(runs) if i and r.task == first_task), 1)
        forms += (
            '<form action="/diff" method="get"><h2>Step diff of two runs of a task</h2>'
            f'<label>A <select name="a" id="diff-a">{_options(pairs, 0)}</select></label> '
            f'<label>B <select name="b" id="diff-b">{_options(pairs, second)}</select></label> '
            '<button type="submit" id="diff">step diff</button></form>'
        )
    return forms


def _rel(reports: Reports, record: RunRecord) -> str:
    path = record.trace.path if record.trace is not None else None
    return reports.relative(path) if path is not None else ""


def task_page(reports: Reports, task: str) -> str:
    """Every run of `task` under the root, and the matrix of their diffs."""
    found = reports.runs_of(task)
    if not found:
        return message_page(404, f"no run of task {task!r} under this root")
    records = [r for _, r in found]
    rows = "".join(
        f'<tr><td class="id"><a href="{run_url(reports, r)}">{escape(r.run_id)}</a></td>'
        f"<td>{escape(e.name)}</td><td>{escape(r.profile)}</td><td>{r.steps}</td>"
        f'<td data-v="{r.task_s:.6g}">{fmt_s(r.task_s)}</td><td>{_VERDICT[r.success]}</td>'
        f"<td>{r.clock}</td></tr>"
        for e, r in found
    )
    table = (
        '<div class="scroll"><table class="sortable"><thead><tr><th>run</th><th>experiment</th>'
        "<th>profile</th><th>steps</th><th>task</th><th>verdict</th><th>clock</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )
    body = (
        f"<p><a href='/'>index</a></p><h1>{escape(task)}: {len(records)} runs</h1>{table}"
        f"<h2>Step-aligned diff of any two runs</h2>{_matrix(reports, records)}"
    )
    return _page(f"looplab: {task}", body)


def _matrix(reports: Reports, records: Sequence[RunRecord]) -> str:
    shown = list(records[:MATRIX_RUNS])
    label = {  # runs of one task come from several experiments: name each one's
        r.run_id: f"{r.experiment or r.input_name} · {r.profile} #{i + 1}"
        for i, r in enumerate(shown)
    }
    head = "".join(
        f"<th title='{escape(r.run_id)}'>B: {escape(label[r.run_id])}</th>" for r in shown
    )
    rows = []
    for a in shown:
        cells = "".join(
            "<td>·</td>"
            if a is b
            else f'<td><a class="pair" href="{escape(_diff_url(reports, a, b))}">diff</a></td>'
            for b in shown
        )
        rows.append(
            f"<tr><th title='{escape(a.run_id)}'>A: {escape(label[a.run_id])}</th>{cells}</tr>"
        )
    more = (
        f'<p class="hint">The first {MATRIX_RUNS} of {len(records)} runs; pick any two in the '
        "index's form.</p>"
        if len(records) > MATRIX_RUNS
        else ""
    )
    return (
        '<p class="hint">Row A, column B: B minus A per aligned step.</p><div class="scroll">'
        f'<table class="matrix"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(rows)}'
        f"</tbody></table></div>{more}"
    )


def run_page(reports: Reports, record: RunRecord) -> str:
    """One run: timeline, where the time goes, the transcript in full (outputs as the
    trace kept them), and diffs against the other runs of its task."""
    model = build_model([record], f"run {record.run_id}", [], transcript_limit=0)
    view = model.timelines[0]
    origin = replay_of(record.trace.header) if record.trace is not None else None
    recorded = next((r for _, r in reports.runs_of(record.task) if r.run_id == origin), None)
    full = transcript(record, output_chars=None, recorded=recorded)
    others = [r for _, r in reports.runs_of(record.task) if r.run_id != record.run_id][:MATRIX_RUNS]
    diffs = " · ".join(
        f'<a class="pair" href="{escape(_diff_url(reports, record, o))}">vs {escape(o.profile)} '
        f"{escape(o.run_id)}</a>"
        for o in others
    )
    title = (
        f"{record.group} · {record.task} · {fmt_s(record.task_s)}, {record.steps} steps, "
        f"{_VERDICT[record.success]}"
    )
    charts = gantt_chart(model, [view], f"run:{record.run_id}", title) + flame_chart(
        view, f"flame:{record.run_id}"
    )
    body = (
        f"<div id='toolbar'></div><p><a href='/'>index</a> · "
        f"<a href='/task?{urlencode({'name': record.task})}'>all runs of "
        f"{escape(record.task)}</a></p><h1>Run {escape(record.run_id)}</h1>"
        f"{charts}"
        f"{transcript_html(full) if full else ''}"
        f"<h2>Step-aligned diff against</h2><p>{diffs or 'no other run of this task'}</p>"
    )
    data = page_data(model)
    script = f'<script type="application/json" id="report-data">{_json(data)}</script>'
    return shell(
        f"looplab: run {record.run_id}", f"<main>{body}</main>{script}", scripts=inline_scripts()
    )


def waiting_page(experiment: Experiment, *, state: LiveState) -> str:
    """An experiment whose runs have all started and none ended: says so, and refreshes."""
    activity = "running" if experiment.running else "not written to for a while (stopped?)"
    return _page(
        f"looplab: {experiment.name}",
        f"<p><a href='/'>index</a></p><h1>{escape(experiment.name)}</h1>"
        f"<p>{experiment.unfinished} run(s) started, none ended yet ({activity}); "
        "the report appears when the first run ends.</p>",
        state=state,
    )


def in_progress_page(trace: Trace, *, state: LiveState) -> str:
    """A run without its `run_end` yet: what it has done so far, refreshed while it runs."""
    header = trace.header
    last = max((e.end for e in trace.events), default=0.0)
    calls, tools = trace.model_calls(), trace.tool_calls()
    rows = "".join(
        f"<tr><td>{e.step if e.step is not None else ''}</td><td>{escape(e.kind)}</td>"
        f"<td>{fmt_s(e.start)}</td><td>{fmt_s(e.duration_s)}</td></tr>"
        for e in trace.events[-20:]
    )
    body = (
        f"<p><a href='/'>index</a></p><h1>Run {escape(header.run_id)} "
        '<span class="badge">in progress</span></h1>'
        f"<p>{escape(header.task or '?')}: {len(trace.steps())} step(s), {len(calls)} model "
        f"call(s), {len(tools)} tool call(s) so far; last event ends at {fmt_s(last)}. "
        "No run_end event yet: the run is still going (or was cut off); its timeline "
        "and transcript appear when it ends.</p>"
        '<div class="scroll"><table><thead><tr><th>step</th><th>event</th><th>start</th>'
        f"<th>duration</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )
    return _page(f"looplab: run {header.run_id} (in progress)", body, state=state)


def diff_page(reports: Reports, a: RunRecord, b: RunRecord) -> str:
    """The step-aligned diff of two runs (B - A)."""
    if a.profile == b.profile:
        a.group, b.group = f"A · {a.profile}", f"B · {b.profile}"
    else:
        assign_groups([a, b])
    diff = diff_view(a, b)
    model = build_model([a, b], "diff", [], transcript_limit=0)
    data = page_data(model)
    data["tables"][diff.key] = diff_table(diff)
    body = (  # no filter toolbar: a diff of two runs has nothing to filter
        f"<p><a href='/'>index</a> · "
        f"<a href='/task?{urlencode({'name': a.task})}'>all runs of {escape(a.task)}</a></p>"
        + diff_section(diff, hrefs=(run_url(reports, a), run_url(reports, b)), hidden=False)
    )
    script = f'<script type="application/json" id="report-data">{_json(data)}</script>'
    return shell(
        f"looplab: diff {a.task}", f"<main>{body}</main>{script}", scripts=inline_scripts()
    )


def _json(data: object) -> str:
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
