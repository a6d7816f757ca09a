"""Fan-out: the scripted fan-out plan, sub-agents on the same sandbox, parallel calls."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from looplab.agents.config import AgentConfig
from looplab.agents.runner import run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.policies.fanout import (
    fan_out,
    report_text,
    run_tests_task,
    search_task,
    subagent_plan,
)
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.config import load_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.record import run_events
from looplab.experiments.summaries.knob_table import variant_speedups
from looplab.latency.presets import resolve_profile
from looplab.report.data.knobs import KnobRow
from looplab.tasks import load_task
from looplab.tasks.solution import expand_solution
from looplab.traces.schema import ModelCallEvent, SubRunEvent, ToolCallEvent

FAST = ["ttft_s=0.05", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]


@pytest.fixture
def server() -> Iterator[SimulatorServer]:
    """A fast simulator (50 ms TTFT so concurrent model calls visibly overlap)."""
    with SimulatorServer(resolve_profile("fast-750", FAST)) as running:
        yield running


def _client(server: SimulatorServer) -> InstrumentedClient:
    return InstrumentedClient(EndpointConfig(base_url=server.base_url, model="looplab-scripted"))


def test_fan_out_merges_reads_and_delegates_them() -> None:
    """fix-discount's list/browse/read run becomes one step: list and browse in parallel
    with a search sub-agent for the read; the edit, test and finish steps stay."""
    task = load_task("coding/fix-discount")
    assert task.solution is not None
    steps = expand_solution(task.solution, {"docs_url": "http://x"})
    planned = fan_out(steps)
    assert len(planned) == len(steps) - 2
    tools = [c.tool for c in planned[0].calls]
    assert tools == ["delegate", "list_files", "browse"]
    assert planned[0].calls[0].args == {"role": "search", "task": search_task(["shop/pricing.py"])}
    assert [c.tool for s in planned[1:] for c in s.calls] == ["edit_file", "run_tests", "finish"]


def test_fan_out_batches_edits_of_distinct_files_only() -> None:
    """nbugs-12 (8 edits of calc/text.py, 4 of calc/numbers.py): 8 steps of edits, the
    first four pairing the files, each file's edits in order; the test run at the start
    goes to a test sub-agent keeping its expect."""
    task = load_task("coding/nbugs-12")
    assert task.solution is not None
    steps = expand_solution(task.solution, {"docs_url": "http://x", "n": "12"})
    planned = fan_out(steps)
    edits = [s for s in planned if s.calls and s.calls[0].tool == "edit_file"]
    assert [len(s.calls) for s in edits] == [2, 2, 2, 2, 1, 1, 1, 1]
    for path in ("calc/text.py", "calc/numbers.py"):
        wanted = [c.args for s in steps for c in s.calls if c.args.get("path") == path]
        assert [c.args for s in edits for c in s.calls if c.args["path"] == path] == wanted
    delegated = [c for c in planned[0].calls if c.tool == "delegate"]
    assert [c.args["role"] for c in delegated] == ["test"]
    assert delegated[0].expect == "FAILED"


def test_subagent_prompts_round_trip_and_reports_carry_verdicts() -> None:
    """The policy reads back the tasks it wrote; a report keeps each result's first line."""
    search = subagent_plan(search_task(["a.py", "b/c.py"]))
    assert search is not None
    assert [c.args for c in search[0].calls] == [{"path": "a.py"}, {"path": "b/c.py"}]
    test = subagent_plan(run_tests_task("balance"))
    assert test is not None and test[0].calls[0].args == {"keyword": "balance"}
    assert subagent_plan("Fix the bug.") is None
    assert "PASSED: 3 passed" in report_text(["PASSED: 3 passed\nmore", "x"])


async def test_fanout_run_delegates_to_concurrent_subagents(server: SimulatorServer) -> None:
    """nbugs-4 with fan-out: solved in fewer parent steps than without, its first step's
    test sub-agent ran on the same sandbox and overlapped the parent's other calls."""
    async with _client(server) as client:
        plain = await run_task(load_task("coding/nbugs-4"), client)
        fanned = await run_task(
            load_task("coding/nbugs-4"), client, agent_config=AgentConfig(fanout=True)
        )
    assert plain.check.passed and fanned.check.passed
    assert fanned.result.end_reason == "finish"
    assert len(fanned.result.steps) < len(plain.result.steps)
    subruns = fanned.result.subruns
    assert [s.role for s in subruns] == ["test"] and subruns[0].step == 0
    sub = subruns[0].result
    assert sub.end_reason == "answer" and "FAILED" in sub.final_text
    assert [t.name for t in sub.steps[0].tools] == ["run_tests"]
    first = fanned.result.steps[0].tools
    delegate = next(t for t in first if t.name == "delegate")
    browse = next(t for t in first if t.name == "browse")
    assert delegate.ok and [t.name for t in first] == ["list_files", "delegate", "browse"]
    assert browse.started < delegate.ended and delegate.started < browse.ended
    assert delegate.started <= sub.started and sub.ended <= delegate.ended
    assert fanned.result.tokens_used > sum(
        (s.model.prompt_tokens or 0) + (s.model.completion_tokens or 0)
        for s in fanned.result.steps
        if s.model is not None
    )


async def test_without_the_switch_the_plan_is_the_reference(server: SimulatorServer) -> None:
    """fanout off: no delegate tool, no sub-runs, one reference step per model call."""
    async with _client(server) as client:
        run = await run_task(load_task("coding/fix-pager"), client)
    assert run.check.passed and run.result.subruns == []
    assert all(t.name != "delegate" for s in run.result.steps for t in s.tools)
    assert len(run.result.steps) == 4


def test_fanout_on_the_virtual_clock_is_refused(tmp_path: Path) -> None:
    """The shipped fan-out config loads; switched to the virtual clock it is refused with
    the field and the reason named."""
    config = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "fanout.yaml"
    loaded = load_model(ExperimentConfig, config)
    assert loaded.clock == "wall" and {"agent.fanout": True} in loaded.variants
    bad = tmp_path / "bad.yaml"
    bad.write_text(config.read_text() + "clock: virtual\n")
    with pytest.raises(ConfigError, match=r"agent\.fanout: true needs clock: wall"):
        load_model(ExperimentConfig, bad)


def test_variant_speedups_line() -> None:
    """One line: each variant's slowest-over-fastest median task time."""
    rows = [
        KnobRow("slow", 80, "all-off", 5, 30.0, None, None, None, None, 0.9, 0.1, {}),
        KnobRow("fast", 750, "all-off", 5, 6.0, None, None, None, None, 0.6, 0.4, {}),
        KnobRow("slow", 80, "fanout", 5, 20.0, None, None, None, None, 0.9, 0.1, {}),
        KnobRow("fast", 750, "fanout", 5, 5.0, None, None, None, None, 0.6, 0.4, {}),
    ]
    line = variant_speedups(rows)
    assert line is not None
    assert "all-off 5.00x (30.00 s -> 6.00 s)" in line and "fanout 4.00x" in line
    assert variant_speedups(rows[:1]) is None


async def test_subruns_are_trace_events(server: SimulatorServer) -> None:
    """A fan-out run's trace (looplab-2) declares its sub-run (spawned by step 0, joined by
    step 1) and holds the sub-agent's own calls, tagged with its id, inside its span."""
    async with _client(server) as client:
        run = await run_task(
            load_task("coding/nbugs-4"), client, agent_config=AgentConfig(fanout=True)
        )
    events = run_events("r", run, origin_wall=datetime.now(UTC), model="m", profile=None)
    declared = [e for e in events if isinstance(e, SubRunEvent)]
    assert len(declared) == 1
    sub = declared[0]
    assert (sub.subrun, sub.agent, sub.parent_step, sub.join_step) == ("sub0", "test", 0, 1)
    inner = [e for e in events if e.subrun == "sub0" and not isinstance(e, SubRunEvent)]
    calls = [e for e in inner if isinstance(e, ModelCallEvent)]
    assert [c.step for c in calls] == [0, 1]
    assert [e.name for e in inner if isinstance(e, ToolCallEvent)] == ["run_tests"]
    assert all(sub.start - 1e-6 <= e.start and e.end <= sub.end + 1e-6 for e in inner)
    top = [e for e in events if isinstance(e, ModelCallEvent) and e.subrun is None]
    assert len(top) == len(run.result.steps)
