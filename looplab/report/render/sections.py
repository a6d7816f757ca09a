"""The report's sections, in page order: a registry.

A section is three things: its view data (the export tables its charts and tables draw,
`tables`: they are embedded in the page and downloadable as CSV/JSON), its static render
(`render`: HTML and SVG that read without scripts and print), and optionally an
interactive layer (`enhance`: names of functions in `window.looplab.enhancers`, run on
the section by `assets/report.js`). Charts drawn with `svg.Chart` and tables with
`class="sortable" data-export=NAME` get tooltips, legend toggles, filters, sorting and
downloads without any section-specific script.

To add a section (say, a claim check): write its view (a `views_*.py` function over the
run records or the `ReportModel`), its render and its tables, and add one `Section(...)`
line to `SECTIONS` where it belongs on the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

from looplab.report.claims.render import claim_tables, render_claim
from looplab.report.claims.waterfall import render_waterfall, waterfall_tables
from looplab.report.data import exports
from looplab.report.render import charts
from looplab.report.render import step_charts as charts_steps
from looplab.report.render.choice import choice_tables, render_choice
from looplab.report.render.gantt import gantt_chart
from looplab.report.render.money import money_tables, render_money
from looplab.report.render.success import render_success, success_tables
from looplab.report.render.svg import fmt_s
from looplab.report.render.tables import (
    comparability_banner,
    headline_table,
    runs_table,
    task_table,
)
from looplab.report.views.report_model import ReportModel

__all__ = ["METRICS", "SECTIONS", "Section", "grid", "section_tables"]

METRICS = (
    "TTFT: request sent -> first token of any kind (with hidden reasoning, the first token "
    "the model generated: hidden reasoning decode is shown apart, and time to the first "
    "visible token = TTFT + prefill + reasoning). Decode: first -> last visible token. "
    "Model time: request scheduled -> stream end. Tool time: tool started -> result ready. "
    "Overhead: step wall time minus model and tool time. Task time: first request -> the "
    "agent's finish (sandbox start excluded, shown apart). Speedup: the slowest profile's "
    "median task time over this profile's, over the cells every profile ran; its 95% CI is "
    "a bootstrap over tasks (paired when both profiles ran the same tasks), shown when n "
    "allows. Virtual clock: model times computed from the latency profile, tools measured."
)


@dataclass(frozen=True)
class Section:
    """One section of the report page (module docstring)."""

    key: str
    """HTML id, nav anchor, and the `data-section` name."""
    title: str
    nav: str
    """Label in the page's navigation."""
    render: Callable[[ReportModel], str]
    """The static body: HTML and SVG, complete without scripts."""
    tables: Callable[[ReportModel], dict[str, Any]] | None = None
    """The export tables of its charts and tables, by name (None: they come from the
    shared `exports.export_tables`)."""
    enhance: tuple[str, ...] = ()
    """Interactive-layer functions (`window.looplab.enhancers`) to run on it."""


def grid(items: list[str], columns: int = 2) -> str:
    """Charts side by side, wrapping on narrow screens."""
    return f'<div class="grid c{columns}">{"".join(items)}</div>'


def _headline(model: ReportModel) -> str:
    lines = "".join(
        f'<li class="bottom-line">{escape(line.text)}</li>' for line in model.bottom_lines
    )
    bottom = (
        f'<h3>Bottom line, per agent and task set</h3><ul class="bottom-lines">{lines}</ul>'
        if lines
        else ""
    )
    shown = model.sentence and len(model.bottom_lines) <= 1
    sentence = f'<p class="sentence">{escape(model.sentence)}</p>' if shown else ""
    claim = ""
    if model.claim is not None and model.claim.sentence:
        claim = (
            f'<p class="sentence">{escape(model.claim.sentence)} '
            '(<a href="#claim">the claim check</a>)</p>'
        )
    return (
        bottom
        + comparability_banner(model)
        + sentence
        + claim
        + headline_table(model)
        + _knobs(model)
    )


def _knobs(model: ReportModel) -> str:
    """The knob table, when the runs have axes (`report/data/knobs.py`)."""
    if not model.knobs:
        return ""

    def pct(value: float | None, ci: tuple[float, float] | None) -> str:
        text = "-" if value is None else f"{value:+.1%}"
        return text + (f" ({ci[0]:+.1%}..{ci[1]:+.1%})" if ci else "")

    def sec(value: float | None, ci: tuple[float, float] | None) -> str:
        text = "-" if value is None else f"{value:+.3f}"
        return text + (f" ({ci[0]:+.3f}..{ci[1]:+.3f})" if ci else "")

    rows = "".join(
        f"<tr><td>{escape(r.backend)}</td><td>{escape(r.label)}</td><td>{r.tasks}</td>"
        f"<td>{r.median_task_s:.2f}</td><td>{pct(r.saving, r.saving_ci)}</td>"
        f"<td>{sec(r.step_saving_s, r.step_ci)}</td><td>{pct(r.e2e_saving, r.e2e_ci)}</td>"
        f"<td>{r.model_share:.0%}</td>"
        f"<td>{r.tool_share:.0%}</td></tr>"
        for r in model.knobs
    )
    return (
        '<h3>Knobs against all off</h3><p class="hint">Per backend, each variant\'s saving '
        "per task (share of task time, paired bootstrap 95% CI over tasks) and per step "
        "(seconds) against the all-off variant, end to end (setup + task: where "
        "eager_sandbox shows); model and tool shares of its task time.</p>"
        "<table><thead><tr><th>backend</th><th>variant</th><th>tasks</th><th>task s p50</th>"
        "<th>saving/task</th><th>saving/step s</th><th>saving/e2e</th><th>model</th>"
        "<th>tools</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _compounding(model: ReportModel) -> str:
    items = [charts.compounding_chart(model)]
    if model.families:
        items += [charts.family_chart(model, i) for i in range(len(model.families))]
    else:
        items.append(charts.length_chart(model))
    if model.step_latency is not None:
        items += [charts_steps.step_latency_chart(model, by) for by in ("step", "context")]
    if model.slowdown:
        items.append(charts_steps.slowdown_chart(model))
    return grid(items)


def _time(model: ReportModel) -> str:
    body = grid([charts.breakdown_chart(model, per_task=p) for p in (False, True)])
    return body + _total_work(model) + _planning(model)


def _total_work(model: ReportModel) -> str:
    """For runs with sub-agents: the bars are the critical path; total work apart."""
    if not model.total_work:
        return ""
    parts = ", ".join(f"{escape(g)} {fmt_s(s)}" for g, s in model.total_work.items())
    return (
        '<p class="hint">Runs with sub-agents: the bars split the critical path (the task '
        "time) by what is on it, so they add up to it. Total work, every agent's own time "
        f"summed over parallel branches, is a figure of its own (mean per run): {parts}.</p>"
    )


def _planning(model: ReportModel) -> str:
    if not model.planning:
        return ""
    rows = "".join(
        f"<tr><td>{escape(group)}</td><td>{100 * share['planner']:.0f}%</td>"
        f"<td>{100 * share['reflection']:.0f}%</td>"
        f"<td>{100 * (share['planner'] + share['reflection']):.0f}%</td></tr>"
        for group, share in model.planning.items()
    )
    return (
        "<h3>Planning and reflection calls</h3>"
        '<div class="scroll"><table class="sortable" data-export="planning"><thead><tr>'
        "<th>group</th><th>planner</th><th>reflection</th><th>together</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
        '<p class="hint">Share of task time spent in the agent\'s planning and reflection '
        "model calls (model_call.purpose), beside its action calls; OSWorld-Human measured "
        "75-94% for Agent S2.</p>"
    )


def _time_tables(model: ReportModel) -> dict[str, Any]:
    planning = [
        [g, round(s["planner"], 4), round(s["reflection"], 4)] for g, s in model.planning.items()
    ]
    return {
        "planning": {
            "title": "share of task time in planning and reflection calls",
            "columns": ["group", "planner_share", "reflection_share"],
            "rows": planning,
        },
    }


def _featured(model: ReportModel) -> str:
    if not model.featured:
        return "<p>No runs.</p>"
    task = model.featured[0].task
    title = f"Timeline of {task}" + (
        f": {' vs '.join(t.group for t in model.featured)}" if len(model.featured) > 1 else ""
    )
    links = " · ".join(
        f'<a href="#{t.anchor}">{escape(t.group)}: {escape(t.run_id)}</a>' for t in model.featured
    )
    diff = next(
        (d for d in model.diffs if {d.a.run_id, d.b.run_id} == {t.run_id for t in model.featured}),
        None,
    )
    step_diff = f' Their <a href="#{diff.key}">step-aligned diff</a>.' if diff else ""
    return gantt_chart(model, model.featured, "timeline", title) + (
        f'<p class="hint">Runs (timeline, where the time goes, transcript): {links}.{step_diff} '
        'Every run has its own: follow the links in the <a href="#tasks">per-task table</a> '
        'or the <a href="#runs-table">table of runs</a>.</p>'
    )


def _sensitivity(model: ReportModel) -> str:
    if model.sweep is None:
        return "<p>No runs with token counts to re-time.</p>"
    return grid([charts.sweep_chart(model), charts.ttft_chart(model)])


def _distributions(model: ReportModel) -> str:
    return grid([charts.cdf_chart(model, m) for m in ("ttft", "decode", "tool")], columns=3)


def _tasks(model: ReportModel) -> str:
    return (
        '<p class="hint">Per task, each profile\'s median time; "step diff" opens the '
        "step-aligned diff of that profile's first run against the slowest profile's.</p>"
        + task_table(model)
    )


def _notes(model: ReportModel) -> str:
    items = "".join(f"<li>{escape(note)}</li>" for note in model.notes)
    sources = f"<h3>Imported sources</h3><ul>{items}</ul>" if items else ""
    return f"<p>{escape(METRICS)}</p>{sources}{_nodes(model)}"


def _nodes(model: ReportModel) -> str:
    """Per-node medians, when the runs ran on more than one node (an executor's cluster)."""
    if not model.nodes:
        return ""
    rows = "".join(
        f"<tr><td>{escape(r.node)}</td><td>{escape(r.group)}</td><td>{r.runs}</td>"
        f"<td>{r.task_s:.2f}</td><td>{r.model_s:.2f}</td><td>{r.tool_s:.2f}</td></tr>"
        for r in model.nodes
    )
    return (
        '<h3>Per node</h3><p class="hint">The runs ran on several nodes: medians per node '
        "(wall-clock times depend on the node; pool them only where the nodes agree).</p>"
        "<table><thead><tr><th>node</th><th>group</th>"
        "<th>runs</th><th>task s</th><th>model s</th><th>tool s</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


SECTIONS: list[Section] = [
    Section("headline", "Headline", "Headline", _headline),
    Section("claim", "Is 750 tok/s worth it?", "Claim check", render_claim, claim_tables),
    Section(
        "success",
        "Success: solved, by which model, by when, for how much",
        "Success",
        render_success,
        success_tables,
    ),
    Section("money", "Money and deadlines", "Money", render_money, money_tables),
    Section("choice", "Which to use", "Which to use", render_choice, choice_tables),
    Section(
        "waterfall",
        "The speedup taken apart: published claims, re-timed",
        "Speedup apart",
        render_waterfall,
        waterfall_tables,
    ),
    Section(
        "compounding", "Compounding: how per-step latency adds up", "Compounding", _compounding
    ),
    Section("time", "Where the time goes", "Time split", _time, _time_tables),
    Section("timeline", "Timeline: the same task at two speeds", "Timeline", _featured),
    Section(
        "sensitivity", "Sensitivity: decode rate, Amdahl ceiling, TTFT", "Sensitivity", _sensitivity
    ),
    Section("distributions", "Per-step distributions", "Distributions", _distributions),
    Section("tasks", "Per task", "Tasks", _tasks),
    Section("runs-table", "Every run", "Runs", runs_table),
    Section("notes", "Definitions and provenance", "Notes", _notes),
]
"""The page's sections, top to bottom."""


def section_tables(model: ReportModel) -> dict[str, Any]:
    """Every export table of the page: the shared ones and each section's own."""
    tables = exports.export_tables(model)
    for section in SECTIONS:
        if section.tables is not None:
            tables.update(section.tables(model))
    return tables
