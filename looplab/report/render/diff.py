"""The step-aligned diff, drawn: a chart of per-step differences by phase with the
cumulative gap, and the aligned table (`views_diff.DiffView` holds the numbers).

Used by the report (one hidden section per default pair, opened by its link) and by the
dashboard's diff page (any two runs).
"""

from __future__ import annotations

from html import escape

from looplab.report.data.steps import PHASES
from looplab.report.render.graph import run_graph_html
from looplab.report.render.svg import Chart, fmt_s
from looplab.report.views.diff import DiffRow, DiffView
from looplab.report.views.time_split import COMPONENTS

__all__ = ["PHASE_COLORS", "diff_chart", "diff_section", "diff_table_html", "signed_s"]

PHASE_COLORS = {
    "ttft": COMPONENTS["ttft"][1],
    "prefill": "#C9B3E6",
    "reasoning": COMPONENTS["reasoning"][1],
    "decode": COMPONENTS["decode"][1],
    "model": COMPONENTS["model"][1],
    "planning": "#5B7DB1",
    "tools": COMPONENTS["tools"][1],
    "act": COMPONENTS["act"][1],
    "page_wait": COMPONENTS["page_wait"][1],
    "observe": COMPONENTS["observe"][1],
    "overhead": COMPONENTS["overhead"][1],
}
_STATUS_CSS = {
    "same": "",
    "arguments differ": "args",
    "only in A": "only-a",
    "only in B": "only-b",
}


def signed_s(value: float | None) -> str:
    """`+0.21 s`, `-1.3 s`, `0` (a difference), `-` when unknown."""
    if value is None:
        return "-"
    if abs(value) < 5e-4:
        return "0"
    return ("+" if value > 0 else "-") + fmt_s(abs(value))


def _phases(diff: DiffView) -> list[str]:
    """Phases with any value in either run (the rest are columns of zeros)."""
    return [k for k in PHASES if any(abs(v) > 0 for v in diff.totals[k])]


def diff_chart(diff: DiffView) -> str:
    """Per aligned step: B - A by phase (stacked, above zero slower, below faster), and
    the cumulative gap as a line."""
    phases = _phases(diff)
    chart = Chart(
        f"gap-{diff.key}",
        "B - A per aligned step, by phase, and the cumulative gap",
        "aligned step",
        "B - A (s)",
        width=900,
        height=320,
    )
    tops = [0.0]
    bottoms = [0.0]
    for row in diff.rows:
        values = [row.delta[k] or 0.0 for k in phases]
        tops.append(sum(v for v in values if v > 0))
        bottoms.append(sum(v for v in values if v < 0))
    gaps = [row.gap_s for row in diff.rows]
    high = max([*tops, *gaps, 0.0])
    low = min([*bottoms, *gaps, 0.0])
    pad = (high - low) * 0.06 or 1.0
    chart.set_scales((0.3, len(diff.rows) + 0.7), (low - pad, high + pad))
    chart.data = {"export": diff.key}  # its data is the aligned table's
    chart.axes(x_fmt=lambda v: f"{v:g}" if v == int(v) else "")
    chart.parts.append(
        f'<line class="axis" x1="{chart.left}" x2="{chart.plot_right}" '
        f'y1="{chart.y(0):.1f}" y2="{chart.y(0):.1f}"/>'
    )
    for index, row in enumerate(diff.rows, start=1):
        up = down = 0.0
        for key in phases:
            value = row.delta[key] or 0.0
            if abs(value) < 1e-9:
                continue
            base = up if value > 0 else down
            tip = f"step {index} ({row.signature}): {PHASES[key]} {signed_s(value)}"
            chart.vbar(index, base, base + value, PHASE_COLORS[key], tip, series=key)
            if value > 0:
                up += value
            else:
                down += value
    points = [(float(i), g) for i, g in enumerate(gaps, start=1)]
    chart.line(points, "#222222", "cumulative gap B - A", width=2.5, series="gap")
    chart.dots(
        points,
        "#222222",
        [f"after step {i}: B {signed_s(g)} vs A" for i, g in enumerate(gaps, start=1)],
        radius=2.5,
        series="gap",
    )
    for key in phases:
        chart.legend(PHASES[key], PHASE_COLORS[key], "box", key)
    chart.legend("cumulative gap (B - A)", "#222222", "line", "gap")
    chart.caption = (
        "Bars: how much longer (above zero) or shorter (below) each phase took in B than in "
        "A at that step (a step only one run took counts in full). Line: B's elapsed time "
        "minus A's once both finished the step: how the gap compounds."
    )
    return chart.render()


def diff_table_html(diff: DiffView) -> str:
    """The aligned table, with a totals row."""
    phases = _phases(diff)
    head = "".join(f"<th>Δ {escape(PHASES[k])}</th>" for k in phases)
    head = (
        "<tr><th>#</th><th>A step</th><th>B step</th><th>tool calls</th><th>status</th>"
        f"{head}<th>A step</th><th>B step</th><th>Δ step</th><th>gap after</th></tr>"
    )
    rows = [_row_html(i, row, phases) for i, row in enumerate(diff.rows, start=1)]
    totals = "".join(f"<td>{signed_s(diff.totals[k][1] - diff.totals[k][0])}</td>" for k in phases)
    gap = diff.rows[-1].gap_s if diff.rows else 0.0
    foot = (
        f'<tr><td colspan="5">total over the steps</td>{totals}'
        f"<td>{fmt_s(sum(r.a_s or 0 for r in diff.rows))}</td>"
        f"<td>{fmt_s(sum(r.b_s or 0 for r in diff.rows))}</td><td></td>"
        f"<td>{signed_s(gap)}</td></tr>"
    )
    return (
        f'<div class="scroll"><table class="diff sortable" data-export="{diff.key}">'
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody><tfoot>{foot}</tfoot></table></div>"
    )


def _delta_cell(value: float | None, title: str) -> str:
    css = ""
    if value is not None and abs(value) >= 5e-4:
        css = " class='slower'" if value > 0 else " class='faster'"
    key = f"{value:.6g}" if value is not None else ""
    return f'<td{css} data-v="{key}" title="{escape(title)}">{signed_s(value)}</td>'


def _row_html(index: int, row: DiffRow, phases: list[str]) -> str:
    css = _STATUS_CSS[row.status] + (" diverged" if row.diverged else "")
    cells = []
    for key in phases:
        a = (row.a_parts or {}).get(key)
        b = (row.b_parts or {}).get(key)
        title = f"A {fmt_s(a) if a is not None else '-'} -> B {fmt_s(b) if b is not None else '-'}"
        cells.append(_delta_cell(row.delta[key], title))
    status = escape(row.status) + (
        f'<br><span class="hint">diverged: {escape(row.diverged)}</span>' if row.diverged else ""
    )
    step_delta = row.b_s - row.a_s if row.a_s is not None and row.b_s is not None else None
    return (
        f'<tr class="{css.strip()}"><td data-v="{index}">{index}</td>'
        f"<td>{'' if row.a is None else row.a + 1}</td>"
        f"<td>{'' if row.b is None else row.b + 1}</td>"
        f"<td><code>{escape(row.signature)}</code></td><td>{status}</td>{''.join(cells)}"
        f'<td data-v="{row.a_s or 0:.6g}">{fmt_s(row.a_s) if row.a_s is not None else "-"}</td>'
        f'<td data-v="{row.b_s or 0:.6g}">{fmt_s(row.b_s) if row.b_s is not None else "-"}</td>'
        f"{_delta_cell(step_delta, 'B step - A step')}"
        f"{_delta_cell(row.gap_s, 'B elapsed - A elapsed after this row')}</tr>"
    )


def diff_section(
    diff: DiffView, *, hrefs: tuple[str, str] | None = None, hidden: bool = True
) -> str:
    """A whole diff: who is compared, the summary, the chart and the table.

    Args:
        diff: the diff.
        hrefs: links to run A's and run B's pages (default: their sections in a report).
        hidden: a report section opened by its link (`:target`), not a page of its own.
    """
    a, b = diff.a, diff.b
    href_a, href_b = hrefs or (f"#{a.anchor}", f"#{b.anchor}")
    gap = b.task_s - a.task_s
    verdict = {True: "solved", False: "not solved", None: "not checked"}
    who = (
        f'<p>A: <a href="{escape(href_a)}">{escape(a.group)} · {escape(a.run_id)}</a> '
        f"({fmt_s(a.task_s)}, {a.steps} steps, {verdict[a.success]}, {a.clock} clock)<br>"
        f'B: <a href="{escape(href_b)}">{escape(b.group)} · {escape(b.run_id)}</a> '
        f"({fmt_s(b.task_s)}, {b.steps} steps, {verdict[b.success]}, {b.clock} clock)</p>"
    )
    faster = "faster" if gap < 0 else "slower"
    summary = (
        f'<p class="sentence small">B was {fmt_s(abs(gap))} {faster} than A: '
        f"{diff.matched} steps aligned, {diff.only_a} only in A, {diff.only_b} only in B.</p>"
    )
    notes = "".join(f'<p class="hint">{escape(n)}</p>' for n in diff.notes)
    css = "diff-view run" if hidden else "diff-view"
    back = '<p><a href="#tasks">back to the per-task table</a></p>' if hidden else ""
    return (
        f'<section class="{css}" id="{diff.key}"><h3>Step-aligned diff: {escape(diff.task)}</h3>'
        f"{who}{summary}{diff_chart(diff)}{diff_table_html(diff)}{notes}"
        f"{run_graph_html(diff.trees[0], 'Run tree of A')}"
        f"{run_graph_html(diff.trees[1], 'Run tree of B')}{back}</section>"
    )
