"""The claim check as a terminal panel (`looplab report` prints it last)."""

from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from looplab.report.claim_rows import ClaimView
from looplab.report.render_claim import ci_text, shorter_text

__all__ = ["claim_panel"]


def claim_panel(view: ClaimView) -> Panel:
    """Every row (speedup and percent shorter with 95% CIs, verdict) and its sentence."""
    table = Table(expand=False, pad_edge=False)
    for column, justify in (
        ("evidence", "left"), ("kind", "left"), ("n", "right"),
        ("speedup (95% CI)", "right"), ("shorter (95% CI)", "right"), ("verdict", "left"),
    ):  # fmt: skip
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]  # rich's literal
    for row in view.rows:
        n = (
            str(row.n) + (f" +{row.untimed} untimed" if row.untimed else "")
            if row.n or row.untimed
            else "-"
        )
        table.add_row(row.label, row.kind, n, ci_text(row), shorter_text(row), row.verdict)
    sentences = Text("\n".join(f"- {row.sentence}" for row in view.rows))
    return Panel(
        Group(table, sentences),
        title=f"Is 750 tok/s worth it? {view.fast} ({view.fast_tps:g} tok/s) vs "
        f"{view.slow} ({view.slow_tps:g} tok/s)",
        title_align="left",
    )
