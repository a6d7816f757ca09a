"""`ExecutorConfig`: the `executor:` section of an experiment (where its cells run).

```yaml
executor: {kind: ray, address: auto}   # or ray://head:10001, or local (a Ray of our own)
```

Where cells run is not part of what an experiment measures: the stored `config.json`
leaves it out, so an experiment started in-process can be resumed on Ray and back.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from looplab.config import StrictModel

__all__ = ["EXECUTOR_KINDS", "SLOT_RESOURCE", "ExecutorConfig"]

EXECUTOR_KINDS = ("inprocess", "ray")
"""The executor kinds (`looplab.experiments.executors.base.EXECUTORS` maps each)."""
SLOT_RESOURCE = "looplab_cell_slot"
"""The Ray custom resource a node offers per cell it can run on the wall clock."""


class ExecutorConfig(StrictModel):
    """Where the cells of an experiment run."""

    kind: str = "inprocess"
    """`inprocess` (this process, `concurrency` cells at once) or `ray` (one Ray task per
    cell, as many at once as the cluster's `looplab_cell_slot` resources allow)."""
    address: str = "local"
    """Ray: `local` (start a Ray on this machine with `local_slots` slots), `auto` (the
    cluster `ray start` runs here), `ray://host:10001` (Ray Client) or `host:6379`."""
    local_slots: int = Field(default=2, ge=1, le=256)
    """Ray with `address: local`: the cell slots of the local Ray."""
    virtual_cells_per_slot: int = Field(default=4, ge=1, le=64)
    """Ray: virtual-clock cells per slot (a wall-clock cell takes a whole slot, so its tool
    and model timings are not squeezed by neighbours; a virtual-clock one waits for no one)."""
    max_attempts: int = Field(default=3, ge=1, le=20)
    """Ray: attempts per cell when its node or worker is lost; a lost attempt's trace is
    set aside as incomplete (never counted) and the cell runs again elsewhere."""

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        if value not in EXECUTOR_KINDS:
            raise ValueError(f"unknown executor {value!r}; allowed: {list(EXECUTOR_KINDS)}")
        return value
