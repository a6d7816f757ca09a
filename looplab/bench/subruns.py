"""A run whose sub-agents nest in one deep chain, for `looplab bench report --chain`.

Built the way every producer builds traces: an importer's `RunDraft` with one `SubRunDraft`
per sub-run, put on the run axis by `traces.importers.build.build_run` (so the trace holds
what an imported Claude Code or Harbor session with sub-agents holds). Each run, the top
one and every sub-run, has two steps: a model call (0.3 s TTFT, 40 tokens at 80 tok/s) whose
`Task` tool call spans its one sub-run and a 0.1 s `bash` call, then a short joining call.
Times are invented (assumed): the shape, not the numbers, is what the bench exercises.
"""

from __future__ import annotations

from pathlib import Path

from looplab.traces.assembly.items import ModelDraft, StepDraft, ToolDraft
from looplab.traces.end_reason import EndReason
from looplab.traces.importers.build import build_run
from looplab.traces.importers.drafts import RunDraft, SubRunDraft
from looplab.traces.io import Trace

__all__ = ["chain_trace"]

ORIGIN = 1_800_000_000.0
"""The chain's first second (epoch seconds; invented)."""


def _call(start: float, tokens: int) -> tuple[ModelDraft, float]:
    """A model call of `tokens` output tokens at 80 tok/s after a 0.3 s TTFT, and its end."""
    first = start + 0.3
    end = first + tokens / 80
    call = ModelDraft(
        start=start,
        end=end,
        sent=start,
        first_token=first,
        last_token=end,
        prompt_tokens=1000,
        cached_tokens=0,
        completion_tokens=tokens,
    )
    return call, end


def _steps(start: float, child: str | None, child_end: float) -> tuple[list[StepDraft], float]:
    """One run's two steps from `start`, and its end; its step 0 waits for `child` (if any)
    until `child_end`."""
    call, called = _call(start, 40)
    tools = [ToolDraft(name="bash", start=called, end=called + 0.1)]
    joined = called + 0.1
    if child is not None:
        tools.append(ToolDraft(name="Task", start=called, end=child_end, call_id=f"task-{child}"))
        joined = max(joined, child_end)
    join, end = _call(joined, 10)
    return [StepDraft(model=call, tools=tools), StepDraft(model=join)], end


def chain_trace(depth: int) -> Trace:
    """One run whose `depth` sub-runs nest in a chain (each the only sub-run of the one
    before), built without recursion (a chain deeper than Python's stack is the point)."""
    runs: list[list[StepDraft]] = [[] for _ in range(depth + 1)]
    end = 0.0
    for level in range(depth, -1, -1):  # the deepest run first: its end is its parent's wait
        child = f"s{level}" if level < depth else None
        start = ORIGIN + 0.8 * level  # each starts once its parent's first call has answered
        runs[level], end = _steps(start, child, end)
    draft = RunDraft(
        fmt="looplab-bench",
        run_id="chain",
        source_path=Path("chain"),
        source_digest=f"chain-{depth}",
        steps=runs[0],
        task="bench/chain",
        agent="chain",
        end_reason=EndReason.FINISH,
        end_time=end,
        subruns=[
            SubRunDraft(
                id=f"s{level - 1}",
                steps=runs[level],
                parent=f"s{level - 2}" if level > 1 else None,
                parent_step=0,
                join_step=1,
                spawn_call_id=f"task-s{level - 1}",
                agent="sub",
            )
            for level in range(1, depth + 1)
        ],
    )
    run = build_run(draft)
    return Trace(header=run.header, events=run.events)
