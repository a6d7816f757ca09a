"""A run tree as static HTML: the nested runs (indented) and the critical path against
the total work per profile, with the binding branch (`views.graph.RunGraphView`)."""

from __future__ import annotations

from html import escape

from looplab.report.render.svg import fmt_s
from looplab.report.views.graph import RunGraphView

__all__ = ["run_graph_html"]


def _step(value: int | None) -> str:
    return "-" if value is None else str(value)


def _split(model: float, tools: float, other: float, total: float) -> str:
    """`a model + b tools + c other`, with shares of `total`."""

    def part(seconds: float, name: str) -> str:
        share = f" {seconds / total:.0%}" if total > 0 else ""
        return f"{fmt_s(seconds)}{share} {name}"

    return " + ".join([part(model, "model"), part(tools, "tools"), part(other, "other")])


def run_graph_html(view: RunGraphView | None, title: str = "Run tree") -> str:
    """The tree table and the critical-path table; empty for a flat run."""
    if view is None:
        return ""
    tree = "".join(
        f'<tr><td style="padding-left:{0.3 + 1.2 * n.depth:.1f}em">{escape(n.label)}</td>'
        f"<td>{n.steps}</td><td>{n.model_calls}</td><td>{n.tool_calls}</td>"
        f"<td>{fmt_s(n.start_s)} - {fmt_s(n.end_s)}</td>"
        f"<td>{_step(n.spawned_by)}</td><td>{_step(n.joined_by)}</td></tr>"
        for n in view.nodes
    )
    points = "".join(
        f"<tr><td>{escape(p.profile)}</td><td>{fmt_s(p.critical_s)} "
        f"({_split(p.path_model_s, p.path_tool_s, p.path_other_s, p.critical_s)})</td>"
        f"<td>{fmt_s(p.work_s)} ({_split(p.model_s, p.tool_s, p.work_other_s, p.work_s)})</td>"
        f"<td>{escape(p.binding)}</td></tr>"
        for p in view.points
    )
    return (
        f'<div class="run-tree"><h4>{escape(title)}</h4>'
        "<table><thead><tr><th>run</th><th>steps</th><th>model calls</th><th>tool calls</th>"
        "<th>span (recorded)</th><th>spawned by step</th><th>joined by step</th></tr></thead>"
        f"<tbody>{tree}</tbody></table>"
        "<table><thead><tr><th>profile</th><th>critical path (task time)</th>"
        "<th>total work (all branches summed)</th><th>binding branch</th></tr></thead>"
        f"<tbody>{points}</tbody></table>"
        '<p class="hint">Task time of a run with sub-runs is its critical path: sub-runs '
        "start after their spawning step and their joining step waits for them; its split is "
        "of what is on that path (shares of task time sum to 100%). Total work sums every "
        "run's own time (parallel sub-agents each count; waits for them do not), a figure "
        "of its own.</p></div>"
    )
