"""`choose:` in an experiment config: the two arms `looplab run` answers "which to use" for.

```yaml
choose: {a: small-fast, b: large-slow, tries: 2, deadline_s: 60}
```

After its cells, `looplab run` prints the policy table of backend `a`'s runs against
backend `b`'s (`looplab choose`, `report/views/choice.py`).
"""

from __future__ import annotations

from pydantic import Field

from looplab.config import StrictModel

__all__ = ["ChooseSettings"]


class ChooseSettings(StrictModel):
    """Which to use: the arms and the question (`looplab choose`'s flags)."""

    a: str = Field(min_length=1)
    """Arm A: a backend name of the experiment (the fast one, say), or with axes a run
    group's label, `backend · variant` (`small-fast · tell_remaining_time`)."""
    b: str = Field(min_length=1)
    """Arm B: another backend name or group label (`small-fast · all-off`)."""
    tries: int = Field(default=3, ge=1, le=10)
    """Most tries of a retrying policy (k)."""
    deadline_s: float | None = Field(default=None, gt=0)
    """Your deadline per task in seconds: adds "solved in time" (None: none)."""
