"""`looplab claims` in the terminal: the listing, each check, the waterfall.

Plain text (no colour needed): each checked claim prints its claimed band, the lab's
prediction with its interval (or "too few runs"), the verdict, the evidence with its n,
the assumptions and, when decomposed, a waterfall of the slow-to-fast difference.
"""

from __future__ import annotations

from looplab.claims.breakeven import break_even_text
from looplab.claims.check import ClaimCheck
from looplab.claims.decompose import Decomposition
from looplab.claims.knobs import KNOBS
from looplab.claims.model import Claimed, ClaimEntry
from looplab.claims.verdicts import TOO_FEW, band_text, value_text
from looplab.stats.intervals import MIN_PAIRED_N

__all__ = ["check_text", "listing_text", "waterfall_text"]

_METRICS = {"task": "task time", "ttft": "TTFT summed over a task's calls"}

BAR_WIDTH = 40
"""Characters of the waterfall's longest bar."""


def listing_text(entries: dict[str, ClaimEntry]) -> str:
    """One line per entry: name, date, method, claim."""
    width = max((len(n) for n in entries), default=4)
    method = max([len("tested by"), *(len(e.test.method) for e in entries.values())])
    lines = [f"{'name':<{width}}  {'date':<10}  {'tested by':<{method}}  claim"]
    for name, e in entries.items():
        date = e.source.date.isoformat() if e.source.date else "-"
        lines.append(f"{name:<{width}}  {date:<10}  {e.test.method:<{method}}  {e.title}")
    lines.append("`looplab claims check [NAME]` computes them (`--json` for scripts).")
    return "\n".join(lines)


def waterfall_text(d: Decomposition, claimed: float | None) -> list[str]:
    """The slow-to-fast difference as bars: each factor's seconds (Shapley) and its
    multiplicative share; with `claimed`, what the factors leave unexplained."""
    scale = BAR_WIDTH / max(d.slow_s, 1e-9)
    lines = [
        f"  slow (mean of {d.units})   {d.slow_s:8.1f} s  {'#' * round(d.slow_s * scale)}",
    ]
    level = d.slow_s
    for part in d.parts:
        level += part.seconds
        pad = " " * round(level * scale)
        bar = "-" * max(1, round(abs(part.seconds) * scale))
        lines.append(
            f"  {part.label:<22} {part.seconds:+8.1f} s  {pad}{bar}  "
            f"(x{part.speedup_x:.2f}; {part.slow_value:g} -> {part.fast_value:g})"
        )
    lines.append(
        f"  fast                   {d.fast_s:8.1f} s  {'#' * round(d.fast_s * scale)}"
        f"  = {d.speedup:.2f}x"
    )
    if claimed:
        seconds, steps = d.residual(claimed)
        lines.append(
            f"  claimed {claimed:g}x needs {d.slow_s / claimed:.1f} s: the factors above leave "
            f"{seconds:+.1f} s (x{claimed / d.speedup:.2f}) unexplained; fewer steps alone would "
            f"have to drop {steps:.0%} of them"
        )
    return lines


def _group_line(
    claimed: Claimed, name: str, n: int, value: float, ci: tuple[float, float] | None
) -> str:
    """`codex (n=1): 1.62x (too few runs for a CI)`."""
    if ci is None:
        said = f"{TOO_FEW} for a CI"
    else:
        said = f"95% CI {value_text(claimed, ci[0])}-{value_text(claimed, ci[1])}"
    unit = "groups" if name == "equal weight" else "n"
    count = f"{n} {unit}" if unit == "groups" else f"n={n}"
    return f"{name:<16} ({count}): {value_text(claimed, value)} ({said})"


def check_text(check: ClaimCheck) -> str:
    """One checked claim in words (module docstring)."""
    e, ev, claimed = check.entry, check.evidence, check.entry.claimed
    date = e.source.date.isoformat() if e.source.date else "undated"
    where = e.source.url or ("no primary source found" if not e.source.primary else "no url")
    lines = [
        f"{e.name}: {e.title}",
        f"  source:     {e.source.title} ({date}; {where})",
        f'  quote ({e.quote_kind}): "{e.quote}"',
        f"  claimed:    {claimed.text} [{band_text(claimed)} of {_METRICS[claimed.metric]}]",
    ]
    if check.prediction is not None:
        if ev.exact:
            ci = "exact arithmetic, no sampling: no interval"
        elif check.ci:
            ci = f"95% BCa CI {value_text(claimed, check.ci[0])}-{value_text(claimed, check.ci[1])}"
        else:
            ci = f"{TOO_FEW} for a CI (n={ev.n} < {MIN_PAIRED_N})"
        lines.append(f"  lab:        {value_text(claimed, check.prediction)} ({ci})")
    lines.append(f"  verdict:    {check.verdict}")
    if check.groups:
        lines.append("  lab above: the corpus runs pooled by run count; per harness:")
        lines += [
            f"    {_group_line(claimed, g.group, g.n, g.prediction, g.ci)}" for g in check.groups
        ]
        pooled = check.pooled
        if pooled is not None:
            row = _group_line(claimed, "equal weight", pooled.groups, pooled.prediction, pooled.ci)
            lines.append(f"    {row} -> {check.pooled_verdict} [{pooled.how}]")
    if check.break_even is not None:
        lines.append(f"  break-even: {break_even_text(check.break_even)}")
    implied = e.test.implied
    if implied is not None and ev.retimer is not None:
        knob = KNOBS[implied.knob]
        if ev.implied is None:
            said = f"more than {implied.up_to:g} (not reached)"
        else:
            said = f"{ev.implied:.2f} -> {ev.implied * (1 - implied.cut):.2f}"
        lines.append(
            f"  implies:    taken at its word, a {knob.label} of {said} ({knob.help}; "
            f"cut {implied.cut:.0%}) on the draws below"
        )
    untimed = f", {ev.untimed} untimed left out" if ev.untimed else ""
    lines.append(f"  evidence:   {ev.what} (n={ev.n}{untimed})")
    if check.decomposition is not None:
        point = claimed.point if claimed.measure == "speedup" else None
        lines.append("  the speedup taken apart (exact Shapley values; parts sum to the whole):")
        lines += waterfall_text(check.decomposition, point)
    lines += [f"  assumes:    {a}" for a in e.assumptions]
    return "\n".join(lines)
