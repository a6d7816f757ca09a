"""Traces with sub-runs built in code: wide fans and random trees (tests only; events
constructed directly, which only tests may do). A deep chain is `looplab.bench.subruns`'
`chain_trace`, built through the importers' drafts, which the tests use too.

Each run (the top-level one and every sub-run) has the same two-step shape: step 0 is a
model call (with token counts, so it re-times) and, when it spawns, a `Task`-like tool call
that waits for its sub-runs; step 1 (the join) is a short model call. Times are invented
(assumed), chosen so that every run's own work and its sub-runs overlap.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from looplab.traces.end_reason import EndReason
from looplab.traces.io import Trace, write_trace
from looplab.traces.schema import (
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    StepEvent,
    SubRunEvent,
    ToolCallEvent,
    TraceEvent,
    TraceHeader,
)

RUN = "subrun-trace"
CREATED = datetime(2026, 12, 7, tzinfo=UTC)


def _call(run: str | None, step: int, start: float, tokens: int) -> ModelCallEvent:
    """A model call of `tokens` output tokens recorded at 80 tok/s after a 0.3 s TTFT."""
    first = start + 0.3
    last = first + tokens / 80
    return ModelCallEvent(
        run_id=RUN,
        subrun=run,
        step=step,
        start=start,
        end=last,
        sent=start,
        first_token=first,
        last_token=last,
        prompt_tokens=1000,
        cached_tokens=0,
        completion_tokens=tokens,
    )


class TreeBuilder:
    """Builds one trace from a parent list: `parents[i]` is sub-run i's parent index
    (-1: the top-level run); `tools[i]` seconds of own tool time in run i's step 0."""

    def __init__(self, parents: list[int], tokens: list[int], tools: list[float]) -> None:
        self.parents, self.tokens, self.tools = parents, tokens, tools
        self.children: dict[int, list[int]] = {}
        for child, parent in enumerate(parents):
            self.children.setdefault(parent, []).append(child)
        self.events: list[TraceEvent] = []

    def build(self, top_tokens: int = 400, top_tool: float = 2.0) -> Trace:
        """The trace (run_start, the runs' events, run_end at the recorded end)."""
        self.events = [RunStartEvent(run_id=RUN, start=0.0, end=0.0)]
        end = self._run(-1, 0.0, top_tokens, top_tool)
        self.events.append(
            RunEndEvent(run_id=RUN, start=0.0, end=end, end_reason=EndReason.FINISH, steps=2)
        )
        header = TraceHeader(run_id=RUN, created=CREATED, agent="tree", task="tree/t1")
        return Trace(header=header, events=self.events)

    def _run(self, index: int, start: float, tokens: int, tool: float) -> float:
        """Run `index` from `start` (iteratively over the tree: a stack of frames)."""
        # frame: (index, start) -> returns end; an explicit stack keeps deep chains safe
        ends: dict[int, float] = {}
        order: list[tuple[int, float]] = []
        stack = [(index, start)]
        while stack:
            run, at = stack.pop()
            order.append((run, at))
            call_end = at + 0.3 + (tokens if run == -1 else self.tokens[run]) / 80
            for child in self.children.get(run, []):
                stack.append((child, call_end))
        for run, at in reversed(order):  # children before parents
            name = None if run == -1 else f"s{run}"
            own_tokens = tokens if run == -1 else self.tokens[run]
            own_tool = tool if run == -1 else self.tools[run]
            call = _call(name, 0, at, own_tokens)
            kids = self.children.get(run, [])
            spawn_end = max([ends[k] for k in kids], default=call.end)
            tool_end = call.end + own_tool
            step0_end = max(spawn_end, tool_end)
            self.events.append(call)
            if own_tool:
                self.events.append(
                    ToolCallEvent(
                        run_id=RUN, subrun=name, step=0, start=call.end, end=tool_end, name="bash"
                    )
                )
            for k in kids:
                self.events.append(
                    ToolCallEvent(
                        run_id=RUN,
                        subrun=name,
                        step=0,
                        start=call.end,
                        end=ends[k],
                        name="Task",
                        call_id=f"task-s{k}",
                    )
                )
            self.events.append(_step(name, 0, at, step0_end, call.end - at))
            join = _call(name, 1, step0_end, 40)
            self.events += [join, _step(name, 1, join.start, join.end, join.end - join.start)]
            ends[run] = join.end
            if run != -1:
                self.events.append(
                    SubRunEvent(
                        run_id=RUN,
                        subrun=name,
                        start=at,
                        end=join.end,
                        parent=None if self.parents[run] == -1 else f"s{self.parents[run]}",
                        parent_step=0,
                        join_step=1,
                        spawn_call_id=f"task-s{run}",
                        agent="sub",
                    )
                )
        return ends[index]


def _step(run: str | None, step: int, start: float, end: float, model: float) -> StepEvent:
    """A step's summary: its model call, then tools (or waiting) to its end."""
    return StepEvent(
        run_id=RUN,
        subrun=run,
        step=step,
        start=start,
        end=end,
        model_s=model,
        tool_s=end - start - model,
        overhead_s=0.0,
    )


def fan(n: int) -> Trace:
    """`n` sub-runs spawned in parallel by the top-level run's step 0, joined by its step 1."""
    return TreeBuilder([-1] * n, [40 + i % 7 for i in range(n)], [0.5] * n).build()


def write(trace: Trace, path: Path) -> Path:
    """Write `trace` to `path` (`write_trace`: atomic, looplab-2); return the path."""
    write_trace(path, trace.header, trace.events)
    return path
