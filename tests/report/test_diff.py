"""The step-aligned diff: alignment by tool calls, per-step deltas, the cumulative gap,
replay divergences, and where the report links to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from looplab.analysis.divergence import LIVE_REPLAY_NOTE
from looplab.report.build import build_report
from looplab.report.data.records import record_from_trace
from looplab.report.views.diff import align, diff_view
from looplab.traces.io import read_trace


def test_align_keeps_the_longest_common_subsequence() -> None:
    """Common steps pair up in order; the others are deletions (A) and insertions (B)."""
    a = ["read", "test", "edit", "test", "finish"]
    b = ["read", "edit", "edit", "test", "finish"]
    pairs = align(a, b)
    matched = [(i, j) for i, j in pairs if i is not None and j is not None]
    assert len(matched) == 4 and all(a[i] == b[j] for i, j in matched)
    assert [i for i, _ in pairs if i is not None] == list(range(5))
    assert [j for _, j in pairs if j is not None] == list(range(5))
    assert align([], ["x"]) == [(None, 0)] and align(["x"], []) == [(0, None)]


def test_known_pair_gives_known_deltas_and_gap(known_pair: Path) -> None:
    """Decode deltas per aligned step, B's extra step in full, the gap at every row."""
    a, b = (
        record_from_trace(read_trace(known_pair / f"traces/known-{x}.jsonl"), "k") for x in "ab"
    )
    diff = diff_view(a, b)
    assert [r.status for r in diff.rows] == ["same", "only in B", "same", "same"]
    assert [r.signature for r in diff.rows] == ["read_file", "edit_file", "run_tests", "finish"]
    assert [round(r.delta["decode"] or 0, 6) for r in diff.rows] == [-1.5, 0.25, -0.75, -0.25]
    assert diff.rows[1].delta["tools"] == pytest.approx(0.25)
    assert diff.rows[1].delta["overhead"] == pytest.approx(0.1)
    assert [round(r.gap_s, 6) for r in diff.rows] == [-1.5, -0.4, -1.15, -1.4]
    assert diff.rows[-1].gap_s == pytest.approx(b.task_s - a.task_s)
    assert (diff.matched, diff.only_a, diff.only_b) == (3, 0, 1)
    total = sum(sum(v or 0 for v in r.delta.values()) for r in diff.rows)
    assert total == pytest.approx(b.task_s - a.task_s)


def test_report_links_every_task_row_to_its_diff(known_pair: Path) -> None:
    """The per-task table and the run table link to a diff section that exists."""
    html, model = build_report([known_pair])
    assert len(model.diffs) == 1
    key = model.diffs[0].key
    assert f'id="{key}"' in html
    tasks = html[html.index('id="tasks"') : html.index('id="runs-table"')]
    assert f'href="#{key}"' in tasks
    assert html.count(f'href="#{key}"') >= 3


def test_live_replay_divergence_is_marked(known_pair: Path) -> None:
    """A run that replays another and fails a step where it passed is flagged there."""
    recorded = read_trace(known_pair / "traces/known-a.jsonl")
    events = [
        e.model_copy(update={"run_id": "known-a.live", "ok": False, "error": "boom"})
        if getattr(e, "name", "") == "read_file"
        else e.model_copy(update={"run_id": "known-a.live"})
        for e in recorded.events
    ]
    header = recorded.header.model_copy(
        update={"run_id": "known-a.live", "notes": [f"{LIVE_REPLAY_NOTE}known-a"]}
    )
    replay = read_trace(known_pair / "traces/known-a.jsonl")
    replay.header, replay.events = header, events
    diff = diff_view(record_from_trace(recorded, "k"), record_from_trace(replay, "k"))
    flagged = [r for r in diff.rows if r.diverged]
    assert [r.signature for r in flagged] == ["read_file"]
    assert "ok -> error: boom" in flagged[0].diverged
