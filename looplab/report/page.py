"""The report page: sections, tables and styles around the charts; one HTML string.

Everything is inline (CSS, SVG, the JSON summary): the file opens from disk, offline,
with no script at all. Per-run timelines are sections hidden by CSS until their link
makes them the URL's `:target`, so a thousand of them cost no layout time.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from datetime import UTC, datetime
from html import escape

from looplab.report import charts, charts_steps
from looplab.report.svg import SVG_DEFS, fmt_s
from looplab.report.views import GroupView, ReportModel

__all__ = ["render_page"]

_METRICS = (
    "TTFT: request sent -> first token of any kind (with hidden reasoning, the first token "
    "the model generated: hidden reasoning decode is shown apart, and time to the first "
    "visible token = TTFT + prefill + reasoning). Decode: first -> last visible token. "
    "Model time: "
    "request scheduled -> stream end. Tool time: tool started -> result ready. Overhead: step "
    "wall time minus model and tool time. Task time: first request -> the agent's finish "
    "(sandbox start excluded, shown apart). Speedup: the slowest profile's median task time "
    "over this profile's; its 95% CI is a bootstrap over tasks (paired when both profiles ran "
    "the same tasks)."
)


def render_page(model: ReportModel) -> str:
    """The complete HTML document of a report."""
    sections = [
        _section("headline", "Headline", _headline(model)),
        _section("compounding", "Compounding: how per-step latency adds up", _compounding(model)),
        _section(
            "time",
            "Where the time goes",
            _grid(
                [
                    charts.breakdown_chart(model, per_task=False),
                    charts.breakdown_chart(model, per_task=True),
                ]
            ),
        ),
        _section("timeline", "Timeline: the same task at two speeds", _featured(model)),
        _section(
            "sensitivity", "Sensitivity: decode rate, Amdahl ceiling, TTFT", _sensitivity(model)
        ),
        _section(
            "distributions",
            "Per-step distributions",
            _grid([charts.cdf_chart(model, m) for m in ("ttft", "decode", "tool")], columns=3),
        ),
        _section("tasks", "Per task", _task_table(model)),
        _runs(model),
        _section("notes", "Definitions and provenance", _notes(model)),
    ]
    summary = {
        "title": model.title,
        "inputs": model.inputs,
        "runs": model.runs,
        "sentence": model.sentence,
        "groups": [asdict(g) for g in model.groups],
    }
    data = json.dumps(_finite(summary)).replace("</", "<\\/")
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    nav = "".join(
        f'<a href="#{key}">{label}</a>'
        for key, label in [
            ("headline", "Headline"),
            ("compounding", "Compounding"),
            ("time", "Time split"),
            ("timeline", "Timeline"),
            ("sensitivity", "Sensitivity"),
            ("distributions", "Distributions"),
            ("tasks", "Tasks"),
            ("notes", "Notes"),
        ]
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{escape(model.title)}</title><style>{_CSS}</style></head><body>"
        f"{SVG_DEFS}<header><h1>{escape(model.title)}</h1><p class='sub'>"
        f"{model.runs} runs from {escape(', '.join(model.inputs))} · generated {generated} "
        f"by looplab</p><nav>{nav}</nav></header><main>{''.join(sections)}</main>"
        f'<script type="application/json" id="report-data">{data}</script></body></html>'
    )


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _section(key: str, title: str, body: str) -> str:
    return f'<section id="{key}"><h2>{escape(title)}</h2>{body}</section>'


def _grid(items: list[str], columns: int = 2) -> str:
    return f'<div class="grid c{columns}">{"".join(items)}</div>'


def _headline(model: ReportModel) -> str:
    sentence = f'<p class="sentence">{escape(model.sentence)}</p>' if model.sentence else ""
    head = (
        "<tr><th>profile</th><th>decode tok/s</th><th>runs</th><th>solved</th>"
        "<th>median task</th><th>p90 task</th><th>median steps</th><th>model</th>"
        "<th>tools</th><th>overhead</th><th>speedup (95% CI)</th></tr>"
    )
    rows = "".join(_group_row(g) for g in model.groups)
    legend = ""
    if any(g.estimated for g in model.groups):
        legend = (
            '<p class="hint"><span class="est">est.</span> marks groups whose times are partly '
            "estimated by an importer (see Definitions and provenance); estimated values are "
            "hatched or dashed in the charts.</p>"
        )
    return (
        f'{sentence}<table class="headline"><thead>{head}</thead><tbody>{rows}</tbody></table>'
        f"{legend}"
    )


def _group_row(group: GroupView) -> str:
    solved = f"{group.solved}/{group.checked}" if group.checked else "unknown"
    if group.reference:
        speedup = "1.00x (reference)"
    elif group.ci and all(math.isfinite(v) for v in group.ci):
        speedup = f"{group.speedup:.2f}x ({group.ci[0]:.2f}-{group.ci[1]:.2f})"
    else:
        speedup = f"{group.speedup:.2f}x"
    est = ""
    if group.estimated:
        what = ", ".join(group.estimated)
        est = f' <span class="est" title="estimated: {escape(what)}">est.</span>'
    rate = f"{group.decode_tps:g}" if group.decode_tps else "-"
    cells = [
        f'<td><i class="dot" style="--c:{group.color}"></i>{escape(group.label)}{est}</td>',
        f"<td>{rate}</td>",
        f"<td>{group.runs}</td>",
        f"<td>{solved}</td>",
        f"<td>{fmt_s(group.median_task_s)}</td>",
        f"<td>{fmt_s(group.p90_task_s)}</td>",
        f"<td>{group.median_steps:g}</td>",
        f"<td>{group.model_share:.0%}</td>",
        f"<td>{group.tool_share:.0%}</td>",
        f"<td>{group.overhead_share:.0%}</td>",
        f"<td>{speedup}</td>",
    ]
    return f"<tr>{''.join(cells)}</tr>"


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
    return _grid(items)


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
    return charts.gantt_chart(model, model.featured, "timeline", title) + (
        f'<p class="hint">Runs: {links}. Every run has its own timeline: follow the links in '
        'the <a href="#tasks">per-task table</a>.</p>'
    )


def _sensitivity(model: ReportModel) -> str:
    if model.sweep is None:
        return "<p>No runs with token counts to re-time.</p>"
    return _grid([charts.sweep_chart(model), charts.ttft_chart(model)])


def _task_table(model: ReportModel) -> str:
    groups = [g.label for g in model.groups]
    head = "<tr><th>task</th>" + "".join(
        f'<th><i class="dot" style="--c:{model.color(g)}"></i>{escape(g)}</th>' for g in groups
    )
    head += "<th>speedup</th></tr>"
    rows = []
    for row in model.tasks:
        cells = [f"<td>{escape(row.task)}</td>"]
        for group in groups:
            cell = row.cells.get(group)
            if cell is None:
                cells.append("<td>-</td>")
                continue
            runs, median_s, solved, steps, links = cell
            anchors = " ".join(
                f'<a href="#{anchor}" title="timeline of this run">{escape(text)}</a>'
                for anchor, text in links
            )
            cells.append(
                f"<td>{fmt_s(median_s)} <span class='hint'>({runs} runs, solved {solved}, "
                f"{steps:g} steps)</span><br><span class='runs'>timeline: {anchors}</span></td>"
            )
        cells.append(f"<td>{row.speedup:.2f}x</td>" if row.speedup else "<td>-</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table class="tasks"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _runs(model: ReportModel) -> str:
    parts = []
    for timeline in model.timelines:
        verdict = {True: "solved", False: "not solved", None: "not checked"}[timeline.success]
        title = (
            f"{timeline.group} · {timeline.task} · {fmt_s(timeline.task_s)}, {timeline.steps} "
            f"steps, {verdict}"
        )
        parts.append(
            f'<section class="run" id="{timeline.anchor}"><h3>Run {escape(timeline.run_id)}</h3>'
            + charts.gantt_chart(model, [timeline], f"run:{timeline.run_id}", title)
            + '<p><a href="#tasks">back to the per-task table</a></p></section>'
        )
    return f'<div id="runs">{"".join(parts)}</div>'


def _notes(model: ReportModel) -> str:
    items = "".join(f"<li>{escape(note)}</li>" for note in model.notes)
    sources = f"<h3>Imported sources</h3><ul>{items}</ul>" if items else ""
    return f"<p>{escape(_METRICS)}</p>{sources}"


_CSS = """
:root{--fg:#1d1d1f;--muted:#666;--line:#ddd;--bg:#fafaf8}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--fg);background:var(--bg)}
header{padding:18px 28px 8px;background:#fff;border-bottom:1px solid var(--line)}
h1{margin:0;font-size:22px}h2{font-size:18px;margin:0 0 10px}h3{font-size:15px}
.sub{margin:4px 0 8px;color:var(--muted)}
nav a{margin-right:14px;color:#0b5cad;text-decoration:none}
main{padding:8px 28px 40px;max-width:1400px}
section{margin:18px 0 26px}
.grid{display:grid;gap:14px;grid-template-columns:repeat(auto-fit,minmax(460px,1fr))}
.grid.c3{grid-template-columns:repeat(auto-fit,minmax(360px,1fr))}
figure.chart{margin:0;background:#fff;border:1px solid var(--line);border-radius:6px;
padding:8px 10px}
figure.chart svg{max-width:100%;height:auto;display:block}
figcaption{color:var(--muted);font-size:12px;margin-top:4px}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:4px 0 0 6px}
.key{display:inline-flex;align-items:center;gap:5px}
.sw{display:inline-block;width:18px;height:10px;background:var(--c)}
.sw.line{height:3px}.sw.dash{height:0;border-top:3px dashed var(--c);background:none}
.sw.dot{width:10px;height:10px;border-radius:50%}
.sw.hatch{background:repeating-linear-gradient(45deg,#fff 0 3px,#555 3px 5px)}
svg .title{font-weight:600;font-size:14px;fill:var(--fg)}
svg .tick{font-size:11px;fill:#555}svg .label{font-size:12px;fill:#333}
svg .note{font-size:11px}
svg .grid{stroke:#eee}svg .axis{stroke:#999}
.sentence{font-size:20px;font-weight:600;background:#fff;border-left:5px solid #0072B2;
padding:10px 16px;margin:0 0 12px}
table{border-collapse:collapse;background:#fff;border:1px solid var(--line)}
th,td{padding:5px 10px;border-bottom:1px solid #eee;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}
th{background:#f3f3f1;font-weight:600}
.dot{display:inline-block;width:10px;height:10px;border-radius:50%;background:var(--c);
margin-right:6px}
.hint{color:var(--muted);font-size:12px}
.est{font-size:11px;background:#fff3cd;border:1px solid #e0c060;border-radius:3px;
padding:0 4px;color:#7a5b00}
.runs a{margin-right:4px}
.run{display:none}.run:target{display:block}
"""
