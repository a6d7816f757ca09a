"""The report's "speedup taken apart" section: the decomposed claims' waterfalls and table."""

from __future__ import annotations

from pathlib import Path

import pytest

from looplab.claims.panel.waterfall import decomposed_checks, waterfall_tables
from looplab.report.build import build_report


def test_waterfall_section_in_the_page(known_pair: Path) -> None:
    """The page has the section with Codex-Spark's waterfall, and its export table's parts
    add up to each claim's slow-to-fast difference."""
    html, model = build_report([known_pair])
    assert 'data-chart="waterfall-codex-spark"' in html
    assert "The speedup taken apart" in html
    rows = waterfall_tables(model)["waterfall"]["rows"]
    for check in decomposed_checks():
        d = check.decomposition
        assert d is not None
        total = sum(r[4] for r in rows if r[0] == check.entry.name)
        assert total == pytest.approx(d.fast_s - d.slow_s, rel=1e-9)
    assert {r[0] for r in rows} >= {"codex-spark"}
