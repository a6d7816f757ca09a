"""The report's "speedup taken apart" section: the decomposed claims' waterfalls and table."""

from __future__ import annotations

from pathlib import Path

import pytest

from looplab.claims.check import check_claim
from looplab.claims.panel.waterfall import decomposed_claims, waterfall_tables
from looplab.report.build import build_report


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
        assert len(list((tmp_path / "derived").iterdir())) == 1
        decomposed_claims.cache_clear()
        read = decomposed_claims()
    finally:
        decomposed_claims.cache_clear()
    assert [c.entry.name for c in read] == [c.entry.name for c in written]
    for kept in read:
        fresh = check_claim(kept.entry, break_even=False).decomposition
        assert kept.decomposition == fresh
