"""A run's transcript: per step the model's message (hidden reasoning counted, never shown),
the tool calls with their arguments, outputs (cut to a bound), exit codes and errors, and
the step's timing beside them.

Only what the trace holds is shown: imported traces without content show their tool names
and timings and say what the source lacked (`absent`). Images are shown only when the
trace holds them as `data:` URLs (never fetched); the computer-use tools' results are the
page snapshots the agent read, plus the page's JPEG after each action when the run kept
trace screenshots (`agent.trace_screenshots`).
A live replay's diverged steps are marked (`looplab.analysis.divergence`) when the run it
replays is at hand.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from looplab.analysis.divergence import find_divergences, replay_of
from looplab.report.data.lanes import SubRunLane
from looplab.report.data.records import RunRecord
from looplab.report.data.steps import StepRow, step_rows
from looplab.report.views.graph import RunGraphView, run_graph
from looplab.traces.schema import ToolCallEvent

__all__ = [
    "REPORT_OUTPUT_CHARS",
    "SubRunTranscript",
    "ToolEntry",
    "TranscriptStep",
    "TranscriptView",
    "transcript",
]

REPORT_OUTPUT_CHARS = 2000
"""Tool outputs are cut to this many characters in a report file (the dashboard shows
everything the trace kept, up to its own 64 KiB cut)."""


@dataclass
class ToolEntry:
    """One tool call of a step."""

    name: str
    arguments: str
    """Pretty-printed JSON when the arguments parse, else as sent."""
    output: str | None
    """The result given back to the model, cut (None: not in the trace)."""
    output_chars: int | None
    """Length of the full result, when known."""
    exit_code: int | None
    ok: bool | None
    error: str | None
    duration_s: float
    screenshot: str | None = None
    """`data:image/jpeg;...` URL of the page after a browser action (None: not kept)."""


@dataclass
class TranscriptStep:
    """One step: message, tool calls and timing."""

    index: int
    row: StepRow
    text: str | None
    """The assistant's visible text (None: not in the trace)."""
    reasoning_tokens: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    tools: list[ToolEntry]
    images: list[str] = field(default_factory=list)
    """`data:image/...` URLs the step's message holds."""
    attempts: list[str] = field(default_factory=list)
    """Failed attempts before the call succeeded."""
    diverged: str = ""
    """What a live replay did differently here (empty: nothing, or not a replay)."""


@dataclass
class TranscriptView:
    """One run's transcript."""

    run_id: str
    anchor: str
    task: str
    group: str
    prompt: str | None
    steps: list[TranscriptStep]
    end_reason: str
    success: bool | None
    check_output: str | None
    error: str | None
    absent: list[str]
    has_content: bool
    """Whether the trace holds any message or tool output text."""
    graph: RunGraphView | None = None
    """The run's tree of sub-runs and critical path (None: a flat run)."""
    replay_of: str | None = None
    """The run this one is a live replay of, if it is one."""
    notes: list[str] = field(default_factory=list)
    subruns: list[SubRunTranscript] = field(default_factory=list)
    """Each sub-run's own steps, in run-tree order (`steps` holds the top-level run's)."""


@dataclass
class SubRunTranscript:
    """A sub-run's steps (a sub-agent's own conversation)."""

    lane: SubRunLane
    steps: list[TranscriptStep]


def _steps(
    record: RunRecord, subrun: str | None, output_chars: int | None, diverged: dict[int, str]
) -> list[TranscriptStep]:
    """The steps of the run, or of its sub-run `subrun`, with their messages and calls
    (the step's action call; planning and reflection calls are in its timing row)."""
    trace = record.trace
    if trace is None:
        return []
    own = trace.run_events(subrun)
    calls = {c.step or 0: c for c in own.model_calls if c.purpose not in ("planner", "reflection")}
    tools: dict[int, list[ToolCallEvent]] = defaultdict(list)
    for tool in own.tool_calls:
        tools[tool.step or 0].append(tool)
    steps = []
    for row in step_rows(record, subrun):
        call = calls.get(row.index)
        message = call.message if call else None
        steps.append(
            TranscriptStep(
                index=row.index,
                row=row,
                text=_text(message),
                reasoning_tokens=call.reasoning_tokens if call else None,
                prompt_tokens=call.prompt_tokens if call else None,
                completion_tokens=call.completion_tokens if call else None,
                tools=[
                    _entry(t, output_chars) for t in sorted(tools[row.index], key=lambda t: t.start)
                ],
                images=_images(message),
                attempts=[a.error for a in call.attempts] if call else [],
                diverged=diverged.get(row.index, ""),
            )
        )
    return steps


def transcript(
    record: RunRecord,
    *,
    output_chars: int | None = REPORT_OUTPUT_CHARS,
    recorded: RunRecord | None = None,
) -> TranscriptView | None:
    """The transcript of a run (None without its trace).

    Args:
        record: the run.
        output_chars: cut tool outputs to this many characters (None: as the trace holds).
        recorded: the run `record` is a live replay of, to mark the diverged steps.
    """
    trace = record.trace
    if trace is None:
        return None
    diverged: dict[int, str] = {}
    origin = replay_of(trace.header)
    if recorded is not None and recorded.trace is not None and origin == recorded.run_id:
        for d in find_divergences(recorded.trace, trace):
            diverged[d.step] = f"{d.tool}: recorded {d.recorded}, replayed {d.replayed}"
    steps = _steps(record, None, output_chars, diverged)
    subruns = [
        SubRunTranscript(lane=lane, steps=_steps(record, lane.id, output_chars, {}))
        for lane in record.subruns
    ]
    end = trace.end
    start = trace.events[0] if trace.events else None
    prompt = (end.prompt if end else None) or getattr(start, "prompt", None)
    return TranscriptView(
        run_id=record.run_id,
        anchor=record.anchor,
        task=record.task,
        group=record.group,
        prompt=prompt,
        steps=steps,
        end_reason=end.end_reason if end else "",
        success=end.success if end else None,
        check_output=end.check_output if end else None,
        error=end.error if end else None,
        absent=list(trace.header.absent),
        has_content=any(
            s.text or any(t.output for t in s.tools)
            for s in [*steps, *(x for sub in subruns for x in sub.steps)]
        ),
        subruns=subruns,
        replay_of=origin,
        graph=run_graph(trace),
    )


def _text(message: dict[str, Any] | None) -> str | None:
    if not message:
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(t for t in texts if isinstance(t, str)) or None
    return None


def _images(message: dict[str, Any] | None) -> list[str]:
    content = (message or {}).get("content")
    if not isinstance(content, list):
        return []
    urls = []
    for part in content:
        image = part.get("image_url") if isinstance(part, dict) else None
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str) and url.startswith("data:image/"):
            urls.append(url)
    return urls


def _entry(tool: ToolCallEvent, output_chars: int | None) -> ToolEntry:
    output = tool.output
    if output is not None and output_chars is not None and len(output) > output_chars:
        output = output[:output_chars]
    return ToolEntry(
        name=tool.name,
        arguments=_pretty(tool.arguments),
        output=output,
        output_chars=tool.output_chars if tool.output_chars is not None else _len(tool.output),
        exit_code=tool.exit_code,
        ok=tool.ok,
        error=tool.error,
        duration_s=tool.duration_s,
        screenshot=tool.screenshot if (tool.screenshot or "").startswith("data:image/") else None,
    )


def _len(text: str | None) -> int | None:
    return len(text) if text is not None else None


def _pretty(arguments: str) -> str:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    if not isinstance(parsed, dict | list):
        return arguments
    return json.dumps(parsed, indent=1, ensure_ascii=False)
