"""Side-by-side compare: per-task A | B | delta equal the runs' own numbers, paired
statistics over repetitions, marks, baseline picking, and `looplab diff` (text, json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.cli.app import app
from looplab.errors import ConfigError
from looplab.report.data.records import load_runs
from looplab.report.sides import load_sides
from looplab.report.views.run_metrics import run_metrics
from looplab.report.views.side_by_side import Side, _t_interval, side_by_side


def test_known_pair_deltas_equal_the_runs_numbers(known_pair: Path) -> None:
    """`dir#slow` vs `dir#fast`: the time, steps and token deltas are B's minus A's."""
    sides = load_sides([f"{known_pair}#slow", f"{known_pair}#fast"])
    a, b = (s.runs[0] for s in sides)
    view = side_by_side(sides)
    (pair,) = view.comparisons
    (row,) = pair.rows
    ma, mb = run_metrics(a), run_metrics(b)
    assert row.delta["time_s"] == pytest.approx(mb.time_s - ma.time_s)
    assert row.delta["steps"] == mb.steps - ma.steps == 1
    assert ma.tokens is not None and mb.tokens is not None
    assert row.delta["tokens"] == mb.tokens - ma.tokens
    assert row.marks["time_s"] == "better" and row.marks["steps"] == "worse"
    assert row.status == "improvement"
    assert pair.speedup == pytest.approx(ma.time_s / mb.time_s)


def test_one_side_alone_compares_its_profiles_and_baseline_flips_the_sign(
    known_pair: Path,
) -> None:
    """One spec splits into its profiles; picking the other baseline negates the delta."""
    sides = load_sides([str(known_pair)])
    assert [s.label for s in sides] == [f"{known_pair}#fast", f"{known_pair}#slow"]
    first = side_by_side(sides, 0).comparisons[0].rows[0]
    second = side_by_side(sides, 1).comparisons[0].rows[0]
    assert first.delta["time_s"] == pytest.approx(-(second.delta["time_s"] or 0))
    assert first.status == "mixed" and second.status == "improvement"  # fewer steps, slower


def test_paired_repetitions_and_unknown_names(runs_root: Path) -> None:
    """Runs pair by repetition; a `#NAME` that picks nothing lists the names it could."""
    runs = load_runs([runs_root / "quick"])
    slow = [r for r in runs if r.profile == "slow-80"]
    fast = [r for r in runs if r.profile == "fast-750"]
    view = side_by_side([Side("slow", slow), Side("fast", fast)])
    for row in view.comparisons[0].rows:
        a = [r.task_s for r in slow if r.task == row.task]
        b = [r.task_s for r in fast if r.task == row.task]
        assert row.pairs == 1 and row.mean_diff_s == pytest.approx(b[0] - a[0])
        assert row.faster_pairs == 1
    with pytest.raises(ConfigError, match=r"no run of .* has profile, agent or model 'medium'"):
        load_sides([f"{runs_root / 'quick'}#medium"])


def test_t_interval_matches_a_hand_computed_one() -> None:
    """Mean 2, sd 1, n 4: 2 +- 3.182 * 1 / 2."""
    low, high = _t_interval([1.0, 2.0, 3.0, 2.0]) or (0.0, 0.0)
    sd = (2 / 3) ** 0.5
    assert low == pytest.approx(2 - 3.182 * sd / 2) and high == pytest.approx(2 + 3.182 * sd / 2)


def test_diff_command_prints_tables_and_json(known_pair: Path) -> None:
    """`looplab diff A B` prints the task row; `--format json` the same deltas as data."""
    a, b = f"{known_pair}#slow", f"{known_pair}#fast"
    text = CliRunner().invoke(app, ["diff", a, b])
    assert text.exit_code == 0, text.output
    assert "coding/known" in text.output and "improvement" in text.output
    out = CliRunner().invoke(app, ["diff", a, b, "--format", "json", "--baseline", "2"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["baseline"] == 1 and data["sides"] == [a, b]
    row = data["comparisons"][0]["rows"][0]
    assert row["delta"]["steps"] == -1 and row["status"] == "mixed"
    bad = CliRunner().invoke(app, ["diff", a, b, "--baseline", "9"])
    assert isinstance(bad.exception, ConfigError) and "--baseline" in str(bad.exception)
