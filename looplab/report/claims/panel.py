"""The claim check as a terminal panel (`looplab report` prints it last)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from looplab.report.claims.click_views import CLICK_TITLE
from looplab.report.claims.render import ci_text, count_text, interval_text, shorter_text
from looplab.report.claims.rows import SECTIONS, ClaimRow, ClaimView
from looplab.report.data.actions import PARTS

__all__ = ["claim_panel"]


def _shorter(row: ClaimRow) -> str:
    """Percent shorter at the estimate (its interval is in the row's sentence)."""
    if row.shorter is None:
        return shorter_text(row)  # a band alone, or n/a
    return f"{row.shorter:.0%}"


def _table(rows: list[ClaimRow]) -> Table:
    """One section's rows; the first column never breaks a word (its width is at least the
    longest word of any label; rich folds mid-word only a word wider than its column)."""
    table = Table(expand=False, pad_edge=False)
    longest = max((len(w) for r in rows for w in f"{r.label} {r.kind}".split()), default=8)
    table.add_column("evidence (kind)", min_width=longest, overflow="fold")
    # the others wrap at spaces to at most their longest piece, leaving the label its width
    for column, width in (("n", 8), ("speedup (interval)", 11), ("shorter", 7), ("interval", 10)):
        right = column != "interval"
        table.add_column(column, justify="right" if right else "left", max_width=width)
    verdicts = max((len(w) for r in rows for w in r.verdict.split()), default=7)
    table.add_column("verdict", justify="left", min_width=verdicts, max_width=12)
    for row in rows:
        table.add_row(
            Text(row.label) + Text(f"\n{row.kind}", style="dim"),
            count_text(row),
            ci_text(row),
            _shorter(row),
            interval_text(row),
            row.verdict,
        )
    return table


def _seconds(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}" + (f" ({ci[0]:.1f}-{ci[1]:.1f})" if ci else "")


def _click_table(view: ClaimView) -> Table:
    """Time per action at both rates (`views_click`), with what dominates at each."""
    table = Table(expand=False, pad_edge=False)
    longest = max((len(w) for r in view.click for w in r.label.split()), default=8)
    table.add_column("computer use (kind)", min_width=longest, overflow="fold")
    table.add_column("runs / actions", justify="right", max_width=7)
    for tps in (view.slow_tps, view.fast_tps):
        table.add_column(f"s per action at {tps:g} (CI)", justify="right", max_width=11)
    table.add_column("speedup", justify="right", max_width=7)
    table.add_column(f"largest part at {view.fast_tps:g}", max_width=14)
    table.add_column("verdict", min_width=7, max_width=10)
    for row in view.click:
        key, share = row.fast.dominant
        table.add_row(
            Text(row.label) + Text(f"\n{row.kind}", style="dim"),
            f"{row.n} / {row.slow.actions}",
            _seconds(row.slow.median_s, row.slow.ci),
            _seconds(row.fast.median_s, row.fast.ci),
            f"{row.speedup:.2f}x" if row.speedup else "n/a",
            f"{PARTS[key]} {share:.0%}",
            row.verdict,
        )
    return table


def claim_panel(view: ClaimView) -> Panel:
    """Every row by section (your runs, the reference corpus, bound and claims: speedup and
    percent shorter with the named interval, verdict), then each row's sentence."""
    parts: list[RenderableType] = []
    for section, title in SECTIONS.items():
        rows = [r for r in view.rows if r.section == section]
        if rows:
            parts += [Text(title, style="bold"), _table(rows)]
    if view.click:
        parts += [Text(CLICK_TITLE, style="bold"), _click_table(view)]
    sentences = [row.sentence for row in view.rows] + [row.sentence for row in view.click]
    parts.append(Text("\n".join(f"- {sentence}" for sentence in sentences)))
    return Panel(
        Group(*parts),
        title=f"Is 750 tok/s worth it? {view.fast} ({view.fast_tps:g} tok/s) vs "
        f"{view.slow} ({view.slow_tps:g} tok/s)",
        title_align="left",
    )
