"""`looplab bench workload` end to end on a tiny trace (structure, not timing)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from looplab.experiments.workload_bench import run_workload_bench


def test_bench_runs_traces_live_and_predicts_them(fixtures: Path, tmp_path: Path) -> None:
    """Each trace runs at each profile; rows carry live and predicted splits that add up."""
    profile = tmp_path / "quick.yaml"
    profile.write_text(yaml.safe_dump({"decode_tps": 4000.0, "ttft_s": 0.05}))
    bench = run_workload_bench(
        [fixtures / "calibrate" / "b.jsonl", fixtures / "calibrate" / "c.jsonl"],
        profiles=[str(profile), "fast-750"],
        tool_scale=0.05,
        limit=1,
        output=tmp_path / "live",
    )
    assert bench.failed == [] and bench.skipped == []
    # limit 1: the shorter recording only; a profile file is labelled by its name field
    assert [(r.run, r.profile) for r in bench.rows] == [("b", "custom"), ("b", "fast-750")]
    for row in bench.rows:
        assert row.steps == 2
        assert row.predicted.tool_s == pytest.approx(0.05)  # 1 s of tools x 0.05
        assert row.live.tool_s >= 0.05 and row.predicted.task_s > row.predicted.tool_s
        live = row.live
        assert live.model_s + live.tool_s + live.other_s == pytest.approx(live.task_s)
    assert len(list((tmp_path / "live" / "traces").glob("*.jsonl"))) == 2
