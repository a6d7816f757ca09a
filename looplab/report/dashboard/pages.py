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
from looplab.report.dashboard.compare_page import compare_choices
from looplab.report.dashboard.experiments import Experiment, Reports, live_signature
from looplab.report.data.exports import diff_table
from looplab.report.data.records import RunRecord
from looplab.report.render.diff import diff_section
from looplab.report.render.gantt import flame_chart, gantt_chart
from looplab.report.render.page import page_data, set_aside_notice, shell
from looplab.report.render.span_diff import span_diff_html
from looplab.report.render.svg import fmt_s
from looplab.report.render.transcript import transcript_html
from looplab.report.render.tree import tree_chart
from looplab.report.views.diff import diff_view
from looplab.report.views.group import GroupView
from looplab.report.views.report_model import build_model
from looplab.report.views.span_diff import span_diff
from looplab.report.views.transcript import transcript
from looplab.traces.io import Trace

__all__ = [
    "MATRIX_RUNS",
    "LiveState",
    "diff_page",
    "diff_url",
    "in_progress_page",
    "index_page",
    "live",
    "live_state",
    "message_page",
    "page",
    "run_page",
    "run_url",
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


def page(title: str, body: str, *, state: LiveState | None = None) -> str:
    """A dashboard page around `body` (its own scripts: none, or live refresh)."""
    extra = live(state) if state else ""
    return shell(title, f"<main>{body}</main>{extra}")


def message_page(status: int, message: str) -> str:
    """An error page: the status and what was refused or failed."""
    return page(
        "looplab dashboard",
        f"<h1>{status}</h1><p>{escape(message)}</p><p><a href='/'>the index</a></p>",
    )


def run_url(reports: Reports, record: RunRecord) -> str:
    """The dashboard URL of a run's page."""
    path = record.trace.path if record.trace is not None else None
    return "/run/" + quote(reports.relative(path)) if path is not None else "#"


def diff_url(reports: Reports, a: RunRecord, b: RunRecord) -> str:
    """The dashboard URL of the step-aligned diff of two runs."""
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
        f'<tr><td>{name}</td><td data-label="status">{status}</td>'
        f'<td data-label="runs">{model.runs}</td><td data-label="profiles">{groups}</td>'
        f'<td class="headline">{escape(model.sentence)}{lines}<br>{tasks}'
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
        f"<h1>looplab dashboard</h1><p class='sub'>{escape(str(reports.root))} (read-only) · "
        "<a href='/runs' id='all-runs'>every run (filter, search)</a></p>"
        f"{table}{form}"
    )
    state = LiveState("/api/state", live_signature(experiments))
    return page("looplab dashboard", body, state=state)


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
        pairs = compare_choices(readable)
        second = next(i for i, (v, _) in enumerate(pairs) if v == readable[1].rel)
        forms += (
            '<form action="/compare" method="get"><h2>Compare side by side</h2>'
            '<p class="hint">Per task A | B | delta of time, success, cost, steps and tokens; '
            "pick an experiment or one of its profiles.</p>"
            f'<label>A <select name="a" id="pick-a">{_options(pairs, 0)}</select></label> '
            f'<label>B <select name="b" id="pick-b">{_options(pairs, second)}</select></label> '
            '<button type="submit" id="compare">compare</button></form>'
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


def run_page(reports: Reports, record: RunRecord) -> str:
    """One run: timeline, where the time goes, the transcript in full (outputs as the
    trace kept them), and diffs against the other runs of its task."""
    model = build_model([record], f"run {record.run_id}", [], transcript_limit=0)
    view = model.timelines[0]
    origin = replay_of(record.trace.header) if record.trace is not None else None
    recorded = next((r for _, r in reports.runs_of(record.task) if r.run_id == origin), None)
    full = transcript(record, output_chars=None, recorded=recorded)
    others = [  # a step-aligned diff compares runs of one agent (their steps align)
        r
        for _, r in reports.runs_of(record.task)
        if r.run_id != record.run_id and r.agent == record.agent
    ][:MATRIX_RUNS]
    diffs = " · ".join(
        f'<a class="pair" href="{escape(diff_url(reports, record, o))}">vs {escape(o.profile)} '
        f"{escape(o.run_id)}</a>"
        for o in others
    )
    title = (
        f"{record.group} · {record.task} · {fmt_s(record.task_s)}, {record.steps} steps, "
        f"{_VERDICT[record.success]}"
    )
    charts = (
        gantt_chart(model, [view], f"run:{record.run_id}", title)
        + tree_chart(view, f"tree:{record.run_id}")
        + flame_chart(view, f"flame:{record.run_id}")
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
    return page(
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
    return page(f"looplab: run {header.run_id} (in progress)", body, state=state)


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
        + span_diff_html(span_diff(a, b))
    )
    script = f'<script type="application/json" id="report-data">{_json(data)}</script>'
    return shell(
        f"looplab: diff {a.task}", f"<main>{body}</main>{script}", scripts=inline_scripts()
    )


def _json(data: object) -> str:
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
