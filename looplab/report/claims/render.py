"""The "Is 750 tok/s worth it?" section: a forest chart, the table, the verdict sentences
and the corpus detail per harness and model (numbers from `views_claim`)."""

from __future__ import annotations

import math
from html import escape
from typing import Any

from looplab.claims.verdicts import band_text
from looplab.report.claims.click_render import click_tables, render_click
from looplab.report.claims.rows import (
    SECTIONS,
    ClaimRow,
    ClaimView,
    band_claim,
    claim_json,
    speedup_band,
)
from looplab.report.render.svg import Chart
from looplab.report.views.report_model import ReportModel
from looplab.stats.intervals import MIN_PAIRED_N

__all__ = ["ci_text", "claim_tables", "count_text", "interval_text", "render_claim", "shorter_text"]

_KIND_COLORS = {
    "live": "#0072B2",
    "live, virtual clock": "#56B4E9",
    "re-timed": "#009E73",
    "bound": "#B22222",
    "claim": "#555555",
}
_COLUMNS = (
    "evidence",
    "kind",
    "what ran",
    "n",
    "speedup (interval)",
    "shorter (interval)",
    "interval",
    "decode share",
    "verdict",
)
_TABLE_COLUMNS = [
    "key",
    "label",
    "section",
    "kind",
    "agent",
    "n",
    "untimed",
    "speedup",
    "ci_low",
    "ci_high",
    "interval",
    "shorter",
    "decode_share",
    "verdict",
    "sentence",
]


def ci_text(row: ClaimRow) -> str:
    """`2.64x (2.43-2.94)`, a band alone, or `n/a`."""
    if row.speedup is None and row.ci is None:
        return "n/a"
    if row.speedup is None and row.ci:
        return f"{row.ci[0]:.2f}-{row.ci[1]:.2f}x"
    assert row.speedup is not None
    ci = f" ({row.ci[0]:.2f}-{row.ci[1]:.2f})" if row.ci else ""
    return f"{row.speedup:.2f}x{ci}"


def shorter_text(row: ClaimRow) -> str:
    """`62% (59%-66%)`, a band alone, or `n/a`."""
    if row.shorter is None:
        low, high = row.shorter_ci or (math.nan, math.nan)
        return f"{low:.0%}-{high:.0%}" if row.ci else "n/a"
    ci = row.shorter_ci
    return f"{row.shorter:.0%}" + (f" ({ci[0]:.0%}-{ci[1]:.0%})" if ci else "")


def count_text(row: ClaimRow) -> str:
    """`42`, `11 (+3 untimed)`, or `-` for a claim."""
    if not row.n and not row.untimed:
        return "-"
    return str(row.n) + (f" (+{row.untimed} untimed)" if row.untimed else "")


def interval_text(row: ClaimRow) -> str:
    """What the row's interval is, or why it has none."""
    if row.ci is not None:
        return row.interval
    if row.speedup is not None and row.kind not in ("bound", "claim"):
        return f"none: n<{MIN_PAIRED_N}"
    return "-"


def _cell(value: float | None, text: str) -> str:
    key = f"{value:.6g}" if value is not None and math.isfinite(value) else ""
    return f'<td data-v="{key}">{escape(text)}</td>'


def _table(rows: list[ClaimRow], name: str) -> str:
    head = "".join(f"<th>{h}</th>" for h in _COLUMNS)
    body = "".join(
        f'<tr class="claim-{escape(r.verdict.replace(" ", "-"))}"><td>{escape(r.label)}</td>'
        f"<td>{escape(r.kind)}</td><td>{escape(r.agent)}</td>"
        + _cell(float(r.n), count_text(r))
        + _cell(r.speedup, ci_text(r))
        + _cell(r.shorter, shorter_text(r))
        + f"<td>{escape(interval_text(r))}</td>"
        + _cell(r.decode_share, f"{r.decode_share:.0%}" if r.decode_share is not None else "-")
        + f"<td>{escape(r.verdict)}</td></tr>"
        for r in rows
    )
    return (
        f'<div class="scroll"><table class="claim sortable" data-export="{name}">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _chart(view: ClaimView) -> str:
    rows = [r for r in view.rows if r.speedup is not None or r.ci is not None]
    label_width = max((len(r.label) for r in rows), default=10) * 6.2 + 24
    chart = Chart(
        "claim",
        f"Speedup of {view.fast} over {view.slow}, with 95% CIs, against the claim",
        f"task speedup ({view.fast_tps:g} vs {view.slow_tps:g} tok/s, x; log scale)",
        "",
        width=760,
        height=70 + 26 * len(rows),
        left=int(min(330, max(120, label_width))),
    )
    values = [v for r in rows for v in (r.speedup, *(r.ci or ())) if v is not None]
    ratio = view.fast_tps / view.slow_tps
    chart.set_scales(
        (min([0.9, *values]), max([ratio, *values]) * 1.1), (len(rows) - 0.5, -0.5), x_log=True
    )
    low_s, high_s = speedup_band(band_claim())
    said = band_text(band_claim().claimed)
    x0, x1 = chart.x(low_s), chart.x(high_s)
    chart.parts.append(
        f'<rect class="claim-band" x="{x0:.1f}" y="{chart.top}" width="{x1 - x0:.1f}" '
        f'height="{chart.height - chart.top - chart.bottom}" fill="#999999" fill-opacity="0.15">'
        f"<title>the claim: {said} shorter tasks ({low_s:.2f}-{high_s:.2f}x)</title></rect>"
    )
    chart.axes(x_fmt=lambda v: f"{v:g}x", y_ticks=False)
    chart.row_labels([r.label for r in rows])
    for index, row in enumerate(rows):
        color = _KIND_COLORS.get(row.kind, "#444444")
        if row.ci:
            chart.hbar(
                index, row.ci[0], row.ci[1], color, row.sentence, thickness=0.18, series=row.kind
            )
        if row.speedup is not None:
            chart.dots([(row.speedup, index)], color, [row.sentence], radius=5, series=row.kind)
    for kind, color in _KIND_COLORS.items():
        if any(r.kind == kind for r in rows):
            chart.legend(kind, color, "dot", kind)
    chart.legend(f"claim band: {said} shorter", "#999999", "box")
    chart.caption = (
        "Dots: median slow task time over median fast task time; bars: 95% BCa bootstrap CIs "
        "(paired by task, by draw for workloads, by run for the corpus; none under "
        f"{MIN_PAIRED_N} pairs), the Amdahl row's p10-p90 range. Shaded: the claimed "
        f"{said} shorter tasks. Amdahl band: 1/((1-f)+f/r) over the decode shares f measured."
    )
    return chart.render()


def render_claim(model: ReportModel) -> str:
    """The section's static HTML."""
    view = model.claim
    if view is None:
        return "<p>No claim check: no runs to compare and no corpus shipped.</p>"
    sentences = "".join(f"<li>{escape(r.sentence)}</li>" for r in view.rows)
    tables = "".join(
        f"<h3>{escape(title)}</h3>" + _table(rows, f"claim-{section}")
        for section, title in SECTIONS.items()
        if (rows := [r for r in view.rows if r.section == section])
    )
    detail = ""
    if view.corpus_detail:
        detail = "<h3>Corpus runs re-timed, per harness and model</h3>" + _table(
            view.corpus_detail, "claim-corpus"
        )
    return (
        f'<p class="sentence">{escape(view.sentence)}</p>'
        + _chart(view)
        + tables
        + f'<h3>Verdicts, computed from the rows</h3><ul class="verdicts">{sentences}</ul>'
        + detail
        + render_click(view)
        + '<p class="hint">Your runs: this report\'s runs (bundled tasks; calibrated '
        "workloads played through the real loop, on the virtual clock where badged). "
        "Reference rows: the shipped real runs (corpus/PROVENANCE.md) re-timed at the two "
        "rates, tools and harness as recorded; they are not your result. Verdicts compare "
        f"each 95% BCa CI with the {band_text(band_claim().claimed)} band; a row of fewer "
        f"than {MIN_PAIRED_N} pairs gets neither a CI nor a verdict.</p>"
    )


def claim_tables(model: ReportModel) -> dict[str, Any]:
    """The section's export tables (chart, rows, corpus detail)."""
    if model.claim is None:
        return {}
    data = claim_json(model.claim)

    def table(title: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "title": title,
            "columns": _TABLE_COLUMNS,
            "rows": [[r.get(c) for c in _TABLE_COLUMNS] for r in rows],
        }

    rows = table("claim check: speedup with its interval and verdict per row", data["rows"])
    sections = {
        f"claim-{key}": table(title, [r for r in data["rows"] if r["section"] == key])
        for key, title in SECTIONS.items()
    }
    return {
        "claim": rows,
        "claim-rows": rows,
        **sections,
        "claim-corpus": table("corpus re-timed per harness and model", data["corpus_detail"]),
        **click_tables(model.claim),
    }
