"""The "Money and deadlines" section: cost per task per profile, a time-vs-cost chart per
agent (each profile a point with 95% CI whiskers where n allows), the price of waiting,
and success-under-cap curves (these runs; the corpus re-timed at slow-80 and fast-750).
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from looplab.report.render.svg import Chart, fmt_s
from looplab.report.views.money import CapsView, CostPoint
from looplab.report.views.report_model import ReportModel

__all__ = ["money_tables", "render_money"]


def _usd(value: float | None) -> str:
    if value is None:
        return "unpriced"
    if value < 0:  # a saving: -$0.0036, never $-0.0036
        return "-" + _usd(-value)
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _cost_chart(model: ReportModel, agent: str, points: list[CostPoint]) -> str:
    priced = [p for p in points if p.cost_usd is not None]
    if not priced:  # nothing to draw: say so instead of an empty chart
        why = "; ".join(sorted({f"{p.group}: {p.unpriced}" for p in points if p.unpriced}))
        return f'<p class="note">{escape(agent)}: no cost per task ({escape(why)}).</p>'

    chart = Chart(
        "cost-" + re.sub(r"[^a-z0-9]+", "-", agent.lower()).strip("-"),
        f"{agent}: task time vs cost per task",
        "median task time (s)",
        "median cost per task ($)",
        width=420,
        height=300,
    )
    chart.data["export"] = "cost"  # its data: the section's `cost` table (`money_tables`)
    xs = [v for p in priced for v in (p.task_s, *(p.task_ci or ()))]
    ys = [v for p in priced for v in (p.cost_usd or 0.0, *(p.cost_ci or ()))]
    chart.set_scales((0, max(xs) * 1.15), (0, max(ys) * 1.15))
    chart.axes(y_fmt=lambda v: f"${v:.3g}")
    for p in priced:
        color = model.color(p.group)
        cost = p.cost_usd or 0.0
        chart.dots(
            [(p.task_s, cost)],
            color,
            [f"{p.group}: {fmt_s(p.task_s)}, {_usd(cost)} per task ({p.runs} runs)"],
            series=p.group,
        )
        if p.cost_ci:
            chart.error_bar(p.task_s, p.cost_ci[0], p.cost_ci[1], color, series=p.group)
        chart.legend(p.group, color, "dot", p.group)
    whiskers = any(p.cost_ci for p in priced)
    chart.caption = (
        "One point per profile; whiskers: 95% BCa interval of the cost over tasks."
        if whiskers
        else "One point per profile; too few tasks (< 6) for an interval: point estimates."
    )
    return chart.render()


def _caps_chart(model: ReportModel, caps: CapsView, source: str) -> str:
    curves = [c for s, c in caps.curves if s == source]
    chart = Chart(
        f"caps-{source.replace(' ', '-')}",
        f"Success under a cap: {source}",
        "task time cap (s)",
        "share finishing within the cap",
        width=420,
        height=300,
    )
    chart.data["export"] = "caps"  # its data: the section's `caps` table (`money_tables`)
    top = max((c.caps_s[-1] for c in curves), default=1.0) or 1.0
    chart.set_scales((0, top), (0, 1))
    chart.axes(y_fmt=lambda v: f"{v:.0%}")
    for curve in curves:
        color = model.color(curve.profile)
        chart.line(
            list(zip(curve.caps_s, curve.shares, strict=True)),
            color,
            f"{curve.profile}: {curve.runs} runs",
            step=True,
            series=curve.profile,
        )
        chart.legend(f"{curve.profile} ({curve.runs} runs)", color, "line", curve.profile)
    return chart.render()


def render_money(model: ReportModel) -> str:
    """The section body (empty words when the runs have no traces)."""
    money, caps = model.money, model.caps
    parts: list[str] = []
    if money is None:
        parts.append("<p>No run carries a trace to price.</p>")
    else:
        rows = "".join(
            f"<tr><td>{escape(p.agent)}</td><td>{escape(p.group)}</td>"
            f"<td>{escape(p.price or 'none')}</td><td>{p.runs}</td>"
            f"<td>{fmt_s(p.task_s)}</td><td>{_usd(p.cost_usd)}</td></tr>"
            for p in money.points
        )
        parts.append(
            '<table class="sortable" data-export="cost"><thead><tr><th>agent</th>'
            "<th>profile</th><th>price entry</th><th>runs</th><th>task time p50</th>"
            f"<th>cost per task p50</th></tr></thead><tbody>{rows}</tbody></table>"
        )
        comparisons = sorted({p.comparison or p.agent for p in money.points})
        parts.append(
            '<div class="grid c2">'
            + "".join(
                _cost_chart(model, c, [p for p in money.points if (p.comparison or p.agent) == c])
                for c in comparisons
            )
            + "</div>"
        )
        if money.waiting:
            rows = "".join(
                f"<tr><td>{escape(w.comparison or w.agent)}</td>"
                f"<td>{escape(w.group)} vs {escape(w.reference)}</td>"
                f"<td>{_usd(w.extra_usd_per_task)}</td><td>{fmt_s(w.saved_s_per_task)}</td>"
                f"<td>{escape(w.verdict)}</td></tr>"
                for w in money.waiting
            )
            parts.append(
                '<p class="hint">Each faster profile against the slowest profile of the same '
                "comparison group (agent, task set, clock), never another. Dollars per hour of "
                "waiting saved = the break-even hourly value of the person waiting: the faster "
                "tier pays off when their hour is worth more; a faster option that is also "
                "cheaper dominates (no break-even).</p>"
                '<table class="sortable" data-export="waiting"><thead><tr><th>group</th>'
                "<th>profile</th><th>extra $ per task</th><th>waiting saved per task</th>"
                f"<th>break-even or dominance</th></tr></thead><tbody>{rows}</tbody></table>"
            )
        if money.timeouts:
            parts.append(
                f'<p class="hint">{money.timeouts} run(s) ended <code>timeout</code>: their '
                "task time is the cap, so waiting saved is a lower bound.</p>"
            )
        if money.unpriced:
            parts.append(
                "<p>Unpriced, and why:</p><ul>"
                + "".join(f"<li>{escape(u)}</li>" for u in money.unpriced)
                + "</ul>"
            )
    if caps is not None:
        sources = [s for s in ("these runs", "corpus") if any(x == s for x, _ in caps.curves)]
        parts.append(
            '<div class="grid c2">'
            + "".join(_caps_chart(model, caps, s) for s in sources)
            + "</div>"
        )
        parts.extend(f'<p class="hint">{escape(n)}</p>' for n in caps.notes)
    return "".join(parts)


def money_tables(model: ReportModel) -> dict[str, Any]:
    """The section's export tables: cost per agent and profile, waiting, cap curves."""
    tables: dict[str, Any] = {}
    if model.money is not None:
        tables["cost"] = {
            "title": "Cost per task per agent and profile",
            "columns": [
                "agent",
                "profile",
                "price",
                "runs",
                "task_s",
                "task_lo",
                "task_hi",
                "cost_usd",
                "cost_lo",
                "cost_hi",
            ],
            "rows": [
                [
                    p.agent,
                    p.group,
                    p.price,
                    p.runs,
                    p.task_s,
                    *(p.task_ci or (None, None)),
                    p.cost_usd,
                    *(p.cost_ci or (None, None)),
                ]
                for p in model.money.points
            ],
        }
        tables["waiting"] = {
            "title": "The price of waiting (against the same comparison group's slowest profile)",
            "columns": [
                "comparison",
                "profile",
                "reference",
                "extra_usd_per_task",
                "saved_s_per_task",
                "usd_per_hour_saved",
                "verdict",
            ],
            "rows": [
                [
                    w.comparison,
                    w.group,
                    w.reference,
                    w.extra_usd_per_task,
                    w.saved_s_per_task,
                    w.usd_per_hour_saved,
                    w.verdict,
                ]
                for w in model.money.waiting
            ],
        }
    if model.caps is not None:
        tables["caps"] = {
            "title": "Success under a task time cap",
            "columns": ["source", "profile", "cap_s", "share", "runs"],
            "rows": [
                [source, c.profile, cap, share, c.runs]
                for source, c in model.caps.curves
                for cap, share in zip(c.caps_s, c.shares, strict=True)
            ],
        }
    return tables
