"""The "speedup taken apart" section: each decomposed claim's waterfall (`looplab.claims`).

The claim entries that ask for a decomposition (`test.decompose`, e.g. Codex-Spark's
"about 6x") are checked (analytic re-timing, about a second of CPU) and drawn as
waterfalls: the slow side's mean task time, each factor's exact Shapley share of the
difference as a step down, the fast side, and the claimed fast time as a line. The same
numbers as `looplab claims check --json` (`decomposition`); the section is about the
published claims re-timed on the shipped workloads, not about this report's runs, so the
decompositions depend on the package and the workloads alone and are kept in the user's
cache (`looplab.cache.derived`, keyed by the package's digest and that of the workloads in
`tasks/workload/` or `LOOPLAB_TASKS_DIR`): every report after the first reads them instead
of re-timing, each stored field checked before it is drawn.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from html import escape
from typing import Any

from looplab.bundled import bundled_tasks_dir
from looplab.cache import derived, stored_fields, stored_number
from looplab.claims.check import check_claim
from looplab.claims.decompose import Decomposition, Part
from looplab.claims.model import ClaimEntry, claim_entries
from looplab.report.render.svg import Chart
from looplab.report.views.report_model import ReportModel

__all__ = ["Decomposed", "decomposed_claims", "render_waterfall", "waterfall_tables"]

_COLORS = {"total": "#555555", "saves": "#009E73", "costs": "#D55E00"}
_COLUMNS = ["claim", "factor", "slow_value", "fast_value", "seconds", "share", "speedup_x"]
_CACHE_NAME = "claim-decompositions"


@dataclass(frozen=True)
class Decomposed:
    """A shipped claim and its slow-to-fast decomposition."""

    entry: ClaimEntry
    decomposition: Decomposition


def _compute() -> dict[str, Any]:
    """Each decomposed claim's decomposition as JSON, by claim name (the break-even search
    is skipped: the section does not show it)."""
    out: dict[str, Any] = {}
    for entry in claim_entries().values():
        if entry.test.decompose:
            found = check_claim(entry, break_even=False).decomposition
            if found is not None:
                out[entry.name] = dataclasses.asdict(found)
    return out


def _load(stored: Any) -> tuple[Decomposed, ...]:
    """The stored decompositions, paired with their claim entries (entry order).

    Raises:
        KeyError: a claim that is not shipped.
        TypeError: a field missing, extra, or of another type (a number not finite).
    """
    if not isinstance(stored, dict):
        raise TypeError(f"decompositions: expected an object, got {type(stored).__name__}")
    entries = claim_entries()
    return tuple(Decomposed(entries[name], _decomposition(raw)) for name, raw in stored.items())


def _decomposition(raw: Any) -> Decomposition:
    """One stored `Decomposition`, every field checked (a cache file is outside input)."""
    fields = stored_fields(raw, Decomposition)
    parts = fields["parts"]
    units = fields["units"]
    if not isinstance(parts, list) or type(units) is not int or units < 1:
        raise TypeError("decomposition: parts must be a list, units a positive integer")
    return Decomposition(
        stored_number(fields["slow_s"]),
        stored_number(fields["fast_s"]),
        [_part(p) for p in parts],
        units,
    )


def _part(raw: Any) -> Part:
    fields = stored_fields(raw, Part)
    if not isinstance(fields["knob"], str) or not isinstance(fields["label"], str):
        raise TypeError("decomposition part: knob and label must be strings")
    numbers = {k: stored_number(v) for k, v in fields.items() if k not in ("knob", "label")}
    return Part(knob=fields["knob"], label=fields["label"], **numbers)


@functools.cache
def decomposed_claims() -> tuple[Decomposed, ...]:
    """The shipped claims with a decomposition, in entry order (once per process; from the
    user's cache when this package version has made them before)."""
    return derived(_CACHE_NAME, _compute, _load, inputs=(bundled_tasks_dir() / "workload",))


def _claimed(check: Decomposed) -> float | None:
    claimed = check.entry.claimed
    return claimed.point if claimed.measure == "speedup" else None


def _chart(check: Decomposed, d: Decomposition) -> str:
    labels = ["slow", *(p.label for p in d.parts), "fast"]
    chart = Chart(
        f"waterfall-{check.entry.name}",
        check.entry.title,
        "mean task time (s)",
        "",
        width=760,
        height=70 + 30 * len(labels),
        left=170,
    )
    chart.data["export"] = "waterfall"  # its numbers: the section's export table
    chart.set_scales((0, d.slow_s * 1.05), (len(labels) - 0.5, -0.5))
    chart.axes(x_fmt=lambda v: f"{v:g}", y_ticks=False)
    chart.row_labels(labels)
    chart.hbar(0, 0, d.slow_s, _COLORS["total"], f"slow: {d.slow_s:.1f} s (mean of {d.units})")
    level = d.slow_s
    for index, part in enumerate(d.parts, start=1):
        new = level + part.seconds
        tip = (
            f"{part.label} {part.slow_value:g} -> {part.fast_value:g}: {part.seconds:+.1f} s, "
            f"x{part.speedup_x:.2f} of the speedup"
        )
        color = _COLORS["saves"] if part.seconds < 0 else _COLORS["costs"]
        chart.hbar(index, min(level, new), max(level, new), color, tip)
        level = new
    tip = f"fast: {d.fast_s:.1f} s, {d.speedup:.2f}x"
    chart.hbar(len(labels) - 1, 0, d.fast_s, _COLORS["total"], tip)
    claimed = _claimed(check)
    if claimed:
        target = d.slow_s / claimed
        seconds, steps = d.residual(claimed)
        chart.parts.append(
            f'<line class="claimed" x1="{chart.x(target):.1f}" x2="{chart.x(target):.1f}" '
            f'y1="{chart.top}" y2="{chart.height - chart.bottom}" stroke="#B22222" '
            f'stroke-dasharray="4 3"><title>claimed {claimed:g}x: {target:.1f} s; '
            f"{seconds:+.1f} s unexplained, {steps:.0%} fewer steps would cover it</title></line>"
        )
        chart.legend(f"claimed {claimed:g}x", "#B22222")
    chart.caption = (
        "Bars: mean task time over the draws at the slow and fast settings; each factor's "
        "step is its exact Shapley share (the steps sum to the difference); x: its share of "
        "the speedup (the x values multiply to it)."
    )
    return chart.render()


def _sentence(check: Decomposed, d: Decomposition) -> str:
    parts = ", ".join(f"{p.label} x{p.speedup_x:.2f} ({p.seconds:+.0f} s)" for p in d.parts)
    text = f"{check.entry.name}: {d.slow_s:.0f} s -> {d.fast_s:.0f} s = {d.speedup:.2f}x: {parts}."
    claimed = _claimed(check)
    if claimed:
        seconds, steps = d.residual(claimed)
        text += (
            f" Claimed {claimed:g}x: {seconds:+.0f} s (x{claimed / d.speedup:.2f}) left "
            f"unexplained, {steps:.0%} fewer steps if that were all."
        )
    return text


def render_waterfall(model: ReportModel) -> str:
    """The section's static HTML (independent of the report's runs)."""
    del model  # the published claims, re-timed on the shipped workloads
    checks = decomposed_claims()
    if not checks:
        return "<p>No shipped claim asks for a decomposition.</p>"
    body = "".join(
        _chart(c, c.decomposition)
        + f'<p class="sentence">{escape(_sentence(c, c.decomposition))}</p>'
        for c in checks
    )
    return body + (
        '<p class="hint">Published claims re-timed on the shipped workloads (not your runs): '
        "each entry's assumptions are in <code>looplab claims check NAME</code>; "
        "<code>--json</code> has these numbers.</p>"
    )


def waterfall_tables(model: ReportModel) -> dict[str, Any]:
    """The section's export table: one row per claim and factor."""
    del model
    rows: list[list[Any]] = []
    for check in decomposed_claims():
        d = check.decomposition
        diff = d.fast_s - d.slow_s
        for p in d.parts:
            share = p.seconds / diff if diff else None
            rows.append(
                [
                    check.entry.name,
                    p.label,
                    p.slow_value,
                    p.fast_value,
                    p.seconds,
                    share,
                    p.speedup_x,
                ]
            )
    return {
        "waterfall": {
            "title": "the speedup taken apart: Shapley share per claim and factor",
            "columns": _COLUMNS,
            "rows": rows,
        }
    }
