"""The call-level (span) diff as HTML and as a console table (`views.span_diff`)."""

from __future__ import annotations

from html import escape

from rich.table import Table

from looplab.report.render.scales import fmt_s
from looplab.report.views.span_diff import Call, SpanDiff

__all__ = ["span_diff_html", "span_diff_summary", "span_diff_table"]


def span_diff_summary(diff: SpanDiff) -> str:
    """One sentence: aligned, inserted, removed, where the runs diverge, critical paths."""
    inserted = sum(r.status == "inserted" for r in diff.rows)
    removed = sum(r.status == "removed" for r in diff.rows)
    where = "every call aligned"
    if diff.divergence is not None:
        row = diff.rows[diff.divergence]
        call = row.a or row.b
        assert call is not None
        step = f", step {call.step + 1}" if call.step is not None else ""
        where = f"the runs diverge at call {diff.divergence + 1} ({call.action}{step})"
    return (
        f"{diff.aligned} calls aligned, {inserted} only in B, {removed} only in A; {where}. "
        f"Critical path {fmt_s(diff.critical_a_s)} (bound by {diff.binding_a}) -> "
        f"{fmt_s(diff.critical_b_s)} (bound by {diff.binding_b})."
    )


def _signed(delta: float) -> str:
    """`+1.30 s`, `-2.00 s`, `0` (under half a millisecond)."""
    if abs(delta) < 0.0005:
        return "0"
    return f"{'+' if delta > 0 else '-'}{fmt_s(abs(delta))}"


def _call(call: Call | None) -> tuple[str, str]:
    if call is None:
        return "", ""
    step = f" · step {call.step + 1}" if call.step is not None else ""
    return f"{call.action}{step}", fmt_s(call.duration_s)


def span_diff_html(diff: SpanDiff) -> str:
    """The section: the summary and a sortable table of every call pair."""
    rows = []
    for k, row in enumerate(diff.rows):
        a, a_s = _call(row.a)
        b, b_s = _call(row.b)
        delta = row.delta_s
        mark = "slower" if delta > 0.0005 else "faster" if delta < -0.0005 else ""
        css = " diverged" if k == diff.divergence else ""
        cls = {"removed": "only-a", "inserted": "only-b"}.get(row.status, "")
        rows.append(
            f'<tr class="{cls}{css}" data-status="{row.status}"><td data-v="{k}">{k + 1}</td>'
            f"<td>{escape(a)}</td><td>{a_s}</td><td>{escape(b)}</td><td>{b_s}</td>"
            f'<td class="{mark}" data-v="{delta:.6g}">{_signed(delta)}</td>'
            f"<td>{row.status}</td></tr>"
        )
    return (
        '<section id="span-diff"><h2>Call-level diff (model and tool calls, across '
        "sub-runs)</h2>"
        f'<p class="sentence small">{escape(span_diff_summary(diff))}</p>'
        '<p class="hint">Calls aligned by the longest common subsequence of their actions '
        "(who called: main or a sub-agent; what: model or the tool), the top-level run's "
        "calls first, then each sub-run's in run-tree order. The highlighted row is where "
        "the runs diverge.</p>"
        '<div class="scroll"><table class="sortable span-diff" id="span-diff-table">'
        "<thead><tr><th>#</th><th>A call</th><th>A</th><th>B call</th><th>B</th>"
        f"<th>Δ (B - A)</th><th>status</th></tr></thead><tbody>{''.join(rows)}</tbody>"
        "</table></div></section>"
    )


def span_diff_table(diff: SpanDiff) -> Table:
    """The console table `looplab diff RUN RUN` prints under the side-by-side one."""
    table = Table(title=span_diff_summary(diff), title_justify="left")
    for column in ("#", "A call", "A", "B call", "B", "Δ", "status"):
        table.add_column(column, justify="right" if column in ("#", "A", "B", "Δ") else "left")
    for k, row in enumerate(diff.rows):
        a, a_s = _call(row.a)
        b, b_s = _call(row.b)
        delta = row.delta_s
        shown = _signed(delta)
        style = "bold" if k == diff.divergence else None
        table.add_row(str(k + 1), a, a_s, b, b_s, shown, row.status, style=style)
    return table
