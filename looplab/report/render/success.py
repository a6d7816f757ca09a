"""The "Success: solved, by which model, by when, for how much" section: per arm (agent,
model, profile) on tasks paired across arms, the success rate with its Wilson interval,
$ per task and per solved task, expected time and $ to a solved task with retries,
success under the deadline and the area under success vs time budget, and the three
repetition shares (`views/success.py`); and the dashboard's deadline form
(`?deadline=2m` on a report page)."""

from __future__ import annotations

from html import escape
from typing import Any

from rich.table import Table

from looplab.errors import ConfigError
from looplab.report.views.report_model import ReportModel
from looplab.report.views.success import ArmSuccess, SuccessView
from looplab.stats.durations import parse_duration

__all__ = ["CONSOLE_COLUMNS", "deadline_form", "deadline_s", "render_success", "success_table"]
__all__ += ["success_tables"]

COLUMNS = [
    "comparison group",
    "arm",
    "model",
    "profile",
    "tasks",
    "runs",
    "solved",
    "failed",
    "unknown",
    "success (95% CI)",
    "task s p50",
    "$ a task",
    "$ per solved task",
    "s to a solved task (retries)",
    "$ to a solved task (retries)",
    "under the deadline",
    "AUC to the deadline",
    "always / mean / ever",
    "verdict by",
]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.4g}"


def _under(arm: ArmSuccess) -> str:
    """`75% (2 min)`: the share solved under the arm's deadline, and the deadline."""
    if arm.under_deadline is None or arm.deadline_s is None:
        return "-"
    return f"{_pct(arm.under_deadline)} ({arm.deadline_s / 60:g} min)"


def _row(arm: ArmSuccess) -> list[str]:
    """One arm's cells, in `COLUMNS` order (words where a figure is unknown)."""
    rate = "unknown (no verdict)"
    if arm.rate is not None:
        rate = _pct(arm.rate)
        if arm.interval:
            rate += f" ({arm.interval[0]:.0%}-{arm.interval[1]:.0%})"
    repeated = (
        f"{_pct(arm.always)} / {_pct(arm.mean)} / {_pct(arm.ever)}"
        if arm.mean is not None
        else "one run a task"
    )
    return [
        arm.key.label,
        arm.arm,
        arm.model or "?",
        arm.profile,
        str(arm.tasks),
        str(arm.runs),
        str(arm.solved),
        str(arm.failed),
        str(arm.unknown),
        rate,
        f"{arm.task_s:.2f}",
        _usd(arm.cost_per_task),
        _usd(arm.cost_per_solved),
        "-" if arm.time_to_solved_s is None else f"{arm.time_to_solved_s:.2f}",
        _usd(arm.cost_to_solved),
        _under(arm),
        "-" if arm.auc is None else f"{arm.auc:.2f}",
        repeated,
        ", ".join(f"{k} {n}" for k, n in sorted(arm.verdicts.items())),
    ]


def _deadline_words(view: SuccessView) -> str:
    if view.deadline_s is not None:
        return f"your {view.deadline_s / 60:g}-minute deadline"
    return "each group's cap picked from its slowest arm's median (set yours: --deadline)"


def render_success(model: ReportModel) -> str:
    """The section's static HTML: the hint, the table, the notes."""
    view = model.success
    if view is None or not view.arms:
        return '<p class="note">No arm to judge.</p>'
    head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in _row(arm)) + "</tr>"
        for arm in view.arms
    )
    hint = (
        "Per arm (a model at a profile) on the tasks every arm of its comparison group ran. "
        "Solved / failed / unknown: a failed check, a non-zero exit or a stop is failed; a "
        "run without a verdict is unknown, said and never counted as solved (give one: "
        "`looplab wrap --check CMD`, the `looplab.success` span attribute). Success: solved "
        "of the runs with a verdict, Wilson 95% interval. $ per solved task: every run's "
        f"cost over the solved ones. Retries: up to {view.arms[0].retries} tries, each "
        "solving with the task's own solved share in these runs, failed tries' time and "
        f"money counted. Under the deadline ({escape(_deadline_words(view))}): the share of "
        "runs solved within it; AUC: the area under that share from 0 to the deadline "
        "(1 = all solved at once). Always / mean / ever: over tasks run twice or more."
    )
    notes = "".join(f"<li>{escape(n)}</li>" for n in view.notes)
    return (
        f'<p class="hint">{hint}</p>'
        f'<div class="scroll"><table class="sortable" data-export="success"><thead><tr>{head}'
        f"</tr></thead><tbody>{body}</tbody></table></div>" + (f"<ul>{notes}</ul>" if notes else "")
    )


def success_tables(model: ReportModel) -> dict[str, Any]:
    """The section's export table (`success`)."""
    view = model.success
    if view is None:
        return {}
    return {
        "success": {
            "title": f"success per arm ({_deadline_words(view)})",
            "columns": COLUMNS,
            "rows": [_row(arm) for arm in view.arms],
        }
    }


CONSOLE_COLUMNS = {
    "arm": 1,
    "solved": 6,
    "success (95% CI)": 9,
    "$ per solved task": 12,
    "s to a solved task (retries)": 13,
    "under the deadline": 15,
}
"""The columns `looplab run` and `looplab report` print (header -> index in `COLUMNS`)."""


def success_table(view: SuccessView) -> Table:
    """The console's success table: per arm, solved of judged, the rate with its interval,
    $ per solved task, time to a solved task with retries, the share under the deadline."""
    table = Table(title=f"success per arm, on paired tasks ({_deadline_words(view)})")
    for header in CONSOLE_COLUMNS:
        table.add_column(header, justify="right")
    for arm in view.arms:
        cells = _row(arm)
        cells[6] = f"{arm.solved}/{arm.solved + arm.failed}" + (
            f" ({arm.unknown} unknown)" if arm.unknown else ""
        )
        table.add_row(*(cells[i] for i in CONSOLE_COLUMNS.values()))
    return table


def deadline_s(text: str) -> float:
    """The `?deadline=` of a report page in seconds.

    Raises:
        ConfigError: not a duration (90s, 2m, 1.5h).
    """
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise ConfigError(str(exc), field="deadline") from None


def deadline_form(value: str) -> str:
    """A GET form that reloads the report judged under the user's deadline
    (`?deadline=2m`: the bottom lines and the Success section use it)."""
    return (
        '<form class="deadline" method="get"><label>Your deadline for a task '
        f'<input name="deadline" value="{escape(value)}" placeholder="2m" size="6"></label> '
        '<button type="submit">judge success under it</button></form>'
    )
