"""Per-step charts of the compounding section: model latency per step against step index
and against context length, and the task time split into "more steps" and "slower steps"
(`looplab.report.views.steps` computes them)."""

from __future__ import annotations

from looplab.report.render.svg import Chart, fmt_num, fmt_s
from looplab.report.views.report_model import ReportModel

__all__ = ["slowdown_chart", "step_latency_chart"]

_AXES = {
    "step": ("by_step", "step index", "step"),
    "context": ("by_context", "context length (prompt tokens)", "context"),
}

SLOWDOWN_COLORS = {"base": "#7FA7C9", "slower": "#C0392B"}
"""The split's colours: the task at the first step's speed, the slowdown."""


def step_latency_chart(model: ReportModel, by: str) -> str:
    """Median model-call latency per step (band p25-p75) against `by`: step or context."""
    view = model.step_latency
    assert view is not None
    attribute, x_label, word = _AXES[by]
    curves = getattr(view, attribute)
    chart = Chart(
        f"step-latency-{by}",
        f"Model latency per step vs {'step index' if by == 'step' else 'context length'}",
        x_label,
        "model call time (s)",
    )
    xs = [p.x for c in curves.values() for p in c] or [0.0, 1.0]
    y_max = max((p.high for c in curves.values() for p in c), default=1.0)
    chart.set_scales((min(xs) if by == "context" else 0, max(xs) or 1), (0, y_max * 1.08 or 1))
    chart.axes(x_fmt=fmt_num)
    for group, points in curves.items():
        if not points:
            continue
        color = model.color(group)
        chart.band(
            [(p.x, p.low) for p in points],
            [(p.x, p.high) for p in points],
            color,
            group,
            series=group,
        )
        chart.line([(p.x, p.median) for p in points], color, f"{group}: median", series=group)
        chart.dots(
            [(p.x, p.median) for p in points],
            color,
            [f"{group}, {word} {p.x:,.0f}: median {fmt_s(p.median)} (n={p.n})" for p in points],
            radius=2.5,
            series=group,
        )
        chart.legend(group, color, series=group)
    per_token = [
        f"{group}: {early:.2f} -> {late:.2f} ms/token"
        for group, pair in view.per_token_ms.items()
        if pair is not None
        for early, late in [pair]
    ]
    chart.caption = (
        "Model call: request scheduled -> stream end, one value per step of every run; "
        + (
            "steps binned by prompt tokens (bins hold equal numbers of steps). "
            if by == "context"
            else ""
        )
        + ("Visible decode per token, first third of steps -> last third: " if per_token else "")
        + "; ".join(per_token)
    )
    return chart.render()


def slowdown_chart(model: ReportModel) -> str:
    """Stacked bars per group (and family size): model time at the first step's speed, the
    slowdown as the context grows, and everything else (tools, harness)."""
    rows = model.slowdown
    labels = [f"{r.group} · {r.label} ({r.steps:g} steps)" for r in rows]
    chart = Chart(
        "slowdown",
        "More steps or slower steps? Mean task time split",
        "time per run (s)",
        "",
        height=70 + 30 * len(rows),
        left=int(min(360, max(90, max(len(label) for label in labels) * 6.5 + 24))),
    )
    top = max(r.task_s for r in rows) or 1.0
    chart.set_scales((0, top * 1.05), (len(rows) - 0.5, -0.5))
    chart.axes(y_ticks=False)
    chart.row_labels(labels)
    for index, (label, row) in enumerate(zip(labels, rows, strict=True)):
        base = max(0.0, row.task_s - row.slowdown_s)
        chart.parts.append(
            f'<rect x="4" y="{chart.y(index) - 6:.1f}" width="6" height="12" '
            f'fill="{model.color(row.group)}"/>'
        )
        chart.hbar(
            index,
            0,
            base,
            SLOWDOWN_COLORS["base"],
            f"{label}: {fmt_s(base)} with every step at the first step's context",
        )
        if row.slowdown_s <= 0:
            continue
        chart.hbar(
            index,
            base,
            row.task_s,
            SLOWDOWN_COLORS["slower"],
            f"{label}: {fmt_s(row.slowdown_s)} ({row.share:.0%}) from steps slowing as the "
            "context grows",
        )
    chart.legend(
        "task time with steps at the first step's speed (more steps)",
        SLOWDOWN_COLORS["base"],
        "box",
    )
    chart.legend("slower steps: context growth", SLOWDOWN_COLORS["slower"], "box")
    notes = sorted({n for r in rows for n in r.notes})
    chart.caption = (
        "Each call planned by the run's own latency profile as recorded and as if it had the "
        "first call's context (same new tokens, reasoning and output); the difference is "
        "the time due to steps slowing as the context grows. " + " ".join(notes)
    )
    return chart.render()
