"""Property tests: random sub-run trees re-timed keep shares in [0, 1] summing to 1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looplab.analysis.calltiming import model_timing
from looplab.analysis.graph import critical_path
from looplab.analysis.pathsplit import path_split
from looplab.analysis.retime import sweep_trace
from looplab.analysis.sweep import ceiling
from looplab.latency.presets import resolve_profile
from looplab.latency.timing import TimingModel
from tests.analysis.subrun_traces import TreeBuilder

PROFILES = {name: resolve_profile(name, []) for name in ("slow-80", "fast-750")}


@st.composite
def trees(draw: st.DrawFn) -> TreeBuilder:
    """A random tree of 1-12 sub-runs (each parent an earlier one or the top-level run)."""
    n = draw(st.integers(1, 12))
    parents = [draw(st.integers(-1, i - 1)) for i in range(n)]
    tokens = [draw(st.integers(1, 2000)) for _ in range(n)]
    tools = [draw(st.floats(0.0, 60.0)) for _ in range(n)]
    return TreeBuilder(parents, tokens, tools)


@settings(max_examples=60, deadline=None)
@given(trees(), st.integers(1, 3000), st.floats(0.0, 60.0), st.sampled_from(sorted(PROFILES)))
def test_shares_add_up_on_random_trees(
    tree: TreeBuilder, top_tokens: int, top_tool: float, profile: str
) -> None:
    """Critical-path shares lie in [0, 1] and sum to 1; path <= total work; the Amdahl
    ceiling is the path over the path without decode (>= 1, never below the speedup)."""
    trace = tree.build(top_tokens, top_tool)
    base = PROFILES[profile]
    timing = model_timing(TimingModel.from_profile(base))
    split = path_split(trace.events, timing)
    path = critical_path(trace.events, timing)
    assert split.task_s == pytest.approx(path.task_s)
    parts = [
        split.path.decode_s,
        split.path.reasoning_s,
        split.path.ttft_s,
        split.path.model_rest_s,
        split.path.tool_s,
        split.path.other_s,
    ]
    assert all(p >= -1e-9 for p in parts)
    assert sum(parts) == pytest.approx(split.task_s, rel=1e-9, abs=1e-6)
    assert split.task_s <= split.work.total_s + 1e-6
    assert path.summed_s == pytest.approx(split.work.total_s, rel=1e-9, abs=1e-6)
    (point,) = sweep_trace(trace, [base.decode_tps], [base.ttft_s], base)
    shares = [
        getattr(point, name) / point.task_s
        for name in ("decode_s", "reasoning_s", "ttft_total_s", "tool_s", "other_s")
    ]
    assert all(-1e-9 <= s <= 1 + 1e-9 for s in shares)
    assert sum(shares) == pytest.approx(1.0, abs=1e-9)
    assert point.floor_s is not None and 0 < point.floor_s <= point.task_s + 1e-9
    (fastest,) = sweep_trace(trace, [1e6], [base.ttft_s], base)
    assert ceiling(point) >= point.task_s / fastest.task_s - 1e-6
