"""The report's per-node medians: shown when runs ran on several nodes, absent otherwise."""

from __future__ import annotations

import json
from pathlib import Path

from looplab.report.build import build_report


def _set_node(trace: Path, node: dict[str, object]) -> None:
    lines = trace.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0]) | {"node": node}
    trace.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")


def test_per_node_medians_when_nodes_differ(known_pair: Path) -> None:
    """Runs from two Ray nodes get a per-node table; runs of one machine get none."""
    html, model = build_report([known_pair])
    assert model.nodes == [] and "Per node" not in html
    _set_node(known_pair / "traces/known-a.jsonl", {"hostname": "h1", "ray_node_id": "ab" * 28})
    _set_node(known_pair / "traces/known-b.jsonl", {"hostname": "h2", "ray_node_id": "cd" * 28})
    html, model = build_report([known_pair])
    assert [(r.node, r.group, r.runs) for r in model.nodes] == [
        ("h1 (ray node abababab)", "slow", 1),
        ("h2 (ray node cdcdcdcd)", "fast", 1),
    ]
    assert "Per node" in html and "h2 (ray node cdcdcdcd)" in html
