"""Call-level diff: model and tool calls aligned across sub-runs, insertions, the
divergence, and the critical path's change when a session is re-timed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from looplab.analysis.replay import replay_virtual
from looplab.latency.presets import resolve_profile
from looplab.report.data.records import load_runs, record_from_trace
from looplab.report.render.span_diff import span_diff_html
from looplab.report.views.span_diff import span_diff
from looplab.traces.importers.registry import import_runs
from looplab.traces.io import Trace

SESSION = (
    Path(__file__).resolve().parents[1]
    / "fixtures/graph/claude-code-sidechains/7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f.jsonl"
)


def test_known_pair_inserts_b_s_extra_step_and_diverges_there(known_pair: Path) -> None:
    """B's extra edit_file step: a model call and the edit_file call are inserted, the
    runs diverge in B's step 2 (the edit), every other call aligns with its B - A."""
    a, b = sorted(load_runs([known_pair]), key=lambda r: r.run_id)
    diff = span_diff(a, b)
    inserted = [r.b for r in diff.rows if r.status == "inserted"]
    assert sorted(c.what for c in inserted if c) == ["edit_file", "model"]
    assert diff.divergence is not None
    first = diff.rows[diff.divergence].b
    assert first is not None and first.step == 1 and diff.rows[diff.divergence].a is None
    read = next(r for r in diff.rows if r.a and r.a.what == "model" and r.a.step == 0)
    assert read.delta_s == pytest.approx((1.0 + 0.5) - (1.0 + 2.0))  # B's decode 0.5 s, A's 2 s
    assert diff.aligned == 6 and "only-b" in span_diff_html(diff)


def test_re_timed_session_aligns_every_call_and_the_binding_branch_changes() -> None:
    """The Claude Code session against its fast-750 virtual replay: all calls of main and
    both sub-agents align; at fast-750 the tool-bound sub-agent binds instead."""
    (run,) = import_runs("claude-code", SESSION)[1]
    trace = Trace(header=run.header, events=run.events)
    fast = replay_virtual(trace, resolve_profile("fast-750", []))
    fast_trace = Trace(
        header=run.header.model_copy(update={"run_id": "fast", "created": datetime.now(UTC)}),
        events=fast.events,
    )
    a, b = record_from_trace(trace, "slow"), record_from_trace(fast_trace, "fast")
    diff = span_diff(a, b)
    assert diff.divergence is None and diff.aligned == len(diff.rows) == 18
    assert {r.a.who for r in diff.rows if r.a} == {
        "main",
        "main > Explore #1",
        "main > general-purpose #1",
    }
    assert "Explore" in diff.binding_a and "general-purpose" in diff.binding_b
    assert diff.critical_b_s < diff.critical_a_s
