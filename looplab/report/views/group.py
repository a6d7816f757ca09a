"""`GroupView`: the headline numbers of one compared group (a backend profile), and the
headline sentence over the slowest and fastest of them (`headline_sentence`).

Its own module because the headline (`views.headline`), the sweep and the step views all
read it, and `views` imports those: kept in `views`, it made an import circle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from looplab.report.views.speedup import ci_words

__all__ = ["GroupView", "headline_sentence"]


@dataclass
class GroupView:
    """Headline numbers of one compared group (a backend profile)."""

    label: str
    color: str
    decode_tps: float | None
    source: str
    runs: int
    solved: int
    checked: int
    median_task_s: float
    p90_task_s: float
    median_steps: float
    model_share: float
    tool_share: float
    overhead_share: float
    speedup: float
    """Median task time of the reference over this group's, on the paired tasks (NaN:
    no task pairs up)."""
    ci: tuple[float, float] | None
    reference: bool
    estimated: list[str]
    """What an importer estimated (`model`, `tool`, `ttft`, ...), not measured."""
    clocks: list[str] = field(default_factory=list)
    """How its model times were obtained (`wall`, `virtual`, `recorded`)."""
    paired_tasks: int = 0
    """Tasks with usable (not unsolved) runs in both this group and the reference."""
    paired_runs: int = 0
    """This group's runs the speedup rests on."""
    reference_runs: int = 0
    """The reference group's runs it is compared with (same tasks)."""
    comparison: str = ""
    """The comparison group it belongs to (`agent on tasks (clock)`): its speedup is
    against that group's reference only."""
    model: str | None = None
    """The one model its runs talked to (None: unknown or several); two groups of
    different models are a model comparison, never a decode-rate change."""

    @property
    def unsolved(self) -> int:
        """Runs with a verdict that failed (a failed check, a non-zero exit, a stop)."""
        return self.checked - self.solved


def headline_sentence(groups: Sequence[GroupView]) -> str:
    """`9.4x faster decode -> 1.7x faster tasks (41% less time)`, fastest vs slowest, with
    what the figure rests on (paired tasks, runs) and how many runs were left out unsolved;
    no figure when no task pairs up."""
    if len(groups) < 2:
        return ""
    slow, fast = groups[0], groups[-1]
    unsolved = slow.unsolved + fast.unsolved
    left_out = (
        f"; {unsolved} unsolved run{'s' if unsolved != 1 else ''} left out" if unsolved else ""
    )
    unknown = (slow.runs - slow.checked) + (fast.runs - fast.checked)
    if unknown:
        left_out += f"; {unknown} of unknown outcome (no verdict)"
    if not fast.paired_tasks or not math.isfinite(fast.speedup):
        return (
            f"No speedup: no task has usable runs on both {fast.label} and {slow.label} "
            f"({unsolved} of {slow.runs + fast.runs} runs unsolved)."
        )
    gain = fast.speedup
    less = 1 - 1 / gain if gain > 0 else math.nan
    ci = f" [{ci_words(fast.paired_tasks, fast.ci if fast.ci and _finite(fast.ci) else None)}]"
    tasks = f"{gain:.1f}x faster tasks{ci} ({less:.0%} less time)"
    basis = (
        f"median task time over {fast.paired_tasks} task{'s' if fast.paired_tasks != 1 else ''} "
        f"({fast.reference_runs} + {fast.paired_runs} runs{left_out})."
    )
    if fast.model != slow.model and fast.model and slow.model:
        return (
            f"Two models, not one model at two speeds: {fast.label} ({fast.model}) against "
            f"{slow.label} ({slow.model}): tasks took "
            + (f"{gain:.1f}x less time" if gain >= 1 else f"{1 / gain:.1f}x more time")
            + f"{ci}, by "
            + basis.removesuffix(".")
            + "; the bottom line gives each model's success and cost per solved task."
        )
    if fast.decode_tps and slow.decode_tps:
        ratio = fast.decode_tps / slow.decode_tps
        return (
            f"{ratio:.1f}x faster decode -> {tasks}: {fast.label} "
            f"({fast.decode_tps:g} tok/s) against {slow.label} ({slow.decode_tps:g} tok/s), "
            + basis
        )
    return f"{fast.label} against {slow.label}: {tasks}, " + basis


def _finite(pair: tuple[float, float]) -> bool:
    return all(math.isfinite(v) for v in pair)
