"""The bottom line: one sentence per comparison group (agent, task set, clock).

"For coding on coding (wall clock): at 750 tok/s a task takes 4.1 s instead of 9.8 s
(2.4x, 95% CI 1.9-3.1), solves 5 of 5 instead of 5 of 5; after the change, tool time
dominates (61% of task time)."

`bottom_lines(records, deadline_s)` builds one `BottomLine` per key of
`report/data/pairing.py`, comparing the key's slowest arm (the reference) with its fastest
over the tasks both ran; `BottomLine.text` is the one rendering, used by `looplab run`'s
summary, `looplab report` (console and HTML, before the claim panel) and the dashboard.

Which runs: the time figure uses the runs that did not fail (`RunRecord.outcome`: a stop,
a non-zero exit or a failed verdict is failed) and says how many failed runs it left out
and how many of its runs have no verdict; a failed or crashed run never feeds a speedup.
Success: each arm's solved runs of those with a verdict (`views/success.py`), $ per solved
task. Deadline: the user's (`looplab report --deadline`, an experiment's `deadline_s`)
wins, "under your 2-minute deadline solves 75% instead of 100%"; without one, a cap picked
from the reference median (`cap_minutes`). The share is of runs solved within it; when no
run has a verdict it says success is unknown, never "0% instead of 0%".

Two models (`pairing` rule 5): the arms' models differ, so the sentence is a model
comparison, each arm's success, time and money side by side ("small-fast (fast-750)
solves 3 of 4 in 12 s for $0.0044 a task ($0.0059 per solved task); big-slow (slow-80) 4
of 4 in 36 s for $0.046 ..."), never an "at 750 tok/s a task takes" decode-rate headline.

The speedup and its CI are `views.speedup.paired_speedup` (cells paired across arms,
failed runs left out; the claim panel's live rows too: one CI rule, `ci_words`): where n
is too small for a CI it says so and still gives the point estimate; a group with one
profile, no paired task or no time says so in words (never NaN). Money: the median $ per
task at each profile's price entry (`views.cost.cost_figure`, as the money section; left
out when a profile is unpriced). With sub-agents, task time is the critical path and
total work is said beside it (`work_fast_s`), never as a share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from looplab.report.data.pairing import (
    ComparisonKey,
    arm_model,
    by_profile,
    comparison_groups,
    models_differ,
)
from looplab.report.data.records import RunRecord
from looplab.report.views.cost import cost_figure
from looplab.report.views.speedup import ci_words, paired_speedup
from looplab.report.views.success import ArmSuccess, arm_success
from looplab.stats.intervals import median

__all__ = [
    "CAP_LADDER_MIN",
    "BottomLine",
    "bottom_line",
    "bottom_lines",
    "cap_minutes",
    "picked_caps",
]

CAP_LADDER_MIN = (0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 90, 120, 240, 480)
"""Caps (minutes) the bottom line quotes: the largest one below the reference profile's
median task time, so the slow profile finishes under half its runs within it and the cap
shows what the faster profile buys (a chosen convention; the report's success-under-cap
chart shows every cap)."""

_PARTS = {"model_s": "model time", "tool_s": "tool time", "overhead_s": "harness overhead"}


@dataclass
class BottomLine:
    """One comparison group's answer (see the module docstring)."""

    key: ComparisonKey
    label: str
    """The group it stands for (`ComparisonKey.label`)."""
    slow: str = ""
    """The reference profile (slowest decode rate)."""
    fast: str = ""
    """The compared profile (fastest decode rate)."""
    fast_tps: float | None = None
    slow_s: float | None = None
    """Median task time at `slow` over the paired tasks (runs not failed)."""
    fast_s: float | None = None
    speedup: float | None = None
    ci: tuple[float, float] | None = None
    paired_tasks: int = 0
    runs: int = 0
    """Runs the time figure rests on (both profiles; failed runs left out)."""
    failed_left_out: int = 0
    """Failed runs (a stop, a non-zero exit, a failed verdict) left out of the time figure."""
    unknown: int = 0
    """Runs in the time figure whose outcome is unknown (no verdict)."""
    dominant: str | None = None
    """The part of task time that dominates at `fast` (`tool time`, `model time`, ...)."""
    dominant_share: float | None = None
    missing: str | None = None
    """Why there is no figure (one profile, no paired task, no time), in words."""
    cost_slow: float | None = None
    """$ per task at `slow` (optional: rendered only when both costs are set)."""
    cost_fast: float | None = None
    cap_minutes: float | None = None
    """A task time cap or the user's deadline (optional: rendered with `finish_*`)."""
    deadline_yours: bool = False
    """True: `cap_minutes` is the user's deadline; False: picked from the slow median."""
    finish_slow: float | None = None
    """Share of runs solved within the cap at `slow` (0..1; None: no verdict)."""
    finish_fast: float | None = None
    slow_model: str | None = None
    fast_model: str | None = None
    model_comparison: bool = False
    """The two arms ran different models: a model comparison (`pairing` rule 5), never a
    decode-rate change; `text` then gives each arm's success, time and money."""
    success_slow: ArmSuccess | None = None
    """The reference arm's success-aware figures (`views/success.py`)."""
    success_fast: ArmSuccess | None = None
    work_fast_s: float | None = None
    """Runs with sub-agents at `fast`: median total work (every agent's own time summed
    over parallel branches); said beside the critical-path shares, never one of them."""

    @property
    def text(self) -> str:
        """The sentence."""
        head = f"For {self.label}: "
        if self.model_comparison and self.success_slow and self.success_fast:
            return head + self._models_text(self.success_fast, self.success_slow)
        if self.missing is not None or self.speedup is None:
            return head + (self.missing or "no figure.")
        rate = f"{self.fast_tps:g} tok/s" if self.fast_tps else self.fast
        ci = ci_words(self.paired_tasks, self.ci)
        text = (
            f"{head}at {rate} ({self.fast}) a task takes {self.fast_s:.2f} s instead of "
            f"{self.slow_s:.2f} s at {self.slow} ({self.speedup:.2f}x, {ci}{self._basis()})"
        )
        if self.cost_slow is not None and self.cost_fast is not None:
            text += f", costs ${self.cost_fast:.4g} instead of ${self.cost_slow:.4g}"
        text += self._solved_text()
        if self.cap_minutes is not None:
            text += self._deadline_text()
        if self.dominant:
            text += f"; after the change, {self.dominant} dominates"
            text += f" ({self.dominant_share:.0%} of task time)" if self.dominant_share else ""
        if self.work_fast_s is not None:
            text += (
                f"; with sub-agents, task time is the critical path (total work over parallel "
                f"branches: {self.work_fast_s:.2f} s)"
            )
        return text + "."

    def _basis(self) -> str:
        """Which runs the time figure uses: failed ones left out, unknown ones said."""
        parts = []
        if self.failed_left_out:
            parts.append(f"{_runs(self.failed_left_out)} failed, left out")
        if self.unknown:
            parts.append(f"{self.unknown} of {_runs(self.runs)} of unknown outcome")
        return "; " + ", ".join(parts) if parts else ""

    def _solved_text(self) -> str:
        """`, solves 3 of 4 instead of 4 of 4 ($0.01 per solved task instead of $0.02)`."""
        fast, slow = self.success_fast, self.success_slow
        if fast is None or slow is None or not (fast.verdicts_known or slow.verdicts_known):
            return ""
        text = f", solves {_of(fast)} instead of {_of(slow)}"
        all_solved = fast.solved == fast.runs and slow.solved == slow.runs
        if not all_solved and fast.cost_per_solved and slow.cost_per_solved:
            # all runs' money over the solved runs: a mean, unlike the median $ a task above
            text += (
                f" (${fast.cost_per_solved:.4g} per solved task instead of "
                f"${slow.cost_per_solved:.4g}, every run's cost counted)"
            )
        return text

    def _deadline_text(self) -> str:
        """`, and under your 2-minute deadline solves 75% instead of 100%`, or that success
        is unknown (never `0% instead of 0%` for runs without a verdict)."""
        what = (
            f"your {self.cap_minutes:g}-minute deadline"
            if self.deadline_yours
            else f"a {self.cap_minutes:g}-minute cap"
        )
        if self.finish_slow is None or self.finish_fast is None:
            return f", and under {what} success is unknown (no verdict recorded)"
        return f", and under {what} solves {self.finish_fast:.0%} instead of {self.finish_slow:.0%}"

    def _models_text(self, fast: ArmSuccess, slow: ArmSuccess) -> str:
        """Two models: each arm's success, time and money, never a decode-rate change."""
        text = (
            f"two models, compared as models (not one model at two speeds): "
            f"{_arm_text(fast, first=True)}; {_arm_text(slow, first=False)}"
        )
        if fast.time_to_solved_s is not None and slow.time_to_solved_s is not None:
            text += (
                f"; with up to {fast.retries} tries a solved task takes "
                f"{fast.time_to_solved_s:.3g} s vs {slow.time_to_solved_s:.3g} s"
            )
        if self.cap_minutes is not None:
            what = (
                f"your {self.cap_minutes:g}-minute deadline"
                if self.deadline_yours
                else f"a {self.cap_minutes:g}-minute cap"
            )
            if self.finish_slow is None or self.finish_fast is None:
                text += f"; under {what} success is unknown (no verdict recorded)"
            else:
                text += f"; under {what} {self.finish_fast:.0%} vs {self.finish_slow:.0%}"
        return text + "."


def _of(arm: ArmSuccess) -> str:
    """`3 of 4` (runs with a verdict), `unknown` when none has one."""
    if not arm.verdicts_known:
        return "unknown"
    unknown = f" ({arm.unknown} unknown)" if arm.unknown else ""
    return f"{arm.solved} of {arm.solved + arm.failed}{unknown}"


def _arm_text(arm: ArmSuccess, *, first: bool) -> str:
    """`small-fast (fast-750) solves 3 of 4 in 12 s for $0.0044 a task ($0.0059 per solved
    task)`; the second arm without the verb."""
    name = f"{arm.model or '?'} ({arm.profile})"
    solves = "solves " if first else ""
    judged = f"{solves}{_of(arm)}" if arm.verdicts_known else "(success unknown)"
    text = f"{name} {judged} in {arm.task_s:.3g} s"
    if arm.cost_per_task is not None:
        text += f" for ${arm.cost_per_task:.2g} a task"
        if arm.cost_per_solved is not None:
            text += f" (${arm.cost_per_solved:.2g} per solved task)"
    return text


def bottom_lines(records: Sequence[RunRecord], deadline_s: float | None = None) -> list[BottomLine]:
    """One bottom line per comparison group in `records` (keys sorted); `deadline_s`: the
    user's deadline (None: a cap picked from each group's reference median)."""
    return [bottom_line(key, runs, deadline_s) for key, runs in comparison_groups(records).items()]


def bottom_line(
    key: ComparisonKey, runs: Sequence[RunRecord], deadline_s: float | None = None
) -> BottomLine:
    """The bottom line of one comparison group (its runs share `key`).

    Raises:
        ValueError: the runs span two keys (`pairing.pooled_key`).
    """
    line = BottomLine(key=key, label=key.label)
    profiles = by_profile(runs)
    if len(profiles) < 2:
        only = next(iter(profiles), "?")
        times = [r.task_s for r in runs]
        line.missing = (
            f"only one profile ({only}: {_runs(len(times))}, median task "
            f"{median(times):.2f} s); run it at a second profile to compare."
        )
        return line
    labels = list(profiles)
    slow_runs, fast_runs = profiles[labels[0]], profiles[labels[-1]]
    line.slow, line.fast = slow_runs[0].profile, fast_runs[0].profile
    if line.slow == line.fast:  # variants of one profile: their full labels
        line.slow, line.fast = labels[0], labels[-1]
    line.fast_tps = fast_runs[0].decode_tps
    line.slow_model, line.fast_model = arm_model(slow_runs), arm_model(fast_runs)
    line.model_comparison = models_differ(slow_runs, fast_runs)
    _success(line, slow_runs, fast_runs, deadline_s)
    paired = paired_speedup(slow_runs, fast_runs)
    if paired.slow_s is None:
        line.missing = (
            f"no task has usable (not failed) runs at both {line.slow} and {line.fast}; "
            "nothing to compare."
        )
        return line
    line.slow_s, line.fast_s = paired.slow_s, paired.fast_s
    line.paired_tasks, line.runs = paired.n, paired.runs
    line.failed_left_out = sum(1 for r in (*slow_runs, *fast_runs) if r.outcome == "failed")
    line.unknown = sum(1 for r in (*paired.slow_runs, *paired.fast_runs) if r.outcome == "unknown")
    if paired.speedup is None:
        line.missing = f"no measured task time at {line.fast}; nothing to compare."
        return line
    line.speedup, line.ci = paired.speedup, paired.ci
    line.dominant, line.dominant_share = _dominant(fast_runs)
    work = [r.work_s for r in fast_runs if r.work_s is not None]
    line.work_fast_s = median(work) if work else None
    line.cost_slow, line.cost_fast = cost_figure(slow_runs).usd, cost_figure(fast_runs).usd
    if line.cap_minutes is None:
        line.cap_minutes = cap_minutes(line.slow_s)
        line.finish_slow = _solved_within(slow_runs, 60 * line.cap_minutes)
        line.finish_fast = _solved_within(fast_runs, 60 * line.cap_minutes)
    return line


def _success(
    line: BottomLine,
    slow_runs: Sequence[RunRecord],
    fast_runs: Sequence[RunRecord],
    deadline_s: float | None,
) -> None:
    """Each arm's success figures on the tasks both ran (`views/success.py`), and the
    user's deadline's shares when one is given."""
    paired = {r.task for r in slow_runs} & {r.task for r in fast_runs}
    if not paired:
        return
    slow = [r for r in slow_runs if r.task in paired]
    fast = [r for r in fast_runs if r.task in paired]
    line.success_slow = arm_success(line.key, line.slow, slow, deadline_s)
    line.success_fast = arm_success(line.key, line.fast, fast, deadline_s)
    if deadline_s is not None:
        line.cap_minutes, line.deadline_yours = deadline_s / 60, True
        line.finish_slow = _solved_within(slow, deadline_s)
        line.finish_fast = _solved_within(fast, deadline_s)


def picked_caps(lines: Sequence[BottomLine]) -> dict[ComparisonKey, float]:
    """Each line's picked cap in seconds, by key (lines under the user's deadline, or
    without a cap, left out): what the success view judges each group under."""
    return {
        line.key: 60 * line.cap_minutes
        for line in lines
        if line.cap_minutes is not None and not line.deadline_yours
    }


def cap_minutes(reference_s: float) -> float:
    """The cap the bottom line quotes for a reference median task time (`CAP_LADDER_MIN`:
    the largest below it; the smallest when the median is under every cap)."""
    below = [m for m in CAP_LADDER_MIN if 60 * m < reference_s]
    return below[-1] if below else CAP_LADDER_MIN[0]


def _solved_within(runs: Sequence[RunRecord], cap_s: float) -> float | None:
    """Share of the runs solved within `cap_s` (None: no run has a verdict, so success
    under the cap is unknown, never 0%)."""
    if not runs or all(r.outcome == "unknown" for r in runs):
        return None
    return sum(1 for r in runs if r.outcome == "solved" and r.task_s <= cap_s) / len(runs)


def _runs(n: int) -> str:
    return f"{n} run{'s' if n != 1 else ''}"


def _dominant(runs: Sequence[RunRecord]) -> tuple[str | None, float | None]:
    """The largest part of the runs' summed task time, and its share."""
    total = sum(r.task_s for r in runs)
    if total <= 0:
        return None, None
    sums = {name: sum(float(getattr(r, attr)) for r in runs) for attr, name in _PARTS.items()}
    name = max(sums, key=lambda n: sums[n])
    return name, sums[name] / total
