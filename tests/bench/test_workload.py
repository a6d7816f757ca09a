"""`looplab bench workload` end to end on a tiny trace (structure, not timing)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from looplab.bench.workload import bench_traces, run_workload_bench

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "workloads"


def test_bench_runs_traces_live_and_predicts_them(tmp_path: Path) -> None:
    """Each trace runs at each profile; rows carry live and predicted splits that add up."""
    profile = tmp_path / "quick.yaml"
    profile.write_text(yaml.safe_dump({"decode_tps": 4000.0, "ttft_s": 0.05}))
    traces, skipped = bench_traces(
        [FIXTURES / "calibrate" / "b.jsonl", FIXTURES / "calibrate" / "c.jsonl"], limit=1
    )
    assert [t.header.run_id for t in traces] == ["b"] and skipped == []
    bench = run_workload_bench(
        traces, profiles=[str(profile), "fast-750"], tool_scale=0.05, output=tmp_path / "live"
    )
    assert bench.failed == []
    # limit 1: the shorter recording only; a profile file is labelled by its name field
    assert [(r.run, r.profile) for r in bench.rows] == [("b", "custom"), ("b", "fast-750")]
    for row in bench.rows:
        assert row.steps == 2
        assert row.predicted.tool_s == pytest.approx(0.05)  # 1 s of tools x 0.05
        assert row.live.tool_s >= 0.05 and row.predicted.task_s > row.predicted.tool_s
        live = row.live
        assert live.model_s + live.tool_s + live.other_s == pytest.approx(live.task_s)
    assert len(list((tmp_path / "live" / "traces").glob("*.jsonl"))) == 2


def test_default_bench_traces_are_one_per_corpus_harness() -> None:
    """Without inputs the bench takes the shortest timed corpus run of each harness."""
    traces, _ = bench_traces(None, limit=10)
    sources = [t.header.source for t in traces]
    assert len(sources) == len(set(sources)) >= 4
    assert "import:mini-swe-agent" in sources and "import:swe-agent" not in sources
