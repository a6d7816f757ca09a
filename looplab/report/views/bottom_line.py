"""The bottom line: one sentence per comparison group (agent, task set, clock).

"For coding on coding (wall clock): at 750 tok/s a task takes 4.1 s instead of 9.8 s
(2.4x, 95% CI 1.9-3.1); after the change, tool time dominates (61% of task time)."

`bottom_lines(records)` builds one `BottomLine` per key of `report/data/pairing.py`,
comparing the key's slowest profile (the reference) with its fastest over the tasks both
ran (runs not known to be unsolved); `BottomLine.text` is the one rendering, used by
`looplab run`'s summary, `looplab report` (console and HTML, before the claim panel) and
the dashboard. Where n is too small for a CI it says so and still gives the point
estimate; a group with one profile, no paired task or no time says so in words (never
NaN). Money: the median $ per task at each profile's price entry (`views.cost.cost_figure`,
as the money section; left out when a profile is unpriced). The speedup and its CI are
`views.speedup.paired_speedup` (the claim panel's live rows too: one CI rule).
Deadlines: the share of each profile's runs finishing under one cap (`cap_minutes`,
`looplab.analysis.caps`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from looplab.analysis.caps import STOP_REASONS, share_under_cap
from looplab.report.data.pairing import ComparisonKey, by_profile, comparison_groups
from looplab.report.data.records import RunRecord
from looplab.report.views.cost import cost_figure
from looplab.report.views.speedup import ci_words, paired_speedup
from looplab.stats.intervals import median

__all__ = ["CAP_LADDER_MIN", "BottomLine", "bottom_line", "bottom_lines", "cap_minutes"]

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
    """Median task time at `slow` over the paired tasks."""
    fast_s: float | None = None
    speedup: float | None = None
    ci: tuple[float, float] | None = None
    paired_tasks: int = 0
    runs: int = 0
    """Runs the figure rests on (both profiles)."""
    dominant: str | None = None
    """The part of task time that dominates at `fast` (`tool time`, `model time`, ...)."""
    dominant_share: float | None = None
    missing: str | None = None
    """Why there is no figure (one profile, no paired task, no time), in words."""
    cost_slow: float | None = None
    """$ per task at `slow` (optional: rendered only when both costs are set)."""
    cost_fast: float | None = None
    cap_minutes: float | None = None
    """A task time cap (optional: rendered with `finish_*`)."""
    finish_slow: float | None = None
    """Share of runs finishing within the cap at `slow` (0..1)."""
    finish_fast: float | None = None
    work_fast_s: float | None = None
    """Runs with sub-agents at `fast`: median total work (every agent's own time summed
    over parallel branches); said beside the critical-path shares, never one of them."""

    @property
    def text(self) -> str:
        """The sentence."""
        head = f"For {self.label}: "
        if self.missing is not None or self.speedup is None:
            return head + (self.missing or "no figure.")
        rate = f"{self.fast_tps:g} tok/s" if self.fast_tps else self.fast
        text = (
            f"{head}at {rate} ({self.fast}) a task takes {self.fast_s:.2f} s instead of "
            f"{self.slow_s:.2f} s at {self.slow} "
            f"({self.speedup:.2f}x, {ci_words(self.paired_tasks, self.ci)})"
        )
        if self.cost_slow is not None and self.cost_fast is not None:
            text += f", costs ${self.cost_fast:.4g} instead of ${self.cost_slow:.4g}"
        if self.cap_minutes is not None and None not in (self.finish_slow, self.finish_fast):
            text += (
                f", and under a {self.cap_minutes:g}-minute cap finishes "
                f"{self.finish_fast:.0%} instead of {self.finish_slow:.0%}"
            )
        if self.dominant:
            text += f"; after the change, {self.dominant} dominates"
            text += f" ({self.dominant_share:.0%} of task time)" if self.dominant_share else ""
        if self.work_fast_s is not None:
            text += (
                f"; with sub-agents, task time is the critical path (total work over parallel "
                f"branches: {self.work_fast_s:.2f} s)"
            )
        return text + "."


def bottom_lines(records: Sequence[RunRecord]) -> list[BottomLine]:
    """One bottom line per comparison group in `records` (keys sorted)."""
    return [bottom_line(key, runs) for key, runs in comparison_groups(records).items()]


def bottom_line(key: ComparisonKey, runs: Sequence[RunRecord]) -> BottomLine:
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
    paired = paired_speedup(slow_runs, fast_runs)
    if paired.slow_s is None:
        line.missing = (
            f"no task has usable (not unsolved) runs at both {line.slow} and {line.fast}; "
            "nothing to compare."
        )
        return line
    line.slow_s, line.fast_s = paired.slow_s, paired.fast_s
    line.paired_tasks, line.runs = paired.n, paired.runs
    if paired.speedup is None:
        line.missing = f"no measured task time at {line.fast}; nothing to compare."
        return line
    line.speedup, line.ci = paired.speedup, paired.ci
    line.dominant, line.dominant_share = _dominant(fast_runs)
    work = [r.work_s for r in fast_runs if r.work_s is not None]
    line.work_fast_s = median(work) if work else None
    line.cost_slow, line.cost_fast = cost_figure(slow_runs).usd, cost_figure(fast_runs).usd
    line.cap_minutes = cap_minutes(line.slow_s)
    line.finish_slow = share_under_cap(_finish_times(slow_runs), 60 * line.cap_minutes)
    line.finish_fast = share_under_cap(_finish_times(fast_runs), 60 * line.cap_minutes)
    return line


def cap_minutes(reference_s: float) -> float:
    """The cap the bottom line quotes for a reference median task time (`CAP_LADDER_MIN`:
    the largest below it; the smallest when the median is under every cap)."""
    below = [m for m in CAP_LADDER_MIN if 60 * m < reference_s]
    return below[-1] if below else CAP_LADDER_MIN[0]


def _finish_times(runs: Sequence[RunRecord]) -> list[float | None]:
    """Task times of the runs that finished (None for a stopped or failed run)."""
    return [None if r.success is False or r.end_reason in STOP_REASONS else r.task_s for r in runs]


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
