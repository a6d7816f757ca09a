"""The report page: the registered sections (`sections.py`), every run's detail (timeline,
where the time goes, transcript) and the default step-aligned diffs, the embedded data and
the interactive layer; one HTML string.

Everything is inline (CSS, SVG, JSON, scripts): the file opens from disk, offline, and
makes no network request. Without scripts it is complete (static SVG, `<details>` folds);
scripts add filters, zoom, sorting and downloads over the embedded JSON, the same data
the static charts were drawn from. Per-run and diff sections are hidden by CSS until
their link makes them the URL's `:target`, so a thousand of them cost no layout time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from looplab.report.assets import asset, inline_scripts
from looplab.report.data.exports import finite, flame_data, timeline_data
from looplab.report.render.diff import diff_section
from looplab.report.render.gantt import BAR_KINDS, FLAME_KINDS, flame_chart, gantt_chart
from looplab.report.render.sections import SECTIONS, section_tables
from looplab.report.render.svg import SVG_DEFS, fmt_s
from looplab.report.render.transcript import transcript_html
from looplab.report.render.tree import tree_chart
from looplab.report.views.report_model import ReportModel, TimelineView
from looplab.traces.inputs import SetAside

__all__ = ["page_data", "render_page", "shell"]


def page_data(model: ReportModel) -> dict[str, Any]:
    """The JSON the page embeds: summary, every export table, timelines and icicles."""
    summary = {
        "title": model.title,
        "inputs": model.inputs,
        "runs": model.runs,
        "sentence": model.sentence,
        "groups": [
            {"label": g.label, "color": g.color, "runs": g.runs, "speedup": g.speedup}
            for g in model.groups
        ],
        "tables": section_tables(model),
    }
    # timelines and icicles are finite by construction (trace times are); the walk that
    # replaces non-finite numbers is kept to the summary and the tables
    return {
        **finite(summary),
        "colors": {g.label: g.color for g in model.groups},
        "kinds": BAR_KINDS,
        "boxColors": {k: c for k, (_, c) in FLAME_KINDS.items()},
        "timelines": timeline_data(model),
        "flames": flame_data(model),
    }


def shell(title: str, body: str, *, head: str = "", scripts: str = "") -> str:
    """A complete page around `body`: styles, the toolbar slot, optional scripts."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{asset('report.css')}</style>{head}</head>"
        f"<body>{SVG_DEFS}{body}{scripts}</body></html>"
    )


def render_page(
    model: ReportModel, *, run_pages: Mapping[str, str] | None = None, extra: str = ""
) -> str:
    """The complete HTML document of a report.

    Args:
        model: the report's views.
        run_pages: run id -> URL of the run's full page (the dashboard's), linked from runs
            whose transcript the file does not embed.
        extra: more HTML for the end of the body (the dashboard's live refresh).
    """
    sections = "".join(
        f'<section id="{s.key}" data-section="{s.key}"'
        + (f' data-enhance="{" ".join(s.enhance)}"' if s.enhance else "")
        + f"><h2>{escape(s.title)}</h2>{s.render(model)}</section>"
        for s in SECTIONS
    )
    rows = {r.run_id: r.diffs for r in model.run_rows}
    details = "".join(_run(model, t, rows, run_pages or {}) for t in model.timelines)
    diffs = "".join(diff_section(d) for d in model.diffs)
    data = json.dumps(page_data(model), separators=(",", ":")).replace("</", "<\\/")
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    nav = "".join(f'<a href="#{s.key}">{escape(s.nav)}</a>' for s in SECTIONS)
    body = (
        f"<header><h1>{escape(model.title)}</h1><p class='sub'>{model.runs} runs from "
        f"{escape(', '.join(model.inputs))} · generated {generated} by looplab</p>"
        f"{set_aside_notice(model.set_aside)}"
        f'<nav>{nav}</nav><div id="toolbar"></div></header><main>{sections}'
        f'<div id="runs">{details}</div><div id="diffs">{diffs}</div></main>'
        f'<script type="application/json" id="report-data">{data}</script>{extra}'
    )
    return shell(model.title, body, scripts=inline_scripts())


def set_aside_notice(set_aside: Sequence[SetAside]) -> str:
    """A warning naming every trace file found but not counted, and why ("" when none)."""
    if not set_aside:
        return ""
    items = "".join(
        f"<li><code>{escape(s.path)}</code>: {escape(s.reason)}</li>" for s in set_aside
    )
    return (
        f'<div class="set-aside"><b>{len(set_aside)} trace file(s) set aside, not '
        f"counted in this report:</b><ul>{items}</ul></div>"
    )


def _run(
    model: ReportModel,
    timeline: TimelineView,
    diff_links: Mapping[str, list[tuple[str, str]]],
    run_pages: Mapping[str, str],
) -> str:
    verdict = {True: "solved", False: "not solved", None: "not checked"}[timeline.success]
    title = (
        f"{timeline.group} · {timeline.task} · {fmt_s(timeline.task_s)}, {timeline.steps} "
        f"steps, {verdict}"
    )
    diffs = " · ".join(
        f'<a class="diff" href="#{key}">{escape(label)}</a>'
        for key, label in diff_links.get(timeline.run_id, [])
    )
    view = model.transcripts.get(timeline.run_id)
    if view is not None:
        transcript = transcript_html(view)
    else:
        page = run_pages.get(timeline.run_id)
        where = (
            f'<a href="{escape(page)}">open its transcript</a>'
            if page
            else "the dashboard (<code>looplab dashboard</code>) shows every run's, and "
            "<code>looplab report --transcripts N</code> embeds more"
        )
        transcript = f'<p class="hint">Transcript not embedded in this file; {where}.</p>'
    flame = flame_chart(timeline, f"flame:{timeline.run_id}") if timeline.flame else ""
    links = f"<p>{diffs}</p>" if diffs else ""
    return (
        f'<section class="run" id="{timeline.anchor}"><h3>Run {escape(timeline.run_id)}</h3>'
        f"{links}{gantt_chart(model, [timeline], f'run:{timeline.run_id}', title, caption=False)}"
        f"{tree_chart(timeline, f'tree:{timeline.run_id}')}"
        f"{flame}"
        f'{transcript}<p><a href="#tasks">back to the per-task table</a> · '
        '<a href="#runs-table">the table of runs</a></p></section>'
    )
