"""The report's money and deadlines views over a real two-profile experiment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.analysis.cost import trace_cost
from looplab.cli.app import app
from looplab.latency.prices import resolve_price
from looplab.report.build import build_report
from looplab.report.data.records import RunRecord, load_runs
from looplab.stats.order import median


def test_cost_per_task_per_profile_at_the_profiles_price(runs_root: Path) -> None:
    """Each profile's point is priced at its entry; its cost is the median over runs of
    the traces' own tokens at that entry; fast-750 costs more and saves waiting."""
    html, model = build_report([runs_root / "quick"])
    assert model.money is not None and 'id="money"' in html
    points = {p.group: p for p in model.money.points}
    assert points["slow-80"].price == "openai-gpt-5.4-standard"
    assert points["fast-750"].price == "openai-gpt-5.4-codex-fast"
    slow_price = resolve_price("openai-gpt-5.4-standard")
    slow_runs = [r.trace for r in model_records(runs_root) if r.group == "slow-80"]
    expected = median([trace_cost(t, slow_price).total_usd for t in slow_runs if t is not None])
    assert points["slow-80"].cost_usd == pytest.approx(expected)
    assert points["fast-750"].cost_usd is not None
    assert points["fast-750"].cost_usd > points["slow-80"].cost_usd > 0
    (row,) = model.money.waiting
    assert row.reference == "slow-80" and row.saved_s_per_task > 0
    assert row.usd_per_hour_saved == pytest.approx(
        row.extra_usd_per_task / (row.saved_s_per_task / 3600)
    )


def model_records(runs_root: Path) -> list[RunRecord]:
    """The experiment's run records (with traces), grouped by profile."""
    records = load_runs([runs_root / "quick"])
    for record in records:
        record.group = record.profile
    return records


def test_under_cap_curves_of_the_runs_and_the_retimed_corpus(runs_root: Path) -> None:
    """These runs: a curve per profile reaching every solved run; the corpus re-timed at
    fast-750 finishes at least as large a share as at slow-80 under every cap."""
    _, model = build_report([runs_root / "quick"])
    assert model.caps is not None
    mine = {c.profile: c for s, c in model.caps.curves if s == "these runs"}
    assert set(mine) == {"slow-80", "fast-750"}
    for curve in mine.values():
        assert curve.shares == sorted(curve.shares) and curve.shares[-1] == 1.0
    corpus = {c.profile: c for s, c in model.caps.curves if s == "corpus"}
    assert corpus["slow-80"].runs == corpus["fast-750"].runs > 10
    assert all(
        f >= s for f, s in zip(corpus["fast-750"].shares, corpus["slow-80"].shares, strict=True)
    )
    assert any(
        f > s for f, s in zip(corpus["fast-750"].shares, corpus["slow-80"].shares, strict=True)
    )


def test_report_json_carries_money_and_caps(runs_root: Path) -> None:
    """`looplab report --format json` has the money and caps sections and their tables."""
    out = CliRunner().invoke(
        app, ["report", str(runs_root / "quick"), "--format", "json", "-o", "-"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert {p["group"] for p in data["money"]["points"]} == {"slow-80", "fast-750"}
    assert data["money"]["waiting"][0]["usd_per_hour_saved"] > 0
    sources = {curve[0] for curve in data["caps"]["curves"]}
    assert sources == {"these runs", "corpus"}
