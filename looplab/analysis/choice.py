"""Which to use: a policy table over two arms' per-task outcomes (a pure function).

An arm is one (agent, model, profile) run on a set of tasks; each run of a task is an
`Outcome` (its task time, its cost, whether the task's check said solved, and how much of
its time was decoding at which rate). `choose(a, b, ...)` answers, on the tasks both arms
ran (paired by task), for every policy of `policies(k)`:

- `A only` / `B only` (one try), `A x k` / `B x k` (retry the same arm up to k tries),
  `A then B` / `B then A` (one try of the first arm, then the other on failure), and
  `A, then B x k-1` / `B, then A x k-1` when k > 2;
- the expected time and cost per task (failed attempts' time and money counted), the
  success per task, the time and cost per solved task (expected totals over tasks divided
  by expected solved tasks), and success under a deadline when one is given;
- the Pareto set over (time per task, cost per task, success);
- the decode rate at which A's time to a solved task (`A x k`) would match B's (`B x k`).

Tries are independent draws of the task's own outcomes: a task's success probability for
an arm is its observed share of solved runs, and a try's time and cost are those runs'
means. With one run per task a retry of the same arm repeats the failure (p is 0 or 1), so
retrying pays only where runs of a task disagree; switching arms pays where the other arm
solved the task. A run whose success is unknown is never counted as solved.

Re-timing at another decode rate scales each run's decode time (visible and hidden
reasoning decode) by `rate / new rate` and keeps the rest (TTFT, tools, harness): time
to a solved task is then linear in 1 / rate, so the break-even rate is solved exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

__all__ = [
    "Choice",
    "Outcome",
    "PolicyRow",
    "break_even_rate",
    "choose",
    "policies",
    "policy_name",
]

MAX_DEADLINE_PATHS = 200_000
"""Largest number of (run, try) combinations enumerated per task for success under a
deadline; beyond it the deadline column is left empty (said, never approximated)."""


@dataclass(frozen=True)
class Outcome:
    """One run of one task by one arm."""

    task: str
    """Task id (the pairing key)."""
    time_s: float
    """Task time (seconds, the run's own clock)."""
    solved: bool | None
    """The task's check: True solved, False not, None unknown (counted as not solved)."""
    cost_usd: float | None = None
    """What the run cost (None: no price entry)."""
    decode_s: float = 0.0
    """Seconds of the task time spent decoding (visible + hidden reasoning)."""
    decode_tps: float | None = None
    """The decode rate the run was served at (None: unknown, no re-timing)."""
    steps: int = 0
    """Model calls (steps) of the run."""


@dataclass(frozen=True)
class PolicyRow:
    """One policy's expected numbers per task, averaged over the paired tasks."""

    name: str
    """`A only`, `A x 3`, `A then B`, ... (arm letters as in `Choice.arms`)."""
    tries: tuple[str, ...]
    """The arm of each try, in order (`("A", "B")`)."""
    time_s: float
    """Expected task time per task, failed tries included."""
    cost_usd: float | None
    """Expected cost per task (None: an arm has no price)."""
    success: float
    """Expected share of tasks solved (0..1)."""
    time_per_solved_s: float | None
    """Expected time over expected solved tasks (None: nothing solved)."""
    cost_per_solved_usd: float | None
    """Expected cost over expected solved tasks (None: nothing solved or no price)."""
    under_deadline: float | None = None
    """Share of tasks solved within the deadline (None: no deadline, or too many paths)."""
    pareto: bool = False
    """No other policy is at least as good on time, cost and success and better on one."""


@dataclass(frozen=True)
class Choice:
    """The answer: the policy table and what it rests on."""

    arms: dict[str, str]
    """`A` and `B` -> the arm's label."""
    tasks: list[str]
    """The paired tasks (run by both arms)."""
    unpaired: list[str]
    """Tasks only one arm ran (left out)."""
    rows: list[PolicyRow]
    """One row per policy, in `policies(k)` order."""
    tries: int
    """k, the most tries a policy makes."""
    deadline_s: float | None
    """The deadline of `PolicyRow.under_deadline` (None: none given)."""
    break_even_tps: float | None
    """A's decode rate at which `A x k` reaches a solved task as fast as `B x k` (None:
    no rate does: A solves nothing, its time without decoding is already slower, or A's
    decode rate is unknown)."""
    break_even_note: str
    """The break-even in words (which rate A has today; why there is none)."""
    notes: list[str] = field(default_factory=list)
    """What the numbers assume."""

    def row(self, name: str) -> PolicyRow:
        """The row of policy `name` (KeyError when there is none)."""
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(name)


def policy_name(tries: Sequence[str], names: dict[str, str] | None = None) -> str:
    """A policy's name from its tries: `A only`, `A x 3`, `A then B`, `A, then B x 2`;
    `names` maps the letters to the arms' labels (default: the letters)."""
    names = names or {"A": "A", "B": "B"}
    runs: list[tuple[str, int]] = []
    for letter in tries:
        if runs and runs[-1][0] == letter:
            runs[-1] = (letter, runs[-1][1] + 1)
        else:
            runs.append((letter, 1))
    if len(runs) == 1:
        letter, count = runs[0]
        return f"{names[letter]} only" if count == 1 else f"{names[letter]} x {count}"
    words = [names[letter] + (f" x {count}" if count > 1 else "") for letter, count in runs]
    joiner = ", then " if any(count > 1 for _, count in runs) else " then "
    return joiner.join(words)


def policies(k: int) -> list[tuple[str, tuple[str, ...]]]:
    """The policies compared, as (name, arm of each try), for at most `k` tries (k >= 1)."""
    tries: list[tuple[str, ...]] = [("A",), ("B",)]
    if k >= 2:
        tries += [("A",) * k, ("B",) * k, ("A", "B"), ("B", "A")]
    if k >= 3:
        tries += [("A",) + ("B",) * (k - 1), ("B",) + ("A",) * (k - 1)]
    return [(policy_name(t), t) for t in tries]


@dataclass(frozen=True)
class _Arm:
    """One arm on one task: success probability, mean time and cost of a try."""

    p: float
    time_s: float
    cost_usd: float | None
    runs: tuple[Outcome, ...]


def _by_task(outcomes: Iterable[Outcome]) -> dict[str, _Arm]:
    grouped: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        grouped.setdefault(outcome.task, []).append(outcome)
    arms: dict[str, _Arm] = {}
    for task, runs in grouped.items():
        costs = [r.cost_usd for r in runs]
        known = [c for c in costs if c is not None]
        arms[task] = _Arm(
            p=sum(1 for r in runs if r.solved is True) / len(runs),
            time_s=sum(r.time_s for r in runs) / len(runs),
            cost_usd=sum(known) / len(known) if len(known) == len(costs) else None,
            runs=tuple(runs),
        )
    return arms


def _expected(tries: Sequence[_Arm]) -> tuple[float, float | None, float]:
    """Expected (time, cost, success) of trying `tries` in order until one solves."""
    reach, time_s, success = 1.0, 0.0, 0.0
    cost: float | None = 0.0
    for arm in tries:
        time_s += reach * arm.time_s
        cost = None if cost is None or arm.cost_usd is None else cost + reach * arm.cost_usd
        success += reach * arm.p
        reach *= 1.0 - arm.p
    return time_s, cost, success


def _within(tries: Sequence[_Arm], deadline: float) -> float | None:
    """Probability the tries solve the task within `deadline` seconds in total (each try
    one of its arm's runs, equally likely); None when there are too many paths."""
    paths = math.prod(len(arm.runs) for arm in tries)
    if paths > MAX_DEADLINE_PATHS:
        return None

    def walk(index: int, spent: float) -> float:
        if index == len(tries):
            return 0.0
        runs = tries[index].runs
        total = 0.0
        for run in runs:
            at = spent + run.time_s
            if at > deadline:
                continue
            total += 1.0 if run.solved is True else walk(index + 1, at)
        return total / len(runs)

    return walk(0, 0.0)


def _pareto(rows: list[PolicyRow]) -> list[PolicyRow]:
    """Rows with `pareto` set: minimise time and cost, maximise success (an unknown cost
    compares on time and success alone)."""

    def no_worse(a: PolicyRow, b: PolicyRow) -> bool:
        cost_ok = a.cost_usd is None or b.cost_usd is None or a.cost_usd <= b.cost_usd + 1e-12
        return a.time_s <= b.time_s + 1e-9 and cost_ok and a.success >= b.success - 1e-9

    def better(a: PolicyRow, b: PolicyRow) -> bool:
        cheaper = a.cost_usd is not None and b.cost_usd is not None and a.cost_usd < b.cost_usd
        return a.time_s < b.time_s - 1e-9 or cheaper or a.success > b.success + 1e-9

    out = []
    for row in rows:
        dominated = any(no_worse(o, row) and better(o, row) for o in rows if o is not row)
        out.append(replace(row, pareto=not dominated))
    return out


def _row(
    name: str,
    tries: tuple[str, ...],
    arms: dict[str, dict[str, _Arm]],
    tasks: list[str],
    deadline: float | None,
) -> PolicyRow:
    times, costs, wins, within = [], [], [], []
    for task in tasks:
        sequence = [arms[letter][task] for letter in tries]
        time_s, cost, success = _expected(sequence)
        times.append(time_s)
        costs.append(cost)
        wins.append(success)
        if deadline is not None:
            within.append(_within(sequence, deadline))
    n = len(tasks)
    time_total, solved = sum(times), sum(wins)
    cost_total = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    under = (
        None
        if deadline is None or any(w is None for w in within)
        else sum(w or 0.0 for w in within)
    )
    return PolicyRow(
        name=name,
        tries=tries,
        time_s=time_total / n,
        cost_usd=None if cost_total is None else cost_total / n,
        success=solved / n,
        time_per_solved_s=time_total / solved if solved > 0 else None,
        cost_per_solved_usd=cost_total / solved if solved > 0 and cost_total is not None else None,
        under_deadline=None if under is None else under / n,
    )


def choose(
    a: Sequence[Outcome],
    b: Sequence[Outcome],
    *,
    labels: tuple[str, str] = ("A", "B"),
    tries: int = 3,
    deadline_s: float | None = None,
) -> Choice:
    """The policy table of arms `a` and `b` on their paired tasks (see the module doc).

    Args:
        a: every run of arm A (one or more per task).
        b: every run of arm B.
        labels: the arms' names for people (`small-fast`, `big-slow`).
        tries: k, the most tries of a retrying policy (1..10).
        deadline_s: a deadline for `PolicyRow.under_deadline` (None: none).

    Raises:
        ValueError: no task run by both arms, `tries` outside 1..10, a deadline <= 0.
    """
    if not 1 <= tries <= 10:
        raise ValueError(f"tries must be 1..10, got {tries}")
    if deadline_s is not None and deadline_s <= 0:
        raise ValueError(f"the deadline must be > 0 s, got {deadline_s}")
    arms = {"A": _by_task(a), "B": _by_task(b)}
    tasks = sorted(set(arms["A"]) & set(arms["B"]))
    if not tasks:
        raise ValueError(f"no task was run by both {labels[0]} and {labels[1]}")
    unpaired = sorted(set(arms["A"]) ^ set(arms["B"]))
    rows = [_row(name, seq, arms, tasks, deadline_s) for name, seq in policies(tries)]
    k_name = f" x {tries}" if tries > 1 else " only"
    b_row = next(r for r in rows if r.tries == ("B",) * tries)
    paired = [o for o in a if o.task in tasks]
    rate, note = break_even_rate(paired, b_row, tries, labels, k_name)
    notes = [
        "tries are independent draws of a task's own runs: with one run per task a retry "
        "of the same arm repeats its outcome",
        "a run whose success is unknown counts as not solved",
        "failed tries' time and cost are counted",
    ]
    return Choice(
        arms={"A": labels[0], "B": labels[1]},
        tasks=tasks,
        unpaired=unpaired,
        rows=_pareto(rows),
        tries=tries,
        deadline_s=deadline_s,
        break_even_tps=rate,
        break_even_note=note,
        notes=notes,
    )


def break_even_rate(
    a: Sequence[Outcome],
    b_row: PolicyRow,
    tries: int,
    labels: tuple[str, str] = ("A", "B"),
    k_name: str = " only",
) -> tuple[float | None, str]:
    """A's decode rate at which A's time to a solved task (k tries) equals B's (`b_row`).

    A's runs are re-timed at rate r (decode time x rate / r, the rest kept); the success
    per task does not change. Time to a solved task is `fixed + decode x rate / r` over
    the expected solved tasks, so r = decode x rate / (B's time - fixed).

    Returns:
        (rate or None, the answer in words).
    """
    name_a, name_b = labels
    rates = {o.decode_tps for o in a}
    if None in rates or len(rates) != 1:
        return None, f"{name_a}'s decode rate is unknown or not one rate: no re-timing"
    rate = float(next(iter(rates)))  # type: ignore[arg-type]  # None excluded above
    arms = _by_task(a)
    fixed = decode = solved = 0.0
    for arm in arms.values():
        reach_sum = sum((1.0 - arm.p) ** i for i in range(tries))
        n = len(arm.runs)
        decode += reach_sum * sum(r.decode_s for r in arm.runs) / n
        fixed += reach_sum * sum(r.time_s - r.decode_s for r in arm.runs) / n
        solved += 1.0 - (1.0 - arm.p) ** tries
    target = b_row.time_per_solved_s
    if solved <= 0 or target is None:
        return None, f"{name_a} or {name_b} solves nothing: no break-even rate"
    floor = fixed / solved
    if floor >= target:
        return None, (
            f"no decode rate makes {name_a}{k_name} reach a solved task as fast as "
            f"{name_b}{k_name}: even with instant decoding it takes {floor:.1f} s per solved "
            f"task against {target:.1f} s"
        )
    needed = (decode / solved) * rate / (target - floor)
    side = "beats" if needed <= rate else "would beat"
    return needed, (
        f"{name_a}{k_name} {side} {name_b}{k_name} on time to a solved task above "
        f"{needed:,.0f} tok/s ({name_a} runs at {rate:,.0f} tok/s)"
    )
