"""Which to use, rendered: terminal lines (`looplab choose`, `looplab run`) and the
report's section ("Which to use: policy table and behaviour shift")."""

from __future__ import annotations

from html import escape
from typing import Any

from looplab.analysis.choice import Choice, PolicyRow, policy_name
from looplab.report.views.choice import ChoiceView, choice_json
from looplab.report.views.report_model import ReportModel

__all__ = ["answer", "choice_tables", "choice_text", "render_choice"]

_MEASURE_WORDS = {
    "steps": "steps",
    "tool_calls": "tool calls",
    "output_tokens": "output tokens",
    "retries": "retries",
    "repeated_reads": "repeated reads",
}


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _usd(value: float | None) -> str:
    return "no price" if value is None else f"${value:.4f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _named(choice: Choice, row: PolicyRow) -> str:
    """`A only` -> `small-fast only`: the policy in the arms' own names."""
    return policy_name(row.tries, choice.arms)


def answer(choice: Choice) -> list[str]:
    """The answer in sentences: fastest and cheapest per solved task, most solved (under
    the deadline when one is given), and the Pareto set."""
    solved = [r for r in choice.rows if r.time_per_solved_s is not None]
    if not solved:
        return ["Neither arm solved a paired task: no policy reaches a solved task."]
    fastest = min(solved, key=lambda r: (r.time_per_solved_s or 0.0, -r.success))
    lines = [
        f"Fastest to a solved task: {_named(choice, fastest)} "
        f"({_s(fastest.time_per_solved_s)} per solved task, {_pct(fastest.success)} solved)."
    ]
    priced = [r for r in solved if r.cost_per_solved_usd is not None]
    if priced:
        cheapest = min(priced, key=lambda r: (r.cost_per_solved_usd or 0.0, -r.success))
        lines.append(
            f"Cheapest per solved task: {_named(choice, cheapest)} "
            f"({_usd(cheapest.cost_per_solved_usd)} per solved task)."
        )
    if choice.deadline_s is not None:
        timed = [r for r in choice.rows if r.under_deadline is not None]
        if timed:
            best = max(timed, key=lambda r: (r.under_deadline or 0.0, -r.time_s))
            lines.append(
                f"Under the {choice.deadline_s:g} s deadline: {_named(choice, best)} solves "
                f"{_pct(best.under_deadline)} of tasks in time "
                f"(A only {_pct(choice.rows[0].under_deadline)}, "
                f"B only {_pct(choice.rows[1].under_deadline)})."
            )
    most = max(choice.rows, key=lambda r: (r.success, -r.time_s))
    lines.append(f"Most solved: {_named(choice, most)} ({_pct(most.success)}).")
    pareto = ", ".join(_named(choice, r) for r in choice.rows if r.pareto)
    lines.append(f"Pareto set (time, cost, success per task): {pareto}.")
    return lines


def choice_text(view: ChoiceView) -> list[str]:
    """The view as terminal lines: header, the table, the answer, break-even, shift."""
    choice = view.choice
    arms = choice.arms
    deadline = "" if choice.deadline_s is None else f", deadline {choice.deadline_s:g} s"
    lines = [
        f"Which to use: {view.key}: A = {arms['A']} (model {view.models['A']}), "
        f"B = {arms['B']} (model {view.models['B']}); {len(choice.tasks)} paired tasks, "
        f"up to {choice.tries} {'try' if choice.tries == 1 else 'tries'}{deadline}",
    ]
    if choice.unpaired:
        lines.append(f"  left out (one arm only): {', '.join(choice.unpaired)}")
    width = max(len(_named(choice, r)) for r in choice.rows)
    head = f"  {'policy':<{width}} {'time/task':>10} {'cost/task':>10} {'solved':>7} "
    head += f"{'time/solved':>12} {'cost/solved':>12}"
    if choice.deadline_s is not None:
        head += f" {'in time':>8}"
    lines.append(head + "  Pareto")
    for row in choice.rows:
        line = (
            f"  {_named(choice, row):<{width}} {_s(row.time_s):>10} {_usd(row.cost_usd):>10} "
            f"{_pct(row.success):>7} {_s(row.time_per_solved_s):>12} "
            f"{_usd(row.cost_per_solved_usd):>12}"
        )
        if choice.deadline_s is not None:
            line += f" {_pct(row.under_deadline):>8}"
        lines.append(line + ("  *" if row.pareto else ""))
    lines += [f"  {sentence}" for sentence in answer(choice)]
    lines.append(f"  Decode rate: {choice.break_even_note}.")
    parts = [
        f"{_MEASURE_WORDS[s.measure]} {s.mean_a:.1f} -> {s.mean_b:.1f} "
        f"({s.mean_change:+.1f}, p={s.p_value:.2f})"
        for s in view.shift
    ]
    n = view.shift[0].n if view.shift else 0
    lines.append(
        f"  Behaviour, A -> B per task (paired over {n} tasks, sign-flip test): " + "; ".join(parts)
    )
    lines.append("  Assumes: " + "; ".join(choice.notes) + ".")
    return lines


def _table(view: ChoiceView) -> str:
    choice = view.choice
    timed = choice.deadline_s is not None
    head = "".join(
        f"<th>{h}</th>"
        for h in ["policy", "time / task", "cost / task", "solved", "time / solved task"]
        + ["cost / solved task"]
        + ([f"solved in {choice.deadline_s:g} s"] if timed else [])
        + ["Pareto"]
    )
    body = ""
    for row in choice.rows:
        cells = [
            escape(_named(choice, row)),
            _s(row.time_s),
            _usd(row.cost_usd),
            _pct(row.success),
            _s(row.time_per_solved_s),
            _usd(row.cost_per_solved_usd),
        ]
        if timed:
            cells.append(_pct(row.under_deadline))
        cells.append("yes" if row.pareto else "")
        body += "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
    return (
        f'<table class="sortable" data-export="choice"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def _shift_table(view: ChoiceView) -> str:
    arms = view.choice.arms
    rows = "".join(
        f"<tr><td>{_MEASURE_WORDS[s.measure]}</td><td>{s.mean_a:.1f}</td><td>{s.mean_b:.1f}"
        f"</td><td>{s.mean_change:+.1f}</td><td>{s.p_value:.3f}</td></tr>"
        for s in view.shift
    )
    return (
        f"<table><thead><tr><th>per task</th><th>{escape(arms['A'])}</th>"
        f"<th>{escape(arms['B'])}</th><th>change</th><th>p (sign flips)</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def render_choice(model: ReportModel) -> str:
    """The section body: per pair, the answer, the policy table, break-even and shift."""
    views: list[ChoiceView] = model.choice
    if not views:
        return (
            "<p>No pair of arms with checked runs on shared tasks: the policy table needs "
            "two profiles whose runs the task's check judged.</p>"
        )
    parts = []
    for view in views:
        lines = choice_text(view)
        sentences = "".join(f"<li>{escape(s)}</li>" for s in answer(view.choice))
        parts.append(
            f"<h3>{escape(lines[0])}</h3><ul>{sentences}</ul>{_table(view)}"
            f"<p>Decode rate: {escape(view.choice.break_even_note)}.</p>"
            f"<p>Behaviour shift, paired by task:</p>{_shift_table(view)}"
            f"<p class='note'>Assumes: {escape('; '.join(view.choice.notes))}.</p>"
        )
    return "".join(parts)


def choice_tables(model: ReportModel) -> dict[str, Any]:
    """The section's export table (`choice`): every pair's JSON."""
    return {"choice": [choice_json(v) for v in model.choice]}
