"""The report's "speedup taken apart" section: the decomposed claims' waterfalls and table."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from looplab.bundled import bundled_tasks_dir
from looplab.claims.check import check_claim
from looplab.report.build import build_report
from looplab.report.claims.waterfall import decomposed_claims, waterfall_tables


def test_waterfall_section_in_the_page(known_pair: Path) -> None:
    """The page has the section with Codex-Spark's waterfall, and its export table's parts
    add up to each claim's slow-to-fast difference."""
    html, model = build_report([known_pair])
    assert 'data-chart="waterfall-codex-spark"' in html
    assert "The speedup taken apart" in html
    rows = waterfall_tables(model)["waterfall"]["rows"]
    for check in decomposed_claims():
        d = check.decomposition
        assert d is not None
        total = sum(r[4] for r in rows if r[0] == check.entry.name)
        assert total == pytest.approx(d.fast_s - d.slow_s, rel=1e-9)
    assert {r[0] for r in rows} >= {"codex-spark"}


def test_kept_decompositions_match_a_fresh_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decompositions a report reads from the cache are the ones a fresh check gives,
    number for number (written on the first call, read on the next)."""
    monkeypatch.setenv("LOOPLAB_CACHE_DIR", str(tmp_path))
    decomposed_claims.cache_clear()
    try:
        written = decomposed_claims()
        assert len(list((tmp_path / "derived").glob("*.json"))) == 1
        decomposed_claims.cache_clear()
        read = decomposed_claims()
    finally:
        decomposed_claims.cache_clear()
    assert [c.entry.name for c in read] == [c.entry.name for c in written]
    for kept in read:
        fresh = check_claim(kept.entry, break_even=False).decomposition
        assert kept.decomposition == fresh


def test_a_recalibrated_workload_is_never_served_the_old_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache key covers the workloads (`LOOPLAB_TASKS_DIR`): after Codex-Spark's workload
    is re-calibrated (its tool times doubled) the report's speedup is the new one, not the
    kept one (issue 47, finding 5: 5.96x was served for 5.80x)."""
    tasks = tmp_path / "tasks"
    shutil.copytree(bundled_tasks_dir() / "workload", tasks / "workload")
    monkeypatch.setenv("LOOPLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LOOPLAB_TASKS_DIR", str(tasks))
    decomposed_claims.cache_clear()
    try:
        before = {c.entry.name: c.decomposition.speedup for c in decomposed_claims()}
        workload = tasks / "workload" / "mini-swe-agent-deepseek-reasoning" / "workload.yaml"
        document = yaml.safe_load(workload.read_text(encoding="utf-8"))
        tool_s = document["parameters"]["tool_s"]["distribution"]
        tool_s["values"] = [2 * v for v in tool_s["values"]]
        workload.write_text(yaml.safe_dump(document), encoding="utf-8")
        decomposed_claims.cache_clear()
        after = {c.entry.name: c.decomposition.speedup for c in decomposed_claims()}
    finally:
        decomposed_claims.cache_clear()
    assert after["codex-spark"] != pytest.approx(before["codex-spark"], rel=1e-6)
    assert len(list((tmp_path / "cache" / "derived").glob("*.json"))) == 2
