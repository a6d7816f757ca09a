"""Which to use: the policy table and the behaviour shift of two arms of a report's runs.

An arm is the runs of one profile label (a backend: `small-fast`, `slow-80`) within one
comparison key (agent, task set, clock; `report/data/pairing.py`). Each run becomes an
`analysis.choice.Outcome` (task time, cost at its profile's price entry, the check's
verdict, decode seconds and rate) and an `analysis.shift.Behaviour`; the table and the
shift are computed there (pure functions). `choice_views` picks, per key with two or more
labels and at least one checked run, the fastest decode rate's label as A and the
slowest's as B (the bottom line's pair); `arm_choice` takes the labels the user names
(`looplab choose --a X --b Y`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from looplab.analysis.choice import Choice, Outcome, choose, policy_name
from looplab.analysis.cost import price_of, trace_cost
from looplab.analysis.shift import ShiftRow, behaviour_of, behaviour_shift
from looplab.errors import ConfigError
from looplab.report.data.pairing import by_profile, comparison_groups
from looplab.report.data.records import RunRecord
from looplab.traces.end_reason import EndReason

__all__ = ["ChoiceView", "arm_choice", "choice_json", "choice_outcome", "choice_views"]


@dataclass(frozen=True)
class ChoiceView:
    """One pair of arms: its policy table and behaviour shift."""

    key: str
    """The comparison key's label (`coding on coding (virtual clock)`)."""
    choice: Choice
    shift: list[ShiftRow]
    """B against A per measure (`analysis.shift.MEASURES`)."""
    models: dict[str, str]
    """`A`/`B` -> the model id the arm's runs talked to (`?` when not recorded)."""
    checked: dict[str, int]
    """`A`/`B` -> runs whose success is known (checked)."""


def choice_outcome(record: RunRecord) -> Outcome:
    """One run as an `Outcome`: cost at the price entry its profile names (None: none)."""
    cost = None
    price = price_of(record.profile_spec)
    if price is not None and record.trace is not None:
        priced = trace_cost(record.trace, price)
        cost = priced.total_usd if priced.priced_calls else None
    return Outcome(
        task=record.task,
        time_s=record.task_s,
        solved=record.success if record.end_reason != EndReason.TIMEOUT else False,
        cost_usd=cost,
        decode_s=(record.decode_s or 0.0) + record.reasoning_s,
        decode_tps=record.decode_tps,
        steps=record.steps,
    )


def _model(runs: Sequence[RunRecord]) -> str:
    names = sorted({r.trace.header.model or "?" for r in runs if r.trace is not None})
    return ", ".join(names) or "?"


def _view(
    key: str,
    a: Sequence[RunRecord],
    b: Sequence[RunRecord],
    labels: tuple[str, str],
    tries: int,
    deadline_s: float | None,
) -> ChoiceView:
    choice = choose(
        [choice_outcome(r) for r in a],
        [choice_outcome(r) for r in b],
        labels=labels,
        tries=tries,
        deadline_s=deadline_s,
    )
    shift = behaviour_shift(
        [behaviour_of(r.trace) for r in a if r.trace is not None],
        [behaviour_of(r.trace) for r in b if r.trace is not None],
    )
    return ChoiceView(
        key=key,
        choice=choice,
        shift=shift,
        models={"A": _model(a), "B": _model(b)},
        checked={
            "A": sum(r.success is not None for r in a),
            "B": sum(r.success is not None for r in b),
        },
    )


def choice_views(
    records: Sequence[RunRecord], *, tries: int = 3, deadline_s: float | None = None
) -> list[ChoiceView]:
    """Per comparison key with two or more labels, some checked runs and a paired task:
    the fastest label (A) against the slowest (B)."""
    views = []
    for key, runs in comparison_groups(records).items():
        arms = by_profile(runs)
        if len(arms) < 2 or not any(r.success is not None for r in runs):
            continue
        labels = list(arms)
        slow, fast = labels[0], labels[-1]
        if not {r.task for r in arms[slow]} & {r.task for r in arms[fast]}:
            continue
        views.append(_view(key.label, arms[fast], arms[slow], (fast, slow), tries, deadline_s))
    return views


def arm_choice(
    records: Sequence[RunRecord],
    a: str,
    b: str,
    *,
    tries: int = 3,
    deadline_s: float | None = None,
) -> ChoiceView:
    """The policy table of the runs labelled `a` against those labelled `b` (a label is a
    run's profile / backend name).

    Raises:
        ConfigError: a label with no runs (the message lists the labels there are), the
            same label twice, the arms in two comparison keys, or no task run by both.
    """
    found: dict[str, list[RunRecord]] = {}
    for record in records:
        found.setdefault(record.group or record.profile, []).append(record)
    a, b = _label(found, a, "--a"), _label(found, b, "--b")
    if a == b:
        raise ConfigError("--a and --b name the same runs", field="--b", given=b)
    keys = {k.label for k in comparison_groups(found[a] + found[b])}
    if len(keys) > 1:
        raise ConfigError(
            "the two arms are different comparison groups (agent, task set or clock): "
            + "; ".join(sorted(keys)),
            field="--b",
        )
    try:
        return _view(keys.pop(), found[a], found[b], (a, b), tries, deadline_s)
    except ValueError as error:
        raise ConfigError(str(error), field="--b") from error


def _label(found: dict[str, list[RunRecord]], given: str, flag: str) -> str:
    """The group label `given` names: itself, or the one label it is a part of (`small-fast`
    for `looplab-small-fast · small-fast`, where a group holding two models puts the model
    before the profile).

    Raises:
        ConfigError: no label, or several, match (the message lists the labels there are).
    """
    if given in found:
        return given
    matches = [label for label in found if given in label.split(" · ")]
    if len(matches) == 1:
        return matches[0]
    what = "several labels hold" if matches else "no runs labelled"
    raise ConfigError(f"{what} {given!r}", field=flag, allowed=sorted(found), given=given)


def _num(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def choice_json(view: ChoiceView) -> dict[str, Any]:
    """One view for scripts (`looplab choose --format json`, the report's JSON)."""
    choice = view.choice
    return {
        "key": view.key,
        "arms": choice.arms,
        "models": view.models,
        "checked_runs": view.checked,
        "tasks": choice.tasks,
        "unpaired_tasks": choice.unpaired,
        "tries": choice.tries,
        "deadline_s": choice.deadline_s,
        "policies": [
            {
                "policy": row.name,
                "named": policy_name(row.tries, choice.arms),
                "tries": list(row.tries),
                "time_s": _num(row.time_s, 3),
                "cost_usd": _num(row.cost_usd),
                "success": _num(row.success, 4),
                "time_per_solved_s": _num(row.time_per_solved_s, 3),
                "cost_per_solved_usd": _num(row.cost_per_solved_usd),
                "under_deadline": _num(row.under_deadline, 4),
                "pareto": row.pareto,
            }
            for row in choice.rows
        ],
        "break_even_tps": _num(choice.break_even_tps, 1),
        "break_even": choice.break_even_note,
        "assumes": choice.notes,
        "behaviour_shift": [
            {
                "measure": s.measure,
                "n": s.n,
                "mean_a": _num(s.mean_a, 3),
                "mean_b": _num(s.mean_b, 3),
                "mean_change": _num(s.mean_change, 3),
                "median_change": _num(s.median_change, 3),
                "p_value": _num(s.p_value, 4),
            }
            for s in view.shift
        ],
    }
