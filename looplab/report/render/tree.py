"""A run tree by time: an icicle of the run and its sub-runs (looplab-2 traces).

One row per run of the tree, in tree order and indented by depth (the top-level run
first); each box spans the run from its first to its last event on the run's time axis,
so a sub-run's box sits under its parent's span, parallel sub-runs side by side in time.
Boxes of the sub-runs on the critical path (`data/lanes.py`) take the critical colour; a
tick marks where the parent joined each sub-run.
"""

from __future__ import annotations

from html import escape

from looplab.report.render.gantt import CRITICAL
from looplab.report.render.svg import Chart, fmt_s
from looplab.report.views.runs import TimelineView

__all__ = ["tree_chart"]

_PLAIN = "#B9B4AA"
"""Boxes off the critical path."""


def tree_chart(timeline: TimelineView, name: str) -> str:
    """The run tree of `timeline` by time ("" for a run without sub-runs)."""
    subs = timeline.subruns
    if not subs:
        return ""
    labels = [f"main ({timeline.group})", *(s.label for s in subs)]
    chart = Chart(
        name,
        f"Run tree by time: {timeline.task}",
        "time since task start (s)",
        "",
        width=1300,
        height=70 + 30 * len(labels),
        left=int(min(300, max(90, max(len(x) for x in labels) * 6.5 + 24))),
    )
    x_max = max([timeline.task_s, *(s.end for s in subs)]) * 1.02 or 1.0
    chart.set_scales((0, x_max), (len(labels) - 0.5, -0.5))
    chart.axes(y_ticks=False)
    chart.row_labels(labels)
    _box(chart, 0, 0.0, timeline.task_s, CRITICAL, f"main: {fmt_s(timeline.task_s)}")
    for row, sub in enumerate(subs, start=1):
        color = CRITICAL if sub.critical else _PLAIN
        tip = (
            f"{sub.name}: {fmt_s(sub.end - sub.start)} from {sub.start:.2f} s"
            + (f", joined at {sub.join_at:.2f} s" if sub.join_at is not None else ", not joined")
            + (" (critical path)" if sub.critical else "")
        )
        _box(chart, row, sub.start, sub.end, color, tip)
        if sub.join_at is not None:
            x = chart.x(sub.join_at)
            chart.parts.append(
                f'<line class="join" x1="{x:.1f}" x2="{x:.1f}" y1="{chart.y(row - 0.45):.1f}" '
                f'y2="{chart.y(sub.parent_order + 0.45):.1f}" stroke="#444" '
                'stroke-dasharray="3 2"/>'
            )
    chart.legend(
        "critical path (the main run, and the sub-runs that bind its end)", CRITICAL, "box"
    )
    chart.legend("off the critical path", _PLAIN, "box")
    chart.legend("join: the parent's step that waited for the sub-run", "#444", "dash")
    chart.caption = "Width is time: a box spans its run's first to last event."
    return chart.render()


def _box(chart: Chart, row: int, x0: float, x1: float, color: str, tip: str) -> None:
    chart.hbar(row, x0, x1, color, tip, thickness=0.8)
    if chart.x(x1) - chart.x(x0) > 7 * len(tip) * 0.5:
        chart.parts.append(
            f'<text class="boxlabel" x="{chart.x(x0) + 4:.1f}" y="{chart.y(row) + 4:.1f}">'
            f"{escape(fmt_s(x1 - x0))}</text>"
        )
