"""Success-aware answers per arm (agent, model, profile), on tasks paired across arms.

Time without success is the wrong answer when the arms can fail differently (a small fast
model against a large slow one). Per comparison key (`report/data/pairing.py`) the arms
are its groups (a model at a profile); the figures use only the tasks every arm ran
(`paired tasks`), so a hard task one arm skipped cannot flatter it. A run's outcome is
`looplab.analysis.outcomes`: solved, failed (a stop, a non-zero exit, a failed verdict) or
unknown (no verdict). Unknown runs are counted and said, never solved.

Per arm:

- success rate = solved / runs with a verdict, with its Wilson 95% interval
  (`stats/proportions.py`); None when no run has a verdict;
- time a task = median task time over all its runs (solved or not: the time an attempt
  takes); $ a task = the mean cost per run at the profile's price entry; $ per solved task
  = the runs' summed cost / solved runs (failed attempts' money counted);
- expected time (and $) to a solved task with up to `RETRIES` tries: per task, a try
  solves with the task's own solved share p in these runs (its difficulty, paired), a
  solved try takes the task's mean solved time, a failed one its mean failed time; the
  expected time spent over at most k tries, summed over tasks, divided by the expected
  tasks solved (`1 - (1 - p)^k` each). A task never solved here is never solved on
  retry (one run a task makes p 0 or 1: all-or-nothing, said by `runs_per_task`);
- success under the deadline: the share of runs solved within it (unknown runs count as
  not solved and are said); the area under success vs time budget from 0 to the
  deadline (SWE-Effi's measure), `mean over solved runs within it of (1 - t / deadline)`
  over all runs: 1.0 = every run solved instantly;
- over repetitions (tasks with two or more runs): always solved, mean, ever solved
  (WolfBench's three), as shares of those tasks.

The deadline: the user's (`looplab report --deadline 2m`, an experiment's `deadline_s`)
wins; without one the bottom line's cap picked from the reference median
(`bottom_line.cap_minutes`), labelled as picked.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from looplab.analysis.cost import price_of, trace_cost
from looplab.errors import LooplabError
from looplab.report.data.pairing import ComparisonKey, arm_model, by_profile, comparison_groups
from looplab.report.data.records import RunRecord
from looplab.stats.order import median
from looplab.stats.proportions import wilson

__all__ = ["RETRIES", "ArmSuccess", "SuccessView", "arm_success", "success_view"]

RETRIES = 3
"""Tries the expected time to a solved task allows (a chosen convention: a person or a
harness retrying a failed task twice)."""


@dataclass(frozen=True)
class ArmSuccess:
    """One arm's success-aware figures over the paired tasks (module doc)."""

    key: ComparisonKey
    arm: str
    """The group label (`big-slow · slow-80`, `fast-750`)."""
    model: str | None
    profile: str
    decode_tps: float | None
    tasks: int
    """Paired tasks the figures use."""
    runs: int
    solved: int
    failed: int
    unknown: int
    rate: float | None
    """solved / (solved + failed); None: no verdict."""
    interval: tuple[float, float] | None
    """Wilson 95% interval of `rate`."""
    task_s: float
    """Median task time over every run (an attempt's time)."""
    cost_per_task: float | None
    """Mean $ per run (None: no price entry or no priced call)."""
    cost_per_solved: float | None
    """Summed $ / solved runs (None: none solved, or no cost)."""
    time_to_solved_s: float | None
    """Expected seconds per solved task with up to `retries` tries (None: none solvable)."""
    cost_to_solved: float | None
    """Expected $ per solved task with up to `retries` tries."""
    retries: int
    deadline_s: float | None
    under_deadline: float | None
    """Share of runs solved within the deadline (None: no verdict, or no deadline)."""
    auc: float | None
    """Area under success vs time budget, 0..deadline, normalised to 0..1."""
    runs_per_task: float
    """Mean runs per paired task (1: retries are all-or-nothing)."""
    always: float | None = None
    """Tasks with repetitions: share always solved (None: no task has two runs)."""
    mean: float | None = None
    """Their mean solved share."""
    ever: float | None = None
    """Their share solved at least once."""
    verdicts: dict[str, int] = field(default_factory=dict)
    """Who decided (`verdict_by` -> runs)."""

    @property
    def verdicts_known(self) -> bool:
        """Whether any run has a verdict."""
        return self.solved + self.failed > 0


@dataclass
class SuccessView:
    """Every arm's figures, per comparison key (keys sorted, arms slowest first)."""

    arms: list[ArmSuccess]
    deadline_s: float | None
    """The user's deadline (None: each arm's `deadline_s` is its group's picked cap)."""
    deadline_yours: bool
    """True: the user's deadline; False: picked by the tool per group (or none)."""
    notes: list[str] = field(default_factory=list)


def success_view(
    records: Sequence[RunRecord],
    deadline_s: float | None,
    *,
    picked: Mapping[ComparisonKey, float] | None = None,
) -> SuccessView:
    """Every comparison key's arms on their paired tasks (module doc), under the user's
    `deadline_s`, else each key's `picked` cap (seconds; the bottom line's)."""
    arms: list[ArmSuccess] = []
    notes: list[str] = []
    for key, runs in comparison_groups(records).items():
        profiles = by_profile(runs)
        paired = set.intersection(*({r.task for r in arm} for arm in profiles.values()))
        if len(profiles) > 1 and not paired:
            notes.append(f"{key.label}: no task ran in every arm; nothing paired")
            continue
        for label, arm in profiles.items():
            mine = [r for r in arm if r.task in paired]
            cap = deadline_s if deadline_s is not None else (picked or {}).get(key)
            arms.append(arm_success(key, label, mine, cap))
    yours = deadline_s is not None
    return SuccessView(arms=arms, deadline_s=deadline_s, deadline_yours=yours, notes=notes)


def arm_success(
    key: ComparisonKey, label: str, runs: Sequence[RunRecord], deadline_s: float | None
) -> ArmSuccess:
    """One arm's figures over `runs` (already restricted to the paired tasks)."""
    outcomes = [r.outcome for r in runs]
    solved, failed = outcomes.count("solved"), outcomes.count("failed")
    judged = solved + failed
    costs = _costs(runs)
    by_task: dict[str, list[RunRecord]] = defaultdict(list)
    for run in runs:
        by_task[run.task].append(run)
    total_cost = sum(costs.values()) if len(costs) == len(runs) and costs else None
    retry_time, retry_cost = _expected_to_solved(by_task, costs, RETRIES)
    verdicts: dict[str, int] = defaultdict(int)
    for run in runs:
        verdicts[run.verdict_by or "none"] += 1
    always, mean, ever = _repetitions(by_task)
    return ArmSuccess(
        key=key,
        arm=label,
        model=arm_model(runs),
        profile=runs[0].profile if runs else label,
        decode_tps=runs[0].decode_tps if runs else None,
        tasks=len(by_task),
        runs=len(runs),
        solved=solved,
        failed=failed,
        unknown=len(runs) - judged,
        rate=solved / judged if judged else None,
        interval=wilson(solved, judged),
        task_s=median([r.task_s for r in runs]),
        cost_per_task=total_cost / len(runs) if total_cost is not None else None,
        cost_per_solved=total_cost / solved if total_cost is not None and solved else None,
        time_to_solved_s=retry_time,
        cost_to_solved=retry_cost,
        retries=RETRIES,
        deadline_s=deadline_s,
        under_deadline=_under(runs, deadline_s) if judged else None,
        auc=_auc(runs, deadline_s) if judged else None,
        runs_per_task=len(runs) / len(by_task) if by_task else 0.0,
        always=always,
        mean=mean,
        ever=ever,
        verdicts=dict(verdicts),
    )


def _costs(runs: Sequence[RunRecord]) -> dict[str, float]:
    """$ per run id at its profile's price entry (runs without a price or a priced call
    left out)."""
    out: dict[str, float] = {}
    for run in runs:
        try:
            price = price_of(run.profile_spec)
        except LooplabError:
            price = None
        if price is None or run.trace is None:
            continue
        cost = trace_cost(run.trace, price)
        if cost.priced_calls:
            out[run.run_id] = cost.total_usd
    return out


def _expected_to_solved(
    by_task: dict[str, list[RunRecord]], costs: dict[str, float], tries: int
) -> tuple[float | None, float | None]:
    """Expected time and $ per solved task with up to `tries` tries (module doc); runs of
    unknown outcome are left out of p and of the times."""
    spent_s = spent_usd = solved = 0.0
    priced = True
    for runs in by_task.values():
        judged = [r for r in runs if r.outcome != "unknown"]
        if not judged:
            continue
        wins = [r for r in judged if r.outcome == "solved"]
        losses = [r for r in judged if r.outcome == "failed"]
        p = len(wins) / len(judged)
        attempt_s = p * _mean([r.task_s for r in wins]) + (1 - p) * _mean(
            [r.task_s for r in losses]
        )
        if all(r.run_id in costs for r in judged):
            attempt_usd = p * _mean([costs[r.run_id] for r in wins]) + (1 - p) * _mean(
                [costs[r.run_id] for r in losses]
            )
        else:
            priced, attempt_usd = False, 0.0
        expected_tries = sum((1 - p) ** i for i in range(tries))
        spent_s += attempt_s * expected_tries
        spent_usd += attempt_usd * expected_tries
        solved += 1 - (1 - p) ** tries
    if solved <= 0:
        return None, None
    return spent_s / solved, (spent_usd / solved if priced else None)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _under(runs: Sequence[RunRecord], deadline_s: float | None) -> float | None:
    """Share of runs solved within the deadline."""
    if deadline_s is None or not runs:
        return None
    return sum(1 for r in runs if r.outcome == "solved" and r.task_s <= deadline_s) / len(runs)


def _auc(runs: Sequence[RunRecord], deadline_s: float | None) -> float | None:
    """Area under the share solved within t, t from 0 to the deadline, over the deadline."""
    if deadline_s is None or deadline_s <= 0 or not runs:
        return None
    area = sum(
        1 - r.task_s / deadline_s for r in runs if r.outcome == "solved" and r.task_s <= deadline_s
    )
    return area / len(runs)


def _repetitions(
    by_task: dict[str, list[RunRecord]],
) -> tuple[float | None, float | None, float | None]:
    """Over tasks with two or more judged runs: always solved, mean, ever solved."""
    shares = []
    for runs in by_task.values():
        judged = [r.outcome == "solved" for r in runs if r.outcome != "unknown"]
        if len(judged) >= 2:
            shares.append(sum(judged) / len(judged))
    if not shares:
        return None, None, None
    n = len(shares)
    return (
        sum(1 for s in shares if s == 1.0) / n,
        sum(shares) / n,
        sum(1 for s in shares if s > 0) / n,
    )
