"""`GroupView`: the headline numbers of one compared group (a backend profile).

Its own module because the headline (`views.headline`), the sweep and the step views all
read it, and `views` imports those: kept in `views`, it made an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GroupView"]


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

    @property
    def unsolved(self) -> int:
        """Runs whose check failed."""
        return self.checked - self.solved
