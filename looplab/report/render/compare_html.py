"""The side-by-side compare as HTML (the dashboard's `/compare`): the sides with a baseline
picker, a form to change them, and per side against the baseline a sortable table of
A | B | delta per task and metric, regressions and improvements marked.

The numbers are `views.side_by_side`'s, the formats `render.compare_text`'s (the console's
`looplab diff` prints the same).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from looplab.report.render.compare_text import (
    STATUS_WORDS,
    fmt_delta,
    fmt_metric,
    paired_words,
    speedup_words,
)
from looplab.report.views.run_metrics import METRICS
from looplab.report.views.side_by_side import MAX_SIDES, Pairwise, SideBySide, SideCell

__all__ = ["SIDE_KEYS", "compare_body", "compare_tables"]

SIDE_KEYS = "abcdefgh"
"""The query parameters naming the sides, in order (`?a=..&b=..`, up to `MAX_SIDES`)."""

_ARROW = {"worse": " ▲", "better": " ▼", "": ""}


def _letter(index: int) -> str:
    return SIDE_KEYS[index].upper()


def compare_body(
    view: SideBySide,
    *,
    specs: Sequence[str],
    choices: Sequence[tuple[str, str]],
    url: Callable[[Sequence[str], int], str],
) -> str:
    """The page body: sides, the picker form, one table per side against the baseline.

    Args:
        view: the comparison.
        specs: the sides' specs as given (the URL's values), in side order.
        choices: (spec, label) the form offers for each side.
        url: (specs, baseline index) -> the page's URL (the baseline picker's links).
    """
    sides = "".join(
        f'<li class="{"base" if i == view.baseline else ""}"><b>{_letter(i)}</b> '
        f"{escape(label)} "
        + (
            '<span class="badge">baseline</span>'
            if i == view.baseline
            else f'<a class="pick-base" href="{escape(url(specs, i))}">make baseline</a>'
        )
        + "</li>"
        for i, label in enumerate(view.sides)
    )
    tables = "".join(_pairwise_section(view, pair, n) for n, pair in enumerate(view.comparisons))
    return (
        f"<h1>Compare {len(view.sides)} sides</h1>"
        '<p class="sub">Per task: each side against the baseline (A). Medians over a side\'s '
        "runs of the task; success is the share solved. ▲ worse, ▼ better: a change over 5% "
        "(success: any change); for time with 3+ paired repetitions, only when the paired 95% "
        "interval excludes 0.</p>"
        f'<ul class="sides" id="sides">{sides}</ul>'
        f"{_form(view, specs, choices)}{tables}"
    )


def _form(view: SideBySide, specs: Sequence[str], choices: Sequence[tuple[str, str]]) -> str:
    """Selects for every side shown plus one more (up to `MAX_SIDES`), and the baseline."""
    known = dict(choices)
    options = list(choices) + [(s, s) for s in specs if s not in known]
    count = min(MAX_SIDES, len(specs) + 1)
    selects = ""
    for i in range(count):
        chosen = specs[i] if i < len(specs) else ""
        opts = ("" if i < 2 else '<option value="">(none)</option>') + "".join(
            f'<option value="{escape(v)}"{" selected" if v == chosen else ""}>{escape(t)}</option>'
            for v, t in options
        )
        key = SIDE_KEYS[i]
        selects += (
            f'<label>{_letter(i)} <select name="{key}" id="side-{key}">{opts}</select></label> '
        )
    bases = "".join(
        f'<option value="{i}"{" selected" if i == view.baseline else ""}>{_letter(i)}</option>'
        for i in range(len(specs))
    )
    return (
        '<form action="/compare" method="get" class="filters" id="compare-form">'
        f'{selects}<label>baseline <select name="base" id="pick-base">{bases}</select></label>'
        '<button type="submit">compare</button></form>'
    )


def _v(value: float | None) -> str:
    return f' data-v="{value:.9g}"' if value is not None else ""


def _cells(
    row_base: SideCell | None, row_side: SideCell | None, delta: float | None, key: str, mark: str
) -> str:
    metric = next(m for m in METRICS if m.key == key)
    a = row_base.value(key) if row_base else None
    b = row_side.value(key) if row_side else None
    return (
        f'<td data-metric="{key}" data-role="a"{_v(a)}>{fmt_metric(metric, a)}</td>'
        f'<td data-metric="{key}" data-role="b"{_v(b)}>{fmt_metric(metric, b)}</td>'
        f'<td class="d {mark}" data-metric="{key}" data-role="d"{_v(delta)}>'
        f"{fmt_delta(metric, delta, a)}{_ARROW[mark]}</td>"
    )


def _pairwise_section(view: SideBySide, pair: Pairwise, n: int) -> str:
    side_index = [i for i in range(len(view.sides)) if i != view.baseline][n]
    letter = _letter(side_index)
    groups = "".join(
        f'<th colspan="3" data-nosort class="group">{escape(m.label)}</th>' for m in METRICS
    )
    head = "".join(
        f'<th aria-label="{escape(m.label)} A">A</th>'
        f'<th aria-label="{escape(m.label)} {letter}">{letter}</th>'
        f'<th aria-label="{escape(m.label)} change">Δ</th>'
        for m in METRICS
    )
    rows = "".join(
        f'<tr class="{r.status.replace(" ", "-")}" data-task="{escape(r.task)}">'
        f"<td>{escape(r.task)}</td><td>{escape(STATUS_WORDS[r.status])}</td>"
        + "".join(_cells(r.base, r.side, r.delta[m.key], m.key, r.marks[m.key]) for m in METRICS)
        + f"<td{_v(r.mean_diff_s)}>"
        + paired_words(r.pairs, r.mean_diff_s, r.ci_diff_s, r.faster_pairs)
        + "</td></tr>"
        for r in pair.rows
    )
    issues = (
        '<div class="warn small"><b>Unlike inputs:</b><ul>'
        + "".join(f"<li>{escape(i)}</li>" for i in pair.issues)
        + "</ul></div>"
        if pair.issues
        else ""
    )
    return (
        f'<section id="vs-{letter.lower()}"><h2>{letter} = {escape(pair.side)} against '
        f"A = {escape(pair.base)}</h2>"
        f'<p class="sentence small">{letter} runs at {escape(speedup_words(pair))}: '
        f"{pair.regressions} task regression(s), {pair.improvements} improvement(s).</p>"
        f'{issues}<div class="scroll"><table class="sortable sxs" id="sxs-{letter.lower()}" '
        f'data-export="compare-{letter.lower()}"><thead><tr><th colspan="2" data-nosort></th>'
        f"{groups}<th data-nosort></th></tr><tr><th>task</th><th>status</th>{head}"
        f"<th>paired Δ time<br>[95% CI] {letter} faster</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div></section>"
    )


def compare_tables(view: SideBySide) -> dict[str, dict[str, Any]]:
    """The pages' download tables (`data-export` names), one per side against the baseline."""
    tables: dict[str, dict[str, Any]] = {}
    others = [i for i in range(len(view.sides)) if i != view.baseline]
    for index, pair in zip(others, view.comparisons, strict=True):
        columns = ["task"]
        for m in METRICS:
            columns += [f"{m.key} A", f"{m.key} B", f"{m.key} delta"]
        columns += ["pairs", "mean diff s", "ci low", "ci high", "status"]
        rows = []
        for r in pair.rows:
            row: list[object] = [r.task]
            for m in METRICS:
                row += [
                    r.base.value(m.key) if r.base else None,
                    r.side.value(m.key) if r.side else None,
                    r.delta[m.key],
                ]
            ci = r.ci_diff_s or (None, None)
            row += [r.pairs, r.mean_diff_s, ci[0], ci[1], r.status]
            rows.append(row)
        letter = SIDE_KEYS[index]
        tables[f"compare-{letter}"] = {
            "title": f"{pair.side} against {pair.base}",
            "columns": columns,
            "rows": rows,
        }
    return tables
