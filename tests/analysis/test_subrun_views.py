"""Runs with sub-agents: shares that add up, spawning calls that move, walks that scale."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.analysis.calltiming import model_timing
from looplab.analysis.graph import critical_path
from looplab.analysis.replay import replay_virtual
from looplab.analysis.sweep import run_sweep
from looplab.bench.subruns import chain_trace
from looplab.cli.app import app
from looplab.latency.presets import resolve_profile
from looplab.latency.timing import TimingModel
from looplab.report.data.records import record_from_trace
from looplab.traces.importers.registry import import_runs
from looplab.traces.io import Trace
from looplab.traces.schema import SubRunEvent, ToolCallEvent, TraceHeader
from tests.analysis.subrun_traces import fan, write

SESSION = (
    Path(__file__).resolve().parents[1]
    / "fixtures/graph/claude-code-sidechains/7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f.jsonl"
)


def _session() -> Trace:
    (run,) = import_runs("claude-code", SESSION)[1]
    header = TraceHeader(run_id="s", created=datetime(2026, 3, 2, tzinfo=UTC))
    return Trace(header=header, events=run.events)


def test_sidechain_sweep_shares_and_ceiling() -> None:
    """The shipped fixture: shares within [0, 100%] summing to 100%, Amdahl ceiling from
    the critical path (~1.64x at 80 tok/s, not 41.22x)."""
    base = resolve_profile("slow-80", [])
    _, summaries = run_sweep([_session()], [80.0, 750.0], [base.ttft_s], base, 80.0)
    for row in summaries:
        shares = [
            row.decode_share,
            row.reasoning_share,
            row.ttft_share,
            row.tool_share,
            row.other_share,
        ]
        assert all(0 <= s <= 1 for s in shares) and sum(shares) == pytest.approx(1, abs=0.02)
        assert row.amdahl_ceiling == pytest.approx(1.64, abs=0.02)
        assert row.work_s > row.task_s


def test_report_record_parts_sum_to_task_time() -> None:
    """The report's record of a run with sub-agents: model + tools + other = task time."""
    replayed = replay_virtual(_session(), resolve_profile("fast-750", []))
    record = record_from_trace(replayed, "x")
    assert record.model_s + record.tool_s + record.overhead_s == pytest.approx(record.task_s)
    assert record.tool_s <= record.task_s and record.work_s is not None
    assert record.steps == 3 and record.model_calls == 10


def test_spawning_call_spans_its_subrun_and_summed_is_stable() -> None:
    """Re-timed, each Task call spans its sub-run; the replayed trace re-timed at the same
    profile gives the same critical path and total work as the original."""
    session = _session()
    replayed = replay_virtual(session, resolve_profile("fast-750", [])).events
    subs = {e.spawn_call_id: e for e in replayed if isinstance(e, SubRunEvent)}
    for call in (e for e in replayed if isinstance(e, ToolCallEvent) and e.call_id in subs):
        sub = subs[call.call_id]
        assert call.start <= sub.start + 1e-9 and call.end >= sub.end - 1e-9
    for name in ("slow-80", "fast-750"):  # both run pages show both profiles
        timing = model_timing(TimingModel.from_profile(resolve_profile(name, [])))
        first, again = critical_path(session.events, timing), critical_path(replayed, timing)
        assert again.task_s == pytest.approx(first.task_s, abs=1e-6)
        assert again.summed_s == pytest.approx(first.summed_s, abs=1e-6)


# the report of the chain takes ~10 s of CPU (its sensitivity view re-times the tree at 16
# points): past the 120 s default beside two other xdist workers on a loaded machine
@pytest.mark.timeout(600)
@pytest.mark.parametrize("command", ["sweep", "replay", "report"])
def test_deep_chain_has_no_recursion_error(command: str, tmp_path: Path) -> None:
    """A chain of 1,100 nested sub-runs goes through sweep, replay and report."""
    (tmp_path / "in").mkdir()
    write(chain_trace(1100), tmp_path / "in" / "t.jsonl")
    args = {
        "sweep": ["sweep", str(tmp_path / "in"), "--rates", "80,750", "-o", "-"],
        "replay": ["replay", str(tmp_path / "in"), "-o", str(tmp_path / "out")],
        "report": ["report", str(tmp_path / "in"), "-o", str(tmp_path / "r.html")],
    }[command]
    done = CliRunner().invoke(app, ["--no-log-file", *args])
    assert done.exception is None and done.exit_code == 0


def test_ten_thousand_subruns_in_bounded_time() -> None:
    """10,000 parallel sub-runs: the sweep's two points take seconds of CPU (was ~15 min)."""
    trace = fan(10_000)
    base = resolve_profile("slow-80", [])
    began = time.process_time()
    rows, _ = run_sweep([trace], [80.0, 750.0], [base.ttft_s], base)
    assert len(rows) == 2 and time.process_time() - began < 20.0


def test_import_and_replay_say_what_they_count(tmp_path: Path) -> None:
    """`looplab import` of the sidechain session: main-agent steps, calls of all agents,
    tool time on the critical path within the task time, total work on its own row;
    `looplab replay` names main-agent steps and model calls of all agents apart."""
    runner = CliRunner()
    out = tmp_path / "imp"
    done = runner.invoke(
        app,
        ["--no-log-file", "import", "claude-code", str(SESSION), "-o", str(out)],
        terminal_width=200,
    )
    assert done.exit_code == 0, done.output
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in done.output.splitlines()
        if line.count("│") >= 3
    }
    assert rows["steps (main agent)"] == "3" and rows["model calls (all agents)"] == "10"
    task = float(rows["task time (critical path)"].split()[0])
    tool = float(rows["tool time (on the critical path)"].split()[0])
    assert tool <= task and float(rows["total work (all agents summed)"].split()[0]) > task
    replayed = runner.invoke(
        app, ["--no-log-file", "replay", str(out), "-o", str(tmp_path / "r")], terminal_width=200
    )
    assert "main-agent steps" in replayed.output and "model calls (all" in replayed.output


def test_bottom_line_says_total_work_apart() -> None:
    """The bottom line of a run with sub-agents: its dominant share is of the critical path
    (<= 100%) and total work is its own clause."""
    from looplab.report.views.bottom_line import bottom_lines

    session = _session()
    records = []
    for name in ("slow-80", "fast-750"):
        replayed = replay_virtual(session, resolve_profile(name, []))
        records.append(record_from_trace(replayed, name))
    (line,) = bottom_lines(records)
    assert line.dominant_share is not None and 0 < line.dominant_share <= 1
    assert line.work_fast_s is not None and line.work_fast_s > (line.fast_s or 0)
    assert "total work over parallel branches" in line.text


def test_calibrate_shape_keeps_each_runs_own_tools() -> None:
    """A shape of a tree: each call gets its own run's tools (sub-runs number their steps
    from 0 too; keyed by step alone, every step-0 call got every run's tools: 51 x 101)."""
    from looplab.workloads.shape import CONTINUE_TOOL, shape_from_trace

    trace = fan(50)
    shape = shape_from_trace(trace)
    played = [t for s in shape.steps for t in s.tools if t.name != CONTINUE_TOOL]
    assert len(played) == len(trace.tool_calls()) == 101
