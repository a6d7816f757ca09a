"""A run's timeline bars: each model call's phases and each tool call (with its browser
phases), in lanes, one lane group per sub-run (`lanes.py` names them)."""

from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import dataclass, replace

from looplab.report.data.lanes import SubRunLane, lane_name
from looplab.traces.schema import ModelCallEvent, ToolCallEvent

__all__ = ["TOOL_BAR_KINDS", "Bar", "computed", "run_bars"]


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar of a run's timeline (seconds on the run axis)."""

    lane: str
    """`model` or `tools`, `tools 2`, ... (parallel tool calls get their own lanes); a
    sub-run's lanes are prefixed with its label (`data/lanes.py`)."""
    kind: str
    """`queue`, `ttft` (TTFT + prefill), `reasoning` (hidden reasoning decode), `decode`
    (visible), `model` (unsplit), `tool`; a browser action split into its phases is
    `act`, `page_wait` and `observe` bars instead of one `tool` bar."""
    start: float
    end: float
    label: str
    estimated: bool = False
    tool: str = ""
    """The tool's name (tool bars)."""
    order: int = 0
    """Its run's position in the run tree (0: the top-level run; `data/lanes.py`)."""


TOOL_BAR_KINDS = ("tool", "act", "page_wait", "observe")
"""Bar kinds that are (parts of) tool calls."""
_PHASE_LABELS = {"act": "action", "page_wait": "page-load wait", "observe": "observation"}


def computed(clock: str) -> set[str]:
    """Model-call fields a virtual clock computes from the latency profile: not measured,
    but not guessed either (no importer estimate), so not drawn as estimated."""
    return {"ttft_s", "decode_s", "reasoning_s"} if clock == "virtual" else set()


def run_bars(
    calls: list[ModelCallEvent],
    tools: list[ToolCallEvent],
    computed: set[str],
    subruns: list[SubRunLane],
) -> list[Bar]:
    """Every run's bars in the tree: the top-level run's lanes, then each sub-run's own
    (named and ordered by `data/lanes.py`)."""
    calls_of: dict[str | None, list[ModelCallEvent]] = defaultdict(list)
    tools_of: dict[str | None, list[ToolCallEvent]] = defaultdict(list)
    for call in calls:
        calls_of[call.subrun].append(call)
    for tool in tools:
        tools_of[tool.subrun].append(tool)
    bars = _bars(calls_of[None], tools_of[None], computed)
    for sub in subruns:
        own = _bars(calls_of[sub.id], tools_of[sub.id], computed)
        bars += [replace(b, lane=lane_name(sub.label, b.lane), order=sub.order) for b in own]
    return bars


def _bars(calls: list[ModelCallEvent], tools: list[ToolCallEvent], computed: set[str]) -> list[Bar]:
    bars: list[Bar] = []
    for call in calls:
        label = f"step {call.step}"
        if call.purpose in ("planner", "reflection"):
            label += f" {call.purpose}"
        guessed = set(call.estimated) - computed
        estimated = bool(guessed)
        if call.sent is not None and call.first_token is not None and call.last_token is not None:
            if call.sent - call.start > 1e-4:
                bars.append(Bar("model", "queue", call.start, call.sent, f"{label} client queue"))
            first_any = call.first_token - (call.reasoning_s or 0.0)
            bars.append(
                Bar(
                    "model",
                    "ttft",
                    call.sent,
                    first_any,
                    f"{label} TTFT + prefill",
                    "ttft_s" in guessed,
                )
            )
            if call.reasoning_s:
                text = f"{label} reasoning (hidden), {call.reasoning_tokens} tokens"
                estimated = "reasoning_s" in guessed
                bars.append(Bar("model", "reasoning", first_any, call.first_token, text, estimated))
            tokens = call.completion_tokens
            text = f"{label} decode" + (f", {tokens} tokens" if tokens is not None else "")
            bars.append(
                Bar(
                    "model",
                    "decode",
                    call.first_token,
                    call.last_token,
                    text,
                    "decode_s" in guessed,
                )
            )
        else:
            bars.append(
                Bar("model", "model", call.start, call.end, f"{label} model call", estimated)
            )
    # each tool on the lowest lane free at its start; heaps keep it linear-logarithmic
    # in the tools (10,000 parallel sub-agent tools: a scan of every lane was quadratic)
    busy: list[tuple[float, int]] = []  # (end, lane)
    free: list[int] = []
    lanes = 0
    for tool in sorted(tools, key=lambda t: t.start):
        while busy and busy[0][0] <= tool.start + 1e-9:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane, lanes = lanes, lanes + 1
        heapq.heappush(busy, (tool.end, lane))
        name = "tools" if lane == 0 else f"tools {lane + 1}"
        bars.extend(_tool_bars(name, tool))
    return bars


def _tool_bars(lane: str, tool: ToolCallEvent) -> list[Bar]:
    """A tool call's bar, or its browser phases in order (action, page-load wait,
    observation) when it split its time."""
    label = f"step {tool.step} {tool.name}"
    split = [(k, tool.phases[k]) for k in _PHASE_LABELS if tool.phases.get(k)]
    if not split:
        return [Bar(lane, "tool", tool.start, tool.end, label, bool(tool.estimated), tool.name)]
    bars: list[Bar] = []
    at = tool.start
    scale = min(1.0, (tool.end - tool.start) / sum(s for _, s in split))
    for kind, seconds in split:
        end = min(tool.end, at + seconds * scale)
        text = f"{label} {_PHASE_LABELS[kind]}"
        bars.append(Bar(lane, kind, at, end, text, bool(tool.estimated), tool.name))
        at = end
    return bars
