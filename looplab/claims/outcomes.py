"""Published success, time and cost per task, judged per solved task (`published-outcomes`).

A leaderboard row gives an arm's share solved, mean time and mean cost per task attempt.
The lab turns each arm into runs of one task (`RUNS` of them, the solved share exactly
as published, each at the published time and cost) and asks `looplab.analysis.choice`
the same questions as of its own runs: time and cost per solved task (failed attempts
counted; with one time per attempt that is the time per task over the share solved,
whatever the number of tries), and the policies of two arms: A then B on failure, B then
A, each retried. The claim judged is the published per-task framing ("A is N x faster
per task"); the lab's number is the same ratio per solved task.

What it assumes (said in each check): a failed attempt takes as long and costs as much as
the mean attempt (the sources give one mean); tries are independent, also across arms
(real failures correlate: a task one arm fails is more often hard for the other too, so
"A then B" is a best case).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from looplab.analysis.choice import Choice, Outcome, choose, policy_name
from looplab.claims.model import PublishedArm

__all__ = ["ASSUMES", "RUNS", "PublishedChoice", "published_choice"]

RUNS = 1000
"""Runs per arm: a share published to 0.1% is exact at 1,000 runs."""

ASSUMES = (
    "a failed attempt takes the mean time and cost of an attempt (the source gives one mean)",
    "tries are independent, also across arms (correlated failures make 'A then B' worse)",
)
"""What every `published-outcomes` check assumes."""


@dataclass(frozen=True)
class PublishedChoice:
    """The lab's reading of two published arms."""

    choice: Choice
    what: str
    """The evidence in words: each arm per task and per solved task, the best policies."""
    untimed: list[str]
    """Arms with no published time (no time per solved task: not testable)."""


def _runs(arm: PublishedArm) -> list[Outcome]:
    solved = round(arm.success * RUNS)
    return [
        Outcome(
            task="published",
            time_s=arm.time_s or 0.0,
            solved=index < solved,
            cost_usd=arm.cost_usd,
        )
        for index in range(RUNS)
    ]


def _money(value: float | None) -> str:
    return "no cost published" if value is None else f"${value:.3f}"


def published_choice(arms: Sequence[PublishedArm], tries: int) -> PublishedChoice:
    """The policy table of the two published arms (A = `arms[0]`, B = `arms[1]`).

    Raises:
        ValueError: not exactly two arms.
    """
    if len(arms) != 2:
        raise ValueError(f"published-outcomes needs exactly two arms, got {len(arms)}")
    a, b = arms
    choice = choose(_runs(a), _runs(b), labels=(a.name, b.name), tries=tries)
    untimed = [arm.name for arm in arms if arm.time_s is None]
    parts = []
    for arm, row in ((a, choice.row("A only")), (b, choice.row("B only"))):
        timed = "" if arm.time_s is None else f"{arm.time_s:.1f} s and "
        per_solved = "" if arm.time_s is None else f"{row.time_per_solved_s or 0:.1f} s and "
        parts.append(
            f"{arm.name}: {arm.success:.1%} solved, {timed}{_money(arm.cost_usd)} a task -> "
            f"{per_solved}{_money(row.cost_per_solved_usd)} per solved task"
        )
    fallback = choice.row("A then B")
    timed = "" if untimed else f"{fallback.time_s:.1f} s and "
    parts.append(
        f"{policy_name(fallback.tries, choice.arms)} on failure: "
        f"{fallback.success:.1%} solved, {timed}{_money(fallback.cost_usd)} a task"
    )
    if not untimed:
        front = ", ".join(policy_name(r.tries, choice.arms) for r in choice.rows if r.pareto)
        parts.append(f"Pareto set (time, cost, success): {front}")
    what = "the published per-task outcomes, per solved task (failed attempts counted): "
    return PublishedChoice(choice, what + "; ".join(parts), untimed)
