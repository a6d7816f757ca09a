"""The paired speedup: the one computation behind every "X.XXx (95% CI a-b)" a view shows.

The bottom line, the per-profile table, the money section's price of waiting and the
claim panel's live rows all call `paired_speedup(slow_runs, fast_runs)`; none recomputes
it. Its rules:

- runs are paired by cell (task x repetition, `views.compare.keyed`); a cell counts only
  when both sides have runs in it not known to be unsolved (an unsolved run never feeds
  a speedup);
- the cells are grouped into bootstrap units (`unit_of`): the task, or the cell itself
  for a workload's draws (each draw is a new task);
- the figure is `median(slow times) / median(fast times)` over the paired cells; its
  interval is `stats.intervals.speedup_ci` (the one CI rule: BCa over at least
  `MIN_PAIRED_N` units, else none), and `ci_words` is the one way to say it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.report.data.records import RunRecord
from looplab.report.views.compare import keyed
from looplab.stats.intervals import MIN_PAIRED_N, median, speedup_ci
from looplab.tasks.references import parse_reference

__all__ = ["PairedSpeedup", "ci_words", "paired_speedup", "unit_of"]


@dataclass(frozen=True)
class PairedSpeedup:
    """What one slow/fast comparison rests on, and its figure."""

    slow: dict[str, list[float]] = field(default_factory=dict)
    """Task times at the slow side, by bootstrap unit (paired cells only)."""
    fast: dict[str, list[float]] = field(default_factory=dict)
    slow_runs: list[RunRecord] = field(default_factory=list)
    """The slow side's runs the figure rests on (solved or unchecked, in paired cells)."""
    fast_runs: list[RunRecord] = field(default_factory=list)
    slow_s: float | None = None
    """Median task time at the slow side over the paired cells (None: no cell pairs)."""
    fast_s: float | None = None
    speedup: float | None = None
    """`slow_s / fast_s`; None when no cell pairs or the fast time is not positive."""
    ci: tuple[float, float] | None = None
    """95% interval (`speedup_ci`); None under `MIN_PAIRED_N` units."""

    @property
    def n(self) -> int:
        """Bootstrap units the figure rests on (tasks, or a workload's draws)."""
        return len(self.slow)

    @property
    def runs(self) -> int:
        """Runs the figure rests on, both sides."""
        return len(self.slow_runs) + len(self.fast_runs)


def unit_of(run: RunRecord, cell: tuple[str, int]) -> str:
    """The bootstrap unit of a run in `cell`: its task, or the cell for a workload's draws
    (a new task each)."""
    reference = parse_reference(run.task)
    return f"{cell[0]}#{cell[1]}" if reference and reference.kind == "model" else cell[0]


def paired_speedup(slow_runs: Sequence[RunRecord], fast_runs: Sequence[RunRecord]) -> PairedSpeedup:
    """The speedup of `fast_runs` over `slow_runs` (see the module doc for the rules).

    Args:
        slow_runs: the reference side's runs (one comparison key, one profile).
        fast_runs: the compared side's runs (the same key, another profile).

    Returns:
        The paired figure; `speedup` None when no cell has usable runs on both sides.
    """
    slow_cells, fast_cells = keyed(slow_runs), keyed(fast_runs)
    a: dict[str, list[float]] = defaultdict(list)
    b: dict[str, list[float]] = defaultdict(list)
    used_slow: list[RunRecord] = []
    used_fast: list[RunRecord] = []
    for cell in sorted(set(slow_cells) & set(fast_cells)):
        left = [r for r in slow_cells[cell] if r.outcome != "failed"]
        right = [r for r in fast_cells[cell] if r.outcome != "failed"]
        if not left or not right:
            continue
        unit = unit_of(left[0], cell)
        a[unit] += [r.task_s for r in left]
        b[unit] += [r.task_s for r in right]
        used_slow += left
        used_fast += right
    if not a:
        return PairedSpeedup()
    slow_s = median([t for v in a.values() for t in v])
    fast_s = median([t for v in b.values() for t in v])
    ratio = slow_s / fast_s if fast_s > 0 else math.nan
    speedup = ratio if math.isfinite(ratio) else None
    return PairedSpeedup(
        slow=dict(a),
        fast=dict(b),
        slow_runs=used_slow,
        fast_runs=used_fast,
        slow_s=slow_s,
        fast_s=fast_s,
        speedup=speedup,
        ci=speedup_ci(dict(a), dict(b)) if speedup is not None else None,
    )


def ci_words(n: int, ci: tuple[float, float] | None) -> str:
    """How every view says a speedup's interval: `95% CI a-b`, or why there is none
    (`n=4, under the 6 a 95% interval needs: no CI`)."""
    if ci is not None:
        return f"95% CI {ci[0]:.2f}-{ci[1]:.2f}"
    if n >= MIN_PAIRED_N:
        return f"n={n}, no CI: every resample gave one side of the estimate"
    return f"n={n}, under the {MIN_PAIRED_N} a 95% interval needs: no CI"
