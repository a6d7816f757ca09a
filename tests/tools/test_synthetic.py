"""The synthetic work tool of trace-driven runs, in a real LocalSandbox."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest

from looplab.latency.tokens import default_tokenizer
from looplab.sandbox_contract import SandboxEvent
from looplab.sandboxes.local import LocalSandbox
from looplab.tools.base import ToolContext
from looplab.tools.registry import ToolBox
from looplab.tools.synthetic import SyntheticWork, filler_text, synthetic_tools

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)


@pytest.fixture
async def sandbox_events() -> AsyncIterator[tuple[ToolContext, list[SandboxEvent]]]:
    """A local sandbox and the events it reports."""
    events: list[SandboxEvent] = []
    async with await LocalSandbox.create(sink=events.append) as sandbox:
        yield ToolContext(sandbox=sandbox), events


async def test_call_lasts_its_seconds_doing_work_in_the_sandbox(
    sandbox_events: tuple[ToolContext, list[SandboxEvent]],
) -> None:
    """A call lasts its `seconds` (measured), spent in one sandbox exec, marked synthetic."""
    context, events = sandbox_events
    box = ToolBox(synthetic_tools(["bash", "edit"], SyntheticWork()), output_limit=None)
    for seconds in (0.3, 0.15, 0.4):
        events.clear()
        started = time.perf_counter()
        result = await box.call("edit", json.dumps({"seconds": seconds, "tokens": 50}), context)
        elapsed = time.perf_counter() - started
        assert result.ok and result.synthetic and not result.finish
        assert seconds - 0.002 <= elapsed <= seconds + 0.06
        execs = [e for e in events if e.kind == "exec"]
        assert len(execs) == 1 and "sleep" in str(execs[0].detail)
        assert execs[0].duration_s >= seconds * 0.6
        assert default_tokenizer().count(result.content) == 50
        assert result.content.startswith("synthetic edit: ")


async def test_cpu_share_burns_in_the_sandbox(
    sandbox_events: tuple[ToolContext, list[SandboxEvent]],
) -> None:
    """With cpu_share 1 the call burns a CPU in the sandbox for its duration."""
    context, events = sandbox_events
    work = SyntheticWork(cpu_share=1.0)
    assert work.command(0.2).startswith("timeout 0.200 sh -c")
    started = time.perf_counter()
    result = await synthetic_tools(["bash"], work)[0].run({"seconds": 0.25, "tokens": 0}, context)
    assert 0.248 <= time.perf_counter() - started <= 0.35
    assert result.content == "" and "timeout" in str(events[-1].detail)


async def test_fail_final_and_zero_seconds(
    sandbox_events: tuple[ToolContext, list[SandboxEvent]],
) -> None:
    """`fail` gives an ERROR result, `final` ends the run, 0 seconds runs nothing."""
    context, events = sandbox_events
    tool = synthetic_tools(["continue"], SyntheticWork())[0]
    failed = await tool.run({"seconds": 0.01, "tokens": 30, "fail": True}, context)
    assert not failed.ok and failed.content.startswith("ERROR: ")
    events.clear()
    final = await tool.run({"seconds": 0, "tokens": 3, "final": True}, context)
    assert final.finish and final.ok and events == []


def test_filler_is_exactly_the_asked_tokens() -> None:
    """The result text has exactly the asked number of tokens, header or not."""
    tokenizer = default_tokenizer()
    for tokens in (1, 2, 5, 17, 400, 9000):
        text = filler_text("synthetic bash: 1.000 s of work (sleep) in the sandbox", tokens,
                           tokenizer)  # fmt: skip
        assert tokenizer.count(text) == tokens
    assert filler_text("header", 0, tokenizer) == ""


async def test_observation_wait_follows_the_work_outside_the_sandbox(
    sandbox_events: tuple[ToolContext, list[SandboxEvent]],
) -> None:
    """`wait` (a computer-use action's page load and screenshot) lengthens the call after
    its sandbox work, which stays `seconds` long, and the result says so."""
    context, events = sandbox_events
    box = ToolBox(synthetic_tools(["click"], SyntheticWork()), output_limit=None)
    started = time.perf_counter()
    arguments = json.dumps({"seconds": 0.1, "tokens": 30, "wait": 0.4})
    result = await box.call("click", arguments, context)
    elapsed = time.perf_counter() - started
    assert result.ok and elapsed >= 0.5 - 0.002
    execs = [e for e in events if e.kind == "exec"]
    assert len(execs) == 1 and "sleep 0.0" in str(execs[0].detail["command"])
    assert "0.400 s of observation wait" in result.content
