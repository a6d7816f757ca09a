"""Run timelines (Gantt) and the where-the-time-goes (icicle) view of one run.

Both are drawn here as static SVG, and both carry what the interactive layer needs to
redraw them from the page's embedded data (`exports.timeline_data` / `flame_data`): the
runs they show (`data-gantt`, `data-flame`) and their plot geometry. Bars carry their
phase as `data-s` (legend toggles and the phase filter) and their duration as `data-d`
(the duration filter), so static and redrawn charts answer the same filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import NamedTuple

from looplab.report.data.records import Bar
from looplab.report.render.svg import Chart, fmt_s
from looplab.report.views.report_model import COMPONENTS, ReportModel, TimelineView
from looplab.report.views.runs import FlameNode

__all__ = [
    "BAR_KINDS",
    "FLAME_KINDS",
    "Link",
    "flame_chart",
    "gantt_chart",
    "lane_marks",
    "lanes",
    "row_label",
]

BAR_KINDS: dict[str, tuple[str, str]] = {
    "queue": ("client queue", COMPONENTS["overhead"][1]),
    "ttft": ("TTFT + prefill", COMPONENTS["ttft"][1]),
    "reasoning": ("reasoning (hidden decode)", COMPONENTS["reasoning"][1]),
    "decode": ("decode", COMPONENTS["decode"][1]),
    "model": ("model call (not split)", COMPONENTS["model"][1]),
    "tool": ("tool call", COMPONENTS["tools"][1]),
    "act": ("browser action", COMPONENTS["act"][1]),
    "page_wait": ("page-load wait", COMPONENTS["page_wait"][1]),
    "observe": ("observation capture", COMPONENTS["observe"][1]),
}
"""Timeline bar kinds: key -> (legend label, colour), in legend order."""

ROW_PX = 26
"""Height of one timeline row in pixels."""


def lanes(timeline: TimelineView) -> list[str]:
    """A run's lanes in drawing order: the top-level run's `model` first, then its tool
    lanes, then each sub-run's (model, tools) in run-tree order."""
    order = {b.lane: b.order for b in timeline.bars}
    return sorted(order, key=lambda s: (order[s], not s.endswith("model"), s))


def row_label(timeline: TimelineView, lane: str) -> str:
    """A lane's label: the run's group before its own lanes; sub-run lanes are indented
    under it instead (their label starts with the tree mark)."""
    return lane if lane.lstrip("\u00a0").startswith("└") else f"{timeline.group} · {lane}"


class Link(NamedTuple):
    """A spawn or join between a parent's and a sub-run's first lanes (lane indices)."""

    start: int
    end: int
    at: float
    kind: str
    """`spawn` or `join`."""


def lane_marks(timeline: TimelineView, order: list[str]) -> tuple[list[Link], list[int]]:
    """Spawn and join links and the lanes of the sub-runs on the critical path, as
    indices into `order` (the run's lanes). Linear in bars and lanes (a 1,100-deep chain of
    sub-runs took minutes when each lane searched the bars)."""
    tree_of_lane: dict[str, int] = {}
    lanes_of_tree: dict[int, set[str]] = {}
    for bar in timeline.bars:
        tree_of_lane.setdefault(bar.lane, bar.order)
        lanes_of_tree.setdefault(bar.order, set()).add(bar.lane)
    first: dict[int, int] = {}
    index_of_lane = {lane: index for index, lane in enumerate(order)}
    for index, lane in enumerate(order):
        first.setdefault(tree_of_lane[lane], index)
    links: list[Link] = []
    critical: list[int] = []
    for sub in timeline.subruns:
        if sub.order not in first or sub.parent_order not in first:
            continue
        parent, own = first[sub.parent_order], first[sub.order]
        links.append(Link(parent, own, sub.start, "spawn"))
        if sub.join_at is not None:
            links.append(Link(own, parent, sub.join_at, "join"))
        if sub.critical:
            mine = lanes_of_tree.get(sub.order, set())
            critical += sorted(index_of_lane[lane] for lane in mine if lane in index_of_lane)
    return links, critical


CRITICAL = "#CC79A7"
"""The band behind a critical sub-run's lanes."""


def _bars_by_lane(timelines: Sequence[TimelineView]) -> dict[tuple[int, str], list[Bar]]:
    """Each timeline's bars by lane, in one pass (lanes x bars was quadratic)."""
    by_lane: dict[tuple[int, str], list[Bar]] = {}
    for timeline in timelines:
        for bar in timeline.bars:
            by_lane.setdefault((id(timeline), bar.lane), []).append(bar)
    return by_lane


def gantt_chart(
    model: ReportModel,
    timelines: Sequence[TimelineView],
    name: str,
    title: str,
    *,
    caption: bool = True,
) -> str:
    """Model and tool calls on the run's time axis; several runs stacked on one scale
    (`caption`: explain the chart below it)."""
    rows = [
        (row_label(timeline, lane), timeline, lane)
        for timeline in timelines
        for lane in lanes(timeline)
    ]
    label_width = max((len(r[0]) for r in rows), default=10) * 6.5 + 24
    chart = Chart(
        name,
        title,
        "time since task start (s)",
        "",
        width=1300,
        height=70 + ROW_PX * max(1, len(rows)),
        left=int(min(300, max(90, label_width))),
    )
    x_max = max((t.task_s for t in timelines), default=1.0) * 1.02 or 1.0
    chart.set_scales((0, x_max), (max(0, len(rows)) - 0.5, -0.5))
    chart.data = {"gantt": " ".join(t.anchor for t in timelines), "x1": f"{x_max:.6g}"}
    chart.data["plot"] = _plot(chart)
    chart.axes(y_ticks=False)
    chart.row_labels([r[0] for r in rows])
    kinds: set[str] = set()
    hatched_any = _tree_marks(chart, timelines)
    by_lane = _bars_by_lane(timelines)
    for index, (_, timeline, lane) in enumerate(rows):
        chart.parts.append(
            f'<rect x="4" y="{chart.y(index) - 6:.1f}" width="6" height="12" '
            f'fill="{model.color(timeline.group)}"/>'
        )
        for bar in by_lane.get((id(timeline), lane), []):
            kinds.add(bar.kind)
            hatched_any |= bar.estimated
            duration = bar.end - bar.start
            chart.hbar(
                index,
                bar.start,
                bar.end,
                BAR_KINDS[bar.kind][1],
                f"{bar.label}: {fmt_s(duration)} (at {bar.start:.2f} s)",
                hatched=bar.estimated,
            )
        end_x = chart.x(timeline.task_s)
        chart.parts.append(
            f'<line x1="{end_x:.1f}" x2="{end_x:.1f}" y1="{chart.y(index - 0.45):.1f}" '
            f'y2="{chart.y(index + 0.45):.1f}" stroke="{model.color(timeline.group)}" '
            'stroke-width="2"/>'
        )
    for kind, (label, color) in BAR_KINDS.items():
        if kind in kinds:
            chart.legend(label, color, "box", kind)
    if any(t.subruns for t in timelines):
        chart.legend("critical path: the sub-run that binds the run's end", CRITICAL, "box")
        chart.legend("spawn (solid) and join (dashed) of a sub-run", "#444", "line")
    if hatched_any:
        chart.legend("estimated (source lacked exact times)", "#555", "hatch")
    for timeline in timelines:
        chart.legend(
            f"{timeline.group}: {timeline.task}, {fmt_s(timeline.task_s)}, {timeline.steps} steps",
            model.color(timeline.group),
            "line",
        )
    if caption:
        chart.caption = (
            "Hover a bar for its step, tool and duration. Vertical tick: the agent's finish. "
            "With scripts on: drag across the plot to zoom, buttons to zoom and pan; the "
            "filters above hide phases, profiles and bars shorter than a duration."
        )
    return chart.render()


def _tree_marks(chart: Chart, timelines: Sequence[TimelineView]) -> bool:
    """Critical bands behind binding sub-runs' lanes and spawn/join links (drawn first,
    under the bars). Returns False (nothing estimated: the caller's flag starts here)."""
    offset = 0
    for timeline in timelines:
        order = lanes(timeline)
        links, critical = lane_marks(timeline, order)
        for lane in critical:
            y = chart.y(offset + lane)
            chart.parts.append(
                f'<rect class="critical" x="{chart.left}" y="{y - ROW_PX / 2:.1f}" '
                f'width="{chart.plot_right - chart.left}" height="{ROW_PX}" fill="{CRITICAL}" '
                'fill-opacity=".18"/>'
            )
        for link in links:
            x = chart.x(link.at)
            dash = ' stroke-dasharray="3 2"' if link.kind == "join" else ""
            y1, y2 = chart.y(offset + link.start), chart.y(offset + link.end)
            chart.parts.append(
                f'<line class="link {link.kind}" x1="{x:.1f}" x2="{x:.1f}" y1="{y1:.1f}" '
                f'y2="{y2:.1f}" stroke="#444" stroke-width="1.2"{dash}/>'
            )
        offset += len(order)
    return False


def _plot(chart: Chart) -> str:
    """The plot area `left,top,right,bottom` in SVG units (where redrawn marks go)."""
    return f"{chart.left},{chart.top},{chart.plot_right},{chart.height - chart.bottom}"


FLAME_KINDS: dict[str, tuple[str, str]] = {
    "modelcall": ("model call (all phases)", "#A9BCD0"),
    **{
        k: COMPONENTS[k]
        for k in ("ttft", "reasoning", "decode", "model", "tools", "act", "page_wait", "observe")
    },
    "overhead": COMPONENTS["overhead"],
    "run": ("the run", "#B9B4AA"),
}
"""Icicle box kinds: key -> (legend label, colour)."""


def _color(kind: str) -> str:
    return FLAME_KINDS.get(kind, FLAME_KINDS["run"])[1]


def flame_chart(timeline: TimelineView, name: str) -> str:
    """The run's time as nested boxes: the run, then model / tools / overhead, then model
    phases and tool names; width is time. Colours are the timeline's; every box says what
    it is (label or tooltip), so the chart has no legend of its own."""
    root = timeline.flame
    assert root is not None
    chart = Chart(
        name,
        f"Where the time goes: {timeline.group} · {timeline.task}",
        "time (s, summed over the run's steps)",
        "",
        width=1300,
        height=70 + 30 * 3,
        left=90,
    )
    chart.set_scales((0, root.value or 1.0), (2.5, -0.5))
    chart.data = {"flame": timeline.anchor, "plot": _plot(chart)}
    chart.axes(y_ticks=False)
    chart.row_labels(["run", "phase", "detail"])
    _boxes(chart, root, 0, 0.0, "0", root.value or 1.0)
    chart.caption = "Boxes: model phases, tools by name, overhead; scripts: click to zoom."
    return chart.render()


def _boxes(chart: Chart, node: FlameNode, depth: int, x: float, path: str, total: float) -> None:
    share = node.value / total if total > 0 else 0.0
    chart.hbar(
        depth,
        x,
        x + node.value,
        _color(node.kind),
        f"{node.name}: {fmt_s(node.value)} ({share:.0%} of the run)",
        thickness=0.9,
        attrs=f' data-p="{path}"',
    )
    if chart.x(x + node.value) - chart.x(x) > 8 * len(node.name) + 60:
        chart.parts.append(
            f'<text class="boxlabel" x="{chart.x(x) + 4:.1f}" y="{chart.y(depth) + 4:.1f}">'
            f"{escape(node.name)} {fmt_s(node.value)}</text>"
        )
    offset = x
    for index, child in enumerate(node.children):
        _boxes(chart, child, depth + 1, offset, f"{path}.{index}", total)
        offset += child.value
