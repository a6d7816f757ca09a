"""A side-by-side compare in words and numbers: the formats both its renderings share,
and the console tables `looplab diff` prints (one per side against the baseline).
"""

from __future__ import annotations

from rich.table import Table

from looplab.report.render.scales import fmt_s
from looplab.report.views.run_metrics import METRICS, Metric
from looplab.report.views.side_by_side import Pairwise, SideBySide, SideCell

__all__ = ["STATUS_WORDS", "fmt_delta", "fmt_metric", "pairwise_table", "speedup_words"]

STATUS_WORDS = {
    "regression": "▲ regression",
    "improvement": "▼ improvement",
    "mixed": "▲▼ mixed",
    "only baseline": "only in baseline",
    "only side": "not in baseline",
    "": "no change",
}
"""A task row's status as shown (▲: worse, ▼: better)."""


def fmt_metric(metric: Metric, value: float | None) -> str:
    """One cell's value: `12.3 s`, `67%`, `$0.0123`, `14`, `12.4k`; `-` when unknown."""
    if value is None:
        return "-"
    if metric.key == "time_s":
        return fmt_s(value)
    if metric.key == "success":
        return f"{value:.0%}"
    if metric.key == "cost_usd":
        return f"${value:.4f}"
    if metric.key == "tokens":
        return f"{value / 1000:.1f}k" if abs(value) >= 10_000 else f"{value:.0f}"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def fmt_delta(metric: Metric, delta: float | None, base: float | None) -> str:
    """A change: `+1.20 s (+12%)`, `-33 pp`, `+$0.0020`; `-` when unknown."""
    if delta is None:
        return "-"
    if delta == 0:
        return "="
    if metric.key == "success":
        return f"{delta * 100:+.0f} pp"
    sign = "+" if delta >= 0 else "-"
    shown = fmt_metric(metric, abs(delta))
    relative = f" ({delta / base:+.0%})" if base else ""
    return f"{sign}{shown}{relative}"


def speedup_words(pair: Pairwise) -> str:
    """`2.41x faster (95% CI 2.10-2.80x) over 4 tasks`, or why there is no number."""
    if pair.speedup is None:
        return "no task both ran"
    ci = (
        f" (95% CI {pair.speedup_ci[0]:.2f}-{pair.speedup_ci[1]:.2f}x)"
        if pair.speedup_ci is not None
        else ""
    )
    tasks = f"{pair.matched_tasks} task{'s' if pair.matched_tasks != 1 else ''}"
    return f"{pair.speedup:.2f}x the baseline's speed{ci} over {tasks}"


def _cell(cell: SideCell | None, metric: Metric) -> str:
    return fmt_metric(metric, cell.value(metric.key) if cell else None)


def pairwise_table(view: SideBySide, pair: Pairwise) -> Table:
    """The console table of one side against the baseline: per task A | B | delta per
    metric, the paired time statistics and the row's status."""
    table = Table(
        title=f"A = {pair.base} (baseline), B = {pair.side}: {speedup_words(pair)}; "
        f"{pair.regressions} regression(s), {pair.improvements} improvement(s)",
        title_justify="left",
    )
    table.add_column("task", no_wrap=True)
    for metric in METRICS:
        table.add_column(f"{metric.label}\nA → B\nΔ", justify="right")
    table.add_column("paired Δ time\n[95% CI]\nB faster", justify="right")
    table.add_column("status")
    for row in pair.rows:
        cells: list[str] = [row.task]
        for metric in METRICS:
            mark = {"worse": " ▲", "better": " ▼"}.get(row.marks[metric.key], "")
            base = row.base.value(metric.key) if row.base else None
            cells.append(
                f"{_cell(row.base, metric)} → {_cell(row.side, metric)}\n"
                + fmt_delta(metric, row.delta[metric.key], base)
                + mark
            )
        cells.append(paired_words(row.pairs, row.mean_diff_s, row.ci_diff_s, row.faster_pairs))
        cells.append(STATUS_WORDS[row.status])
        table.add_row(*cells)
    return table


def paired_words(
    pairs: int, mean: float | None, ci: tuple[float, float] | None, faster: int
) -> str:
    """`-1.20 s [-1.5, -0.9] 3/3`, or `-` without pairs."""
    if not pairs or mean is None:
        return "-"
    interval = f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci is not None else ""
    return f"{mean:+.2f} s{interval} {faster}/{pairs}"
