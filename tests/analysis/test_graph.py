"""Run graphs: sub-runs imported with their structure and re-timed on their critical path."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from looplab.analysis.calltiming import model_timing
from looplab.analysis.graph import CriticalPath, critical_path, run_tree
from looplab.analysis.retime import profile_model_timing, sweep_trace
from looplab.latency.presets import resolve_profile
from looplab.latency.timing import TimingModel
from looplab.report.claims.corpus import corpus_traces
from looplab.traces.importers.imported import ImportedRun
from looplab.traces.importers.registry import import_runs
from looplab.traces.io import Trace
from looplab.traces.schema import SubRunEvent, TraceEvent, TraceHeader

GRAPH = Path(__file__).resolve().parents[1] / "fixtures" / "graph"
SESSION = GRAPH / "claude-code-sidechains" / "7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f.jsonl"


def import_file(fmt: str, path: Path) -> list[ImportedRun]:
    """The runs `looplab import <fmt> <path>` makes."""
    return import_runs(fmt, path)[1]


def _events(path: Path, fmt: str) -> list[TraceEvent]:
    (run,) = import_file(fmt, path)
    return run.events


def _at(events: list[TraceEvent], preset: str) -> CriticalPath:
    profile = resolve_profile(preset, [])
    return critical_path(events, model_timing(TimingModel.from_profile(profile)))


def test_claude_code_sidechains_import_as_sub_runs() -> None:
    """Both sidechains (inline and companion file) become sub-runs joined by round 1."""
    (run,) = import_file("claude-code", SESSION)
    subs = {e.subrun: e for e in run.events if isinstance(e, SubRunEvent)}
    assert run.report.subruns == 2 and run.report.concurrent_calls > 0
    assert subs["e4f5a6b"].agent == "general-purpose"
    assert {(s.parent_step, s.join_step) for s in subs.values()} == {(0, 1)}
    assert {s.spawn_call_id for s in subs.values()} == {"toolu_explore", "toolu_tests"}
    tree = run_tree(run.events)
    assert sorted(c.steps for c in tree.children) == [2, 5]


def test_atif_subagent_trajectories_import_as_sub_runs() -> None:
    """Embedded sub-trajectories become sub-runs spawned by step 0 and joined by step 1."""
    (run,) = import_file("atif", GRAPH / "atif-subagents.json")
    subs = {e.subrun: e for e in run.events if isinstance(e, SubRunEvent)}
    assert set(subs) == {"explore-1", "lint-1"} and run.report.subruns == 2
    assert subs["lint-1"].spawn_call_id == "c-lint" and subs["lint-1"].join_step == 1


@pytest.mark.parametrize(
    ("path", "fmt", "slow", "fast"),
    [
        (SESSION, "claude-code", ("side-0001-0000-4000-8000-000000000000",), ("e4f5a6b",)),
        (GRAPH / "atif-subagents.json", "atif", ("explore-1",), ("lint-1",)),
    ],
)
def test_binding_branch_changes_between_profiles(
    path: Path, fmt: str, slow: tuple[str, ...], fast: tuple[str, ...]
) -> None:
    """At 80 tok/s the decode-bound sub-agent binds, at 750 the other; the critical path
    differs from the summed re-timing and is below the total work."""
    events = _events(path, fmt)
    at80, at750 = _at(events, "slow-80"), _at(events, "fast-750")
    assert (at80.binding, at750.binding) == (slow, fast)
    for point in (at80, at750):
        assert abs(point.task_s - point.summed_s) > 1.0
        assert point.task_s < point.work_s
    assert at750.task_s < at80.task_s


def test_claude_code_critical_path_numbers() -> None:
    """Pinned numbers of the Claude Code fixture (critical path vs total work summed over
    branches: every run's own time, its waits for sub-runs left out, never below the
    critical path; it was `recorded end + every change`, 4.9 s at 750 under a 43.2 s path)."""
    events = _events(SESSION, "claude-code")
    at80, at750 = _at(events, "slow-80"), _at(events, "fast-750")
    assert (round(at80.task_s, 1), round(at80.summed_s, 1)) == (69.6, 113.0)
    assert (round(at750.task_s, 1), round(at750.summed_s, 1)) == (43.2, 52.4)


def test_sweep_uses_the_critical_path_for_structured_traces() -> None:
    """sweep_trace's task time of a trace with sub-runs is its critical path."""
    events = _events(GRAPH / "atif-subagents.json", "atif")
    base = resolve_profile("slow-80", [])
    trace = Trace(
        header=TraceHeader(run_id="r", created=datetime(2026, 3, 2, tzinfo=UTC)), events=events
    )
    (point,) = sweep_trace(trace, [80.0], [base.ttft_s], base)
    assert point.task_s == pytest.approx(_at(events, "slow-80").task_s)


def test_flat_traces_critical_path_is_the_summed_retiming() -> None:
    """Every shipped corpus trace (flat) re-times on its critical path exactly as summed."""
    traces = corpus_traces()
    assert traces
    for preset in ("slow-80", "fast-750"):
        profile = resolve_profile(preset, [])
        for _, trace in traces:
            path = critical_path(trace.events, profile_model_timing(profile))
            (point,) = sweep_trace(trace, [profile.decode_tps], [profile.ttft_s], profile)
            assert path.binding == () and path.subruns == 0
            assert path.task_s == pytest.approx(point.task_s, abs=1e-9)
            assert path.task_s == pytest.approx(path.summed_s, abs=1e-9)


def test_virtual_replay_of_a_tree_ends_at_its_critical_path() -> None:
    """`replay --mode virtual` of a structured trace: run_end at the critical path, and the
    joining step starts after both re-timed sub-runs end."""
    from looplab.analysis.replay import replay_virtual
    from looplab.traces.schema import RunEndEvent, StepEvent

    events = _events(GRAPH / "atif-subagents.json", "atif")
    trace = Trace(
        header=TraceHeader(run_id="r", created=datetime(2026, 3, 2, tzinfo=UTC)), events=events
    )
    for preset in ("slow-80", "fast-750"):
        out = replay_virtual(trace, resolve_profile(preset, [])).events
        (end,) = [e for e in out if isinstance(e, RunEndEvent)]
        assert end.end == pytest.approx(_at(events, preset).task_s)
        join = next(e for e in out if isinstance(e, StepEvent) and e.subrun is None and e.step == 1)
        subs = [e for e in out if isinstance(e, SubRunEvent)]
        assert join.start >= max(s.end for s in subs) - 1e-9


def test_report_views_show_the_tree_and_binding_branch() -> None:
    """The run view's tree lists both sub-runs; the profiles name different binding branches."""
    from looplab.report.render.graph import run_graph_html
    from looplab.report.views.graph import run_graph

    events = _events(GRAPH / "atif-subagents.json", "atif")
    trace = Trace(
        header=TraceHeader(run_id="r", created=datetime(2026, 3, 2, tzinfo=UTC)), events=events
    )
    view = run_graph(trace)
    assert view is not None
    assert [n.depth for n in view.nodes] == [0, 1, 1]
    assert [p.binding for p in view.points] == ["explore-1", "lint-1"]
    html = run_graph_html(view)
    assert "explore-1 (explore)" in html and "lint-1" in html and "critical path" in html
    flat = Trace(header=trace.header, events=[e for e in events if e.subrun is None])
    assert run_graph(flat) is None


def test_collect_keeps_nested_invoke_agent_spans_as_sub_runs() -> None:
    """OTLP: an orchestrator's `execute_tool` span wrapping a nested `invoke_agent` span
    becomes a sub-run spawned by step 0, joined by step 1, its tool call the wait."""
    from looplab.traces.collect.runs import draft_run
    from looplab.traces.collect.spans import Span
    from looplab.traces.importers.build import build_run

    t0 = 1_770_000_000.0

    def span(
        sid: str, parent: str | None, op: str, start: float, end: float, **extra: object
    ) -> Span:
        attrs: dict[str, object] = {"gen_ai.operation.name": op, **extra}
        if op == "chat":
            attrs.update({"gen_ai.usage.input_tokens": 900, "gen_ai.usage.output_tokens": 400})
        return Span("t1", sid, parent, op, t0 + start, t0 + end, attrs)

    spans = [
        span("root", None, "invoke_agent", 0.0, 40.0, **{"gen_ai.agent.name": "lead"}),
        span("m0", "root", "chat", 0.0, 5.0),
        span(
            "tool",
            "root",
            "execute_tool",
            5.1,
            30.0,
            **{"gen_ai.tool.call.id": "call-1", "gen_ai.tool.name": "delegate"},
        ),
        span("sub", "tool", "invoke_agent", 5.2, 29.9, **{"gen_ai.agent.name": "searcher"}),
        span("s0", "sub", "chat", 5.2, 15.0),
        span("s1", "sub", "chat", 15.1, 29.9),
        span("m1", "root", "chat", 30.1, 40.0),
    ]
    run = build_run(draft_run("t1", spans))
    (sub,) = [e for e in run.events if isinstance(e, SubRunEvent)]
    assert (sub.parent_step, sub.join_step, sub.spawn_call_id) == (0, 1, "call-1")
    assert sub.agent == "searcher" and run.report.subruns == 1
    assert sum(1 for e in run.events if e.subrun == "sub" and e.kind == "model_call") == 2
    at80, at750 = _at(run.events, "slow-80"), _at(run.events, "fast-750")
    assert at750.task_s < at80.task_s and at80.binding == ("sub",)
