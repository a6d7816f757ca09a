"""What a cell needs of a node (its share of a `looplab_cell_slot`) and what a node is
(recorded in the trace header's `node`).

A wall-clock cell takes a whole slot: its tools and its simulator's waits run in real
time, so a node runs no more of them than it has slots. A virtual-clock cell waits for no
one; `virtual_cells_per_slot` of them share a slot.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from looplab.experiments.config import ExperimentConfig
from looplab.experiments.executors.config import SLOT_RESOURCE, ExecutorConfig
from looplab.experiments.matrix import Cell
from looplab.experiments.workload import cell_clock

__all__ = ["cell_resources", "node_info"]


def cell_resources(config: ExperimentConfig, cell: Cell) -> dict[str, float]:
    """The custom resources one Ray task of `cell` asks for."""
    executor: ExecutorConfig = config.executor
    share = 1.0 if cell_clock(config, cell.task) == "wall" else 1 / executor.virtual_cells_per_slot
    return {SLOT_RESOURCE: share}


def node_info(attempt: int, ray_ids: dict[str, str] | None = None) -> dict[str, Any]:
    """This machine as the trace header records it.

    Args:
        attempt: 1 for the cell's first attempt, 2 after one lost node, ...
        ray_ids: `ray_node_id` and `task_id` of the Ray task, when there is one.
    """
    try:
        load1: float | None = round(os.getloadavg()[0], 2)
    except OSError:  # not every platform has a load average
        load1 = None
    return {
        "hostname": socket.gethostname(),
        "cpus": os.cpu_count(),
        "load1": load1,
        **(ray_ids or {}),
        "attempt": attempt,
    }
