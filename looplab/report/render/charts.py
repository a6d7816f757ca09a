"""One function per chart of the report: `ReportModel` views in, `<figure>` strings out.

Colours: a group (profile) has one colour in every chart (`GroupView.color`); time
components have their own (`COMPONENTS`). Estimated values are drawn hatched (bars) or
dashed (lines), and the legend says so.
"""

from __future__ import annotations

import itertools
import math

from looplab.report.render.svg import Chart, fmt_num, fmt_s
from looplab.report.views.report_model import COMPONENTS, ReportModel

__all__ = [
    "breakdown_chart",
    "cdf_chart",
    "compounding_chart",
    "family_chart",
    "length_chart",
    "sweep_chart",
    "ttft_chart",
]

_ESTIMATED_NOTE = "dashed: includes estimated values"


def _estimated(model: ReportModel, group: str, *quantities: str) -> bool:
    view = next((g for g in model.groups if g.label == group), None)
    return view is not None and any(q in view.estimated for q in quantities)


def compounding_chart(model: ReportModel) -> str:
    """Cumulative task time against step index, median and p25-p75 band per group."""
    chart = Chart(
        "compounding",
        "Cumulative time by step (median, band p25-p75)",
        "step index (steps completed)",
        "time since task start (s)",
    )
    curves = model.compounding
    x_max = max((p.x for c in curves.values() for p in c), default=1)
    y_max = max((p.high for c in curves.values() for p in c), default=1)
    chart.set_scales((0, max(1, x_max)), (0, y_max * 1.05 or 1))
    chart.axes()
    for group, points in curves.items():
        color = model.color(group)
        dashed = _estimated(model, group, "model", "tool")
        chart.band(
            [(p.x, p.low) for p in points],
            [(p.x, p.high) for p in points],
            color,
            f"{group}: p25-p75 band",
            series=group,
        )
        tip = f"{group}: median {fmt_s(points[-1].median)} after {points[-1].x:g} steps"
        chart.line([(p.x, p.median) for p in points], color, tip, dash=dashed, series=group)
        chart.dots(
            [(p.x, p.median) for p in points[1:]],
            color,
            [
                f"{group} after {p.x:g} steps: median {fmt_s(p.median)} ({p.n} runs still going)"
                for p in points[1:]
            ],
            radius=2.5,
            hollow=dashed,
            series=group,
        )
        chart.legend(group, color, "dash" if dashed else "line", group)
    chart.caption = (
        "Each step adds its model, tool and harness time; the gap between profiles widens "
        "with every step. A run that finished earlier counts with its finish time, so the "
        "curve never goes down; it stops where fewer than a quarter of the runs are still "
        "going."
    )
    return chart.render()


def family_chart(model: ReportModel, index: int) -> str:
    """Median task time against a parametric family's size (e.g. coding/nbugs-N)."""
    family = model.families[index]
    chart = Chart(
        f"family-{index}",
        f"Task time vs task length: {family.name}",
        "N (family parameter)",
        "task time (s)",
    )
    points = [p for s in family.series.values() for p in s]
    chart.set_scales(
        (min(p.x for p in points) - 0.5, max(p.x for p in points) + 0.5),
        (0, max(p.high for p in points) * 1.1 or 1),
    )
    chart.axes()
    for group, series in family.series.items():
        color = model.color(group)
        chart.band(
            [(p.x, p.low) for p in series],
            [(p.x, p.high) for p in series],
            color,
            f"{group}: p25-p75",
            series=group,
        )
        chart.line(
            [(p.x, p.median) for p in series], color, f"{group}: median task time", series=group
        )
        chart.dots(
            [(p.x, p.median) for p in series],
            color,
            [f"{group} N={p.x:g}: {fmt_s(p.median)} (n={p.n})" for p in series],
            series=group,
        )
        chart.legend(group, color, series=group)
    chart.caption = "Median task time per family size; band p25-p75 over repetitions."
    return chart.render()


def length_chart(model: ReportModel) -> str:
    """Every run's task time against its number of steps."""
    chart = Chart("length", "Task time vs task length (every run)", "steps", "task time (s)")
    points = [p for s in model.length_points.values() for p in s]
    chart.set_scales((0, max(p[0] for p in points) + 1), (0, max(p[1] for p in points) * 1.1))
    chart.axes()
    for group, series in model.length_points.items():
        color = model.color(group)
        hollow = _estimated(model, group, "model", "tool")
        chart.dots(
            [(x, y) for x, y, _ in series],
            color,
            [f"{group} {task}: {x:g} steps, {fmt_s(y)}" for x, y, task in series],
            hollow=hollow,
            series=group,
        )
        chart.legend(group + (" (estimated)" if hollow else ""), color, "dot", group)
    chart.caption = "One dot per run; slope = seconds per step."
    return chart.render()


def breakdown_chart(model: ReportModel, *, per_task: bool) -> str:
    """Stacked horizontal bars: mean seconds per run in each component."""
    if per_task:
        rows = [(f"{task} · {group}", group, parts) for task, group, parts in model.breakdown_tasks]
        name, title = "breakdown-tasks", "Where the time goes, per task (mean per run)"
    else:
        rows = [(g, g, parts) for g, parts in model.breakdown_groups.items()]
        name, title = "breakdown-groups", "Where the time goes, per profile (mean per run)"
    label_width = max(len(label) for label, _, _ in rows) * 6.5 + 24
    chart = Chart(
        name,
        title,
        "time per run (s)",
        "",
        height=70 + 30 * len(rows),
        left=int(min(360, max(90, label_width))),
    )
    total = max(sum(parts.values()) for _, _, parts in rows)
    chart.set_scales((0, total * 1.05 or 1), (len(rows) - 0.5, -0.5))
    chart.axes(y_ticks=False)
    chart.row_labels([label for label, _, _ in rows])
    used: set[str] = set()
    for index, (label, group, parts) in enumerate(rows):
        x = 0.0
        for key, (name_, color) in COMPONENTS.items():
            value = parts[key]
            if value <= 0:
                continue
            hatched = key in ("model", "tools") and _estimated(model, group, "model", "tool")
            chart.hbar(
                index,
                x,
                x + value,
                color,
                f"{label}: {name_} {fmt_s(value)}",
                hatched=hatched,
                series=key,
            )
            x += value
            used.add(key)
        chart.parts.append(
            f'<rect x="4" y="{chart.y(index) - 6:.1f}" width="6" height="12" '
            f'fill="{model.color(group)}"/>'
        )
    for key, (name_, color) in COMPONENTS.items():
        if key in used:
            chart.legend(name_, color, "box", key)
    if any(g.estimated for g in model.groups):
        chart.legend("estimated (source lacked exact times)", "#555", "hatch")
    chart.caption = (
        "TTFT + prefill: request sent -> first token of any kind; reasoning: hidden reasoning "
        "decoded before the first visible token (time to first visible token = TTFT + "
        "prefill + reasoning); decode: first -> last visible token; overhead: task time minus "
        "model and tool time (harness, queueing); browser action, page-load wait and "
        "observation capture: a browser tool's time split (AgentLab's step timestamps), the "
        "rest of tool time is tools. Sandbox start is outside task time and drawn last."
    )
    return chart.render()


def sweep_chart(model: ReportModel) -> str:
    """Predicted speedup vs decode rate, the Amdahl ceiling, and measured speedups."""
    sweep = model.sweep
    assert sweep is not None
    chart = Chart(
        "sweep",
        f"Predicted speedup vs decode rate (re-timed {sweep.base_group} runs)",
        "decode rate (tok/s, log scale)",
        f"task speedup vs {sweep.reference_tps:g} tok/s (x)",
    )
    top = max(
        [
            *sweep.speedups,
            sweep.ceiling if math.isfinite(sweep.ceiling) else 1,
            *(m[4] or m[2] for m in sweep.measured),
        ]
    )
    chart.set_scales((min(sweep.rates), max(sweep.rates)), (0, top * 1.12), x_log=True)
    chart.axes(y_fmt=lambda v: f"{v:g}x")
    points = list(zip(sweep.rates, sweep.speedups, strict=True))
    chart.line(points, "#444444", "predicted median speedup", width=2.5)
    chart.dots(
        points, "#444444", [f"{r:g} tok/s: {s:.2f}x predicted" for r, s in points], radius=2.5
    )
    chart.legend("predicted (median over runs)", "#444444")
    if math.isfinite(sweep.ceiling):
        chart.hline(
            sweep.ceiling,
            "#B22222",
            f"Amdahl ceiling 1/(1-f), f = {sweep.decode_share:.0%} decode + reasoning share",
            f"Amdahl ceiling {sweep.ceiling:.2f}x (f = {sweep.decode_share:.0%})",
        )
        chart.legend("Amdahl ceiling 1/(1-f)", "#B22222", "dash")
    for group, rate, speedup, low, high in sweep.measured:
        color = model.color(group)
        if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
            chart.error_bar(rate, low, high, color, group)
        chart.dots(
            [(rate, speedup)],
            color,
            [f"{group}: measured {speedup:.2f}x at {rate:g} tok/s"],
            radius=6,
            series=group,
        )
        chart.legend(f"{group} measured", color, "dot", group)
    chart.caption = (
        f"Model calls of {sweep.traces} run(s) recomputed from their token counts at each rate "
        f"(profile {sweep.base_profile}); tools and harness as recorded. Measured points: "
        "median speedup with its bootstrap 95% CI. " + " ".join(sweep.notes)
    )
    return chart.render()


def ttft_chart(model: ReportModel) -> str:
    """Predicted median task time against the TTFT base, one line per profile's rate."""
    sweep = model.sweep
    assert sweep is not None
    chart = Chart(
        "ttft-sensitivity",
        "TTFT sensitivity (predicted)",
        "TTFT base per call (s)",
        "median task time (s)",
    )
    top = max(v for _, _, series, _ in sweep.ttft_series for v in series)
    chart.set_scales((0, max(sweep.ttft_grid)), (0, top * 1.08 or 1))
    chart.axes()
    for group, rate, series, own in sweep.ttft_series:
        color = model.color(group)
        points = list(zip(sweep.ttft_grid, series, strict=True))
        chart.line(points, color, f"{group} ({rate:g} tok/s)", series=group)
        at_own = _interpolate(points, own)
        chart.dots(
            [(own, at_own)],
            color,
            [f"{group}: its own TTFT {own:g} s -> {fmt_s(at_own)}"],
            radius=5,
            series=group,
        )
        chart.legend(f"{group} decode rate ({rate:g} tok/s)", color, series=group)
    chart.caption = (
        "The same re-timed runs at each profile's decode rate, with the per-call TTFT base "
        "varied; dots mark each profile's own TTFT. At high decode rates TTFT dominates."
    )
    return chart.render()


def _interpolate(points: list[tuple[float, float]], x: float) -> float:
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * ((x - x0) / (x1 - x0) if x1 > x0 else 0)
    return points[-1][1] if x > points[-1][0] else points[0][1]


_CDF_TITLES = {
    "ttft": ("TTFT per model call", "TTFT (s, log scale)", ("ttft", "model")),
    "decode": ("Decode time per model call", "decode time (s, log scale)", ("decode", "model")),
    "tool": ("Tool time per tool call", "tool time (s, log scale)", ("tool",)),
}


def cdf_chart(model: ReportModel, metric: str) -> str:
    """Empirical CDF of one per-step quantity, one line per group."""
    title, x_label, quantities = _CDF_TITLES[metric]
    series = {g: p for g, p in model.distributions[metric].items() if p}
    chart = Chart(
        f"cdf-{metric}", f"{title} (CDF)", x_label, "fraction of calls <= x", width=420, height=300
    )
    values = [x for points in series.values() for x, _ in points if x > 0]
    if not values:
        chart.set_scales((0, 1), (0, 1))
        chart.axes()
        chart.text(chart.width / 2, chart.height / 2, "no values in these runs", "middle")
        return chart.render()
    chart.set_scales((min(values), max(values)), (0, 1), x_log=True)
    chart.axes(x_fmt=fmt_num, y_fmt=lambda v: f"{v:.0%}")
    for group, points in series.items():
        color = model.color(group)
        dashed = _estimated(model, group, *quantities)
        positive = [(max(x, min(values)), y) for x, y in points]
        chart.line(
            positive,
            color,
            f"{group}: median {fmt_s(_median_x(points))}",
            dash=dashed,
            step=True,
            series=group,
        )
        chart.legend(
            group + (" (estimated)" if dashed else ""), color, "dash" if dashed else "line", group
        )
    if any(_estimated(model, g, *quantities) for g in series):
        chart.caption = _ESTIMATED_NOTE
    return chart.render()


def _median_x(points: list[tuple[float, float]]) -> float:
    return next((x for x, y in points if y >= 0.5), points[-1][0])
