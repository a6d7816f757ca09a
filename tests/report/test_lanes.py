"""Sub-agents as lanes and a tree: one named lane group per sub-run in tree order, spawn
and join links, the critical sub-run marked, and the transcript grouped by sub-run."""

from __future__ import annotations

from pathlib import Path

from looplab.report.data.exports import timeline_data
from looplab.report.data.records import RunRecord, record_from_trace
from looplab.report.render.gantt import lane_marks, lanes
from looplab.report.render.transcript import transcript_html
from looplab.report.render.tree import tree_chart
from looplab.report.views.report_model import build_model
from looplab.report.views.transcript import transcript
from looplab.traces.importers.registry import import_runs
from looplab.traces.io import Trace

GRAPH = Path(__file__).resolve().parents[1] / "fixtures" / "graph"
SESSION = GRAPH / "claude-code-sidechains" / "7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f.jsonl"


def _record(path: Path, fmt: str) -> RunRecord:
    (run,) = import_runs(fmt, path)[1]
    return record_from_trace(Trace(header=run.header, events=run.events), "graph")


def test_each_sub_run_gets_named_lanes_in_tree_order() -> None:
    """Main lanes first, then one group per sub-agent named after it; no sub-run's model
    call sits on the main model lane."""
    record = _record(GRAPH / "atif-subagents.json", "atif")
    model = build_model([record], "lanes", [], transcript_limit=0)
    (view,) = model.timelines
    order = lanes(view)
    assert order[0] == "model" and order[1].startswith("tools")
    named = [lane for lane in order if "·" in lane]
    assert any("explore-1" in lane and lane.endswith("model") for lane in named)
    assert any("lint-1" in lane and lane.endswith("model") for lane in named)
    main_calls = [b for b in view.bars if b.lane == "model"]
    assert all(b.order == 0 for b in main_calls)
    trace = record.trace
    assert trace is not None
    top = [c for c in trace.model_calls() if c.subrun is None]
    assert len({(b.start, b.end) for b in main_calls}) <= len(top) * 4  # phases of top calls


def test_spawn_join_links_and_the_critical_sub_run() -> None:
    """The Claude Code session: both sub-runs spawned from the main lanes and joined back;
    at its recorded (slow) timing the decode-bound Explore sub-agent binds (critical)."""
    record = _record(SESSION, "claude-code")
    model = build_model([record], "lanes", [], transcript_limit=0)
    (view,) = model.timelines
    order = lanes(view)
    links, critical = lane_marks(view, order)
    assert sorted(k.kind for k in links) == ["join", "join", "spawn", "spawn"]
    assert all(order[k.start] == "model" for k in links if k.kind == "spawn")
    assert critical and all("Explore" in order[i] for i in critical)
    data = timeline_data(model)[view.anchor]
    assert data["links"] and data["critical"] == critical
    assert data["labels"][0].endswith("· model") and data["labels"][-1].lstrip("\u00a0")[0] == "└"
    svg = tree_chart(view, "tree")
    assert svg.count("<rect") >= 3 and "joined at" in svg


def test_transcript_groups_steps_by_sub_run() -> None:
    """The main run's steps hold only its own tool calls; each sub-run's steps sit in its
    own block under the step that spawned it (step 1 used to hold every run's tools)."""
    record = _record(SESSION, "claude-code")
    view = transcript(record)
    assert view is not None
    main_tools = {t.name for s in view.steps for t in s.tools}
    assert main_tools <= {"Task", "Edit", "Read"}, main_tools
    assert len(view.subruns) == 2
    sub_tools = {t.name for sub in view.subruns for s in sub.steps for t in s.tools}
    assert {"Grep", "Bash"} <= sub_tools
    html = transcript_html(view)
    first_step = html[html.index(f'id="{view.anchor}-s1"') : html.index(f'id="{view.anchor}-s2"')]
    assert first_step.count('class="subrun"') == 2 and "critical path" in html
