"""Honest comparisons: unlike inputs flagged and the headline kept to matched cells, the
cumulative curve never goes down, no CI where n is too small, a virtual clock is not an
importer's estimate, untouched profiles keep their names."""

from __future__ import annotations

import itertools
import shutil
from dataclasses import replace
from pathlib import Path

from looplab.config import replaced
from looplab.latency.presets import resolve_profile
from looplab.report.build import build_report
from looplab.report.data.records import record_from_trace
from looplab.report.views.time_split import compounding
from looplab.traces.io import read_trace, write_trace


def _rewrite(path: Path, **header: object) -> None:
    """Rewrite a trace with header fields changed (run id, cell, clock...)."""
    trace = read_trace(path)
    new = replaced(trace.header, **header)  # validated: a cell dict becomes a TraceCell
    events = [e.model_copy(update={"run_id": new.run_id}) for e in trace.events]
    write_trace(path, new, events)


def test_different_task_sets_are_flagged_and_the_headline_uses_matched_cells(
    runs_root: Path, tmp_path: Path
) -> None:
    """One profile missing a task: named in a banner, headline over the shared tasks."""
    copy = tmp_path / "quick"
    shutil.copytree(runs_root / "quick", copy)
    next((copy / "traces").glob("fast-750__coding__coding-fix-pager*.jsonl")).unlink()
    html, model = build_report([copy])
    assert model.comparability is not None
    assert model.comparability.only == {"slow-80": ["coding/fix-pager"]}
    assert "Different task sets" in html and "Unlike inputs" in html
    assert [g.runs for g in model.groups] == [2, 2]
    assert "over the 2 matched cells only" in model.sentence


def test_unlike_clocks_and_repetitions_are_named(known_pair: Path) -> None:
    """A virtual-clock run against a wall-clock one, and 2 repetitions against 1: named,
    and never pooled into one speedup (each clock is its own comparison group)."""
    traces = known_pair / "traces"
    shutil.copy(traces / "known-a.jsonl", traces / "known-a2.jsonl")
    _rewrite(
        traces / "known-a2.jsonl",
        run_id="known-a2",
        cell={"backend": "slow", "task": "coding/known", "repetition": 1},
    )
    _rewrite(traces / "known-b.jsonl", clock="virtual")
    _, model = build_report([known_pair])
    assert model.comparability is not None
    issues = " ".join(model.comparability.issues)
    assert "Different repetitions per task: virtual · fast 1 per task, wall · slow 2" in issues
    assert "Different clocks" in issues and "virtual clock" in issues
    assert [g.runs for g in model.groups] == [1, 2]
    assert all(g.reference for g in model.groups)  # each its own group's reference
    assert model.sentence.startswith("2 comparison groups, never pooled")


def test_no_shared_task_means_no_headline(runs_root: Path, known_pair: Path) -> None:
    """Groups that share no task get no speedup figure at all."""
    _, model = build_report([runs_root / "quick", known_pair])
    # quick is virtual-clock, known wall-clock: two comparison groups, never one figure
    assert model.sentence.startswith("2 comparison groups, never pooled")
    assert [line.key.clock for line in model.bottom_lines] == ["virtual", "wall"]


def test_cumulative_curve_never_goes_down_when_runs_finish(known_pair: Path) -> None:
    """Long slow runs and short fast ones: the median over the runs still going would
    drop; counting finished runs at their finish keeps it rising."""
    base = record_from_trace(read_trace(known_pair / "traces/known-a.jsonl"), "k")
    ends = [[10.0, 20.0], [10.0, 20.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    runs = [replace(base, run_id=f"r{i}", step_ends=e) for i, e in enumerate(ends)]
    points = compounding(runs)
    medians = [p.median for p in points]
    assert medians == sorted(medians)
    assert [p.n for p in points] == [4, 4, 4, 2]
    assert all(a.high <= b.high and a.low <= b.low for a, b in itertools.pairwise(points))


def test_no_confidence_interval_for_one_run_each(known_pair: Path) -> None:
    """n = 1 per group: the speedup is shown without an interval, and the table says why."""
    html, model = build_report([known_pair])
    fast = model.groups[1]
    words = "n=1, under the 6 a 95% interval needs: no CI"  # the one CI rule (issue 45)
    assert fast.ci is None and words in model.sentence
    assert words in html


def test_virtual_clock_is_badged_as_such_not_as_an_importer_estimate(runs_root: Path) -> None:
    """Virtual-clock runs: a `virtual clock` badge, no hatching; imported runs: `est.`."""
    html, model = build_report([runs_root / "quick"])
    assert all(g.estimated == [] and g.clocks == ["virtual"] for g in model.groups)
    assert 'class="badge"' in html and "virtual clock" in html
    assert "estimated by an importer" not in html and 'fill="url(#hatch)"' not in html
    html, model = build_report([runs_root / "quick", runs_root / "imported"])
    imported = [g for g in model.groups if g.source.startswith("import:")]
    assert imported[0].estimated and "estimated by an importer" in html


def test_untouched_profiles_keep_their_name() -> None:
    """A seed is not a change: no `+custom`; a changed field is one."""
    assert resolve_profile("fast-750", ["seed=3"]).name == "fast-750"
    assert resolve_profile("fast-750", ["decode_tps=750"]).name == "fast-750"
    assert resolve_profile("fast-750", ["decode_tps=500"]).name == "fast-750+custom"
    assert resolve_profile("fast-750", ["name=mine", "decode_tps=500"]).name == "mine"
