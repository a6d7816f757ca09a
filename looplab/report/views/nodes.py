"""Per-node medians, for runs that ran on more than one node (an executor's cluster).

A wall-clock run's tool and model times are measured on its node; when nodes differ
(hardware, load), per-node medians show whether pooling them is fair. Runs without a
recorded node (in-process, imported) count as one node, `this machine`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.report.data.records import RunRecord
from looplab.stats.intervals import median

__all__ = ["NodeRow", "node_rows"]


@dataclass(frozen=True)
class NodeRow:
    """One (node, group) cell of the per-node table."""

    node: str
    group: str
    runs: int
    task_s: float
    model_s: float
    tool_s: float


def node_rows(records: Sequence[RunRecord]) -> list[NodeRow]:
    """Median task, model and tool time per (node, group); empty when all ran on one node."""
    by_node: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for record in records:
        by_node[(record.node or "this machine", record.group)].append(record)
    if len({node for node, _ in by_node}) < 2:
        return []
    return [
        NodeRow(
            node,
            group,
            len(runs),
            median([r.task_s for r in runs]),
            median([r.model_s for r in runs]),
            median([r.tool_s for r in runs]),
        )
        for (node, group), runs in sorted(by_node.items())
    ]
