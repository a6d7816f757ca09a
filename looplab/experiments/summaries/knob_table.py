"""The knob table as `looplab run` prints it (rows from `looplab.report.data.knobs`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from looplab.report.data.knobs import KnobRow

__all__ = ["knob_table", "variant_speedups"]

SHORT = {
    "streamed_calls": "streamed",
    "speculation_hits": "hits",
    "speculation_misses": "misses",
    "speculation_paused": "paused",
    "speculation_wasted_s": "wasted",
    "sandbox_wait_s": "sbx-wait",
    "subagents": "subagents",
}
"""The `knob_stats` shown, by their short names."""


def knob_table(rows: Sequence[KnobRow]) -> Table:
    """Per backend and variant: task time, saving per task and per step vs all-off (95%
    CIs), end-to-end time (setup + task) and its saving, model and tool shares, what the
    knobs did."""
    table = Table(title="knobs vs all-off, per backend (saving: share of task time; 95% CI)")
    for column in (
        "backend",
        "variant",
        "tasks",
        "task s p50",
        "saving/task",
        "saving/step",
        "e2e s p50",
        "saving/e2e",
        "model",
        "tools",
        "knob stats",
    ):
        table.add_column(column, justify="right")
    for row in rows:
        ci = f" ({row.saving_ci[0]:+.1%}..{row.saving_ci[1]:+.1%})" if row.saving_ci else ""
        step_ci = f" ({row.step_ci[0]:+.3f}..{row.step_ci[1]:+.3f})" if row.step_ci else ""
        stats = " ".join(
            f"{SHORT.get(k, k)}={v:.0f}{'s' if k.endswith('_s') else ''}"
            for k, v in sorted(row.stats.items())
            if k in SHORT
        )
        table.add_row(
            row.backend,
            row.label,
            str(row.tasks),
            f"{row.median_task_s:.2f}",
            "-" if row.saving is None else f"{row.saving:+.1%}{ci}",
            "-" if row.step_saving_s is None else f"{row.step_saving_s:+.3f} s{step_ci}",
            "-" if row.median_e2e_s is None else f"{row.median_e2e_s:.2f}",
            _pct(row.e2e_saving, row.e2e_ci),
            f"{row.model_share:.0%}",
            f"{row.tool_share:.0%}",
            stats or "-",
        )
    return table


def _pct(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:+.1%}" + (f" ({ci[0]:+.1%}..{ci[1]:+.1%})" if ci else "")


def variant_speedups(rows: Sequence[KnobRow]) -> str | None:
    """One line: per variant, the slowest backend's median task time over the fastest's
    (by `decode_tps`), so a knob's effect on the speedup reads directly (e.g. fan-out at
    80 vs 750 tok/s); None with fewer than two backends of known speed."""
    speeds = sorted({r.decode_tps for r in rows if r.decode_tps is not None})
    if len(speeds) < 2:
        return None
    parts = []
    for label in dict.fromkeys(r.label for r in rows):
        by_speed = {r.decode_tps: r.median_task_s for r in rows if r.label == label}
        slow, fast = by_speed.get(speeds[0]), by_speed.get(speeds[-1])
        if slow is not None and fast is not None and fast > 0:
            parts.append(f"{label} {slow / fast:.2f}x ({slow:.2f} s -> {fast:.2f} s)")
    if not parts:
        return None
    head = f"{speeds[0]:g} -> {speeds[-1]:g} tok/s speedup per variant (median task time): "
    return head + ", ".join(parts)
