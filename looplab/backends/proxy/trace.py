"""The trace of a wrapped agent run (`looplab wrap`): model calls measured at the proxy.

`wrap_events(calls, ...)` turns the proxy's `CallRecord`s into looplab-1 events:

- run axis zero = the first model request the proxy received; the run ends when the
  command exited (`run_end.exit_code`);
- one step per successful model call (`model_call`: sent = request received at the proxy,
  first/last token = first/last token released to the agent, end = response complete;
  tokens from the upstream's usage; the assembled message);
- the gap from a call's end to the next call (or the command's exit) is the agent's own
  time. When the model asked for tools, it is their run plus the harness: one
  `tool_call` event named after the tools, with their arguments as the model sent them
  (one call: its JSON text; several: a JSON list of `{name, arguments}`), marked
  estimated, and the step's `tool_s`; the proxy cannot see inside the agent, so tools and
  harness are not separated. When the model asked for none, no tool ran: the gap is the
  agent's own (harness) time, the step's `overhead_s`, never a tool;
- failed calls (HTTP errors) become `attempts` of the next successful call;
- calls that overlapped (an agent with parallel model calls) keep their measured times;
  the step's gap is then 0.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from looplab.backends.proxy.calls import CallRecord
from looplab.traces.schema import (
    Attempt,
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = ["AGENT_NOTE", "GAP_NOTE", "wrap_events"]

GAP_NOTE = (
    "gap between model calls at the proxy: the agent's tools and harness together (not separated)"
)
AGENT_NOTE = (
    "gap between model calls at the proxy after a reply without tool calls: the agent's own "
    "(harness) time, no tool"
)


def wrap_events(
    run_id: str,
    calls: Sequence[CallRecord],
    *,
    exited: float,
    exit_code: int,
    task: str | None,
    prompt: str | None = None,
    profile: str | None = None,
) -> list[TraceEvent]:
    """The events of one wrapped run (see the module docstring).

    Args:
        run_id: the run's id.
        calls: the proxy's records, any order.
        exited: when the command exited (clock seconds, as the records').
        exit_code: its exit status.
        task: a task label, if the caller gave one.
        prompt: the command line, for the record.
        profile: the profile name stamped on each model call.
    """
    ordered = sorted(calls, key=lambda c: c.received)
    axis = _Axis(
        ordered[0].received if ordered else exited, ordered[0].received_wall if ordered else None
    )
    events: list[TraceEvent] = [
        RunStartEvent(
            run_id=run_id, wall_time=axis.wall(0.0), start=0.0, end=0.0, task=task, prompt=prompt
        )
    ]
    pending: list[Attempt] = []
    model_total = tool_total = 0.0
    step = 0
    for index, call in enumerate(ordered):
        end = call.end if call.end is not None else call.received
        if call.status >= 300 or call.error is not None:
            pending.append(_attempt(call, end, axis))
            continue
        following = next((c.received for c in ordered[index + 1 :]), exited)
        model = _model_call(run_id, step, call, end, axis, profile, pending)
        gap_events, gap, tools = _gap(run_id, step, call, end, following, axis)
        events += [model, *gap_events]
        pending = []
        model_total += end - call.received
        tool_total += gap if tools else 0.0
        step += 1
    events.append(
        RunEndEvent(
            run_id=run_id,
            wall_time=axis.wall(0.0),
            start=0.0,
            end=max(0.0, exited - axis.origin),
            end_reason="exit",
            steps=step,
            model_s=model_total,
            tool_s=tool_total,
            error=None if exit_code == 0 else f"the command exited with status {exit_code}",
            exit_code=exit_code,
            estimated={"tool_s": GAP_NOTE},
        )
    )
    return events


_UNSTREAMED = "not streamed: the profile's schedule for the call's tokens"


@dataclass(frozen=True)
class _Axis:
    """The run's time axis: zero at `origin` (clock seconds), which was `wall0` (UTC)."""

    origin: float
    wall0: datetime | None

    def rel(self, t: float | None) -> float | None:
        """Clock seconds -> run seconds (None stays None)."""
        return None if t is None else t - self.origin

    def wall(self, t: float) -> datetime | None:
        """Run seconds -> wall time (None without any call)."""
        return None if self.wall0 is None else self.wall0 + timedelta(seconds=t)


def _attempt(call: CallRecord, end: float, axis: _Axis) -> Attempt:
    """A failed call, as an attempt of the next successful one."""
    return Attempt(
        start=call.received - axis.origin,
        end=end - axis.origin,
        error=call.error or "error",
        status=call.status or None,
    )


def _model_call(
    run_id: str,
    step: int,
    call: CallRecord,
    end: float,
    axis: _Axis,
    profile: str | None,
    attempts: list[Attempt],
) -> ModelCallEvent:
    """A successful call's `model_call` event, with the failed calls before it."""
    start = call.received - axis.origin
    return ModelCallEvent(
        run_id=run_id,
        step=step,
        wall_time=axis.wall(start),
        start=start,
        end=end - axis.origin,
        sent=start,
        first_token=axis.rel(call.first_token),
        last_token=axis.rel(call.last_token),
        prompt_tokens=call.usage.prompt,
        cached_tokens=call.usage.cached,
        completion_tokens=call.usage.completion,
        reasoning_tokens=call.usage.reasoning,
        finish_reason=call.finish_reason,
        model=call.model,
        profile=profile,
        request_id=call.request_id,
        message=call.message,
        attempts=attempts,
        estimated=({} if call.stream else {"first_token": _UNSTREAMED, "last_token": _UNSTREAMED}),
    )


def _tool_arguments(tool_calls: Sequence[dict[str, Any]]) -> str:
    """The arguments the model sent: one call's JSON text, or several as a JSON list."""
    functions = [t.get("function") or {} for t in tool_calls]
    if len(functions) == 1:
        return str(functions[0].get("arguments") or "")
    return json.dumps(
        [{"name": f.get("name", "?"), "arguments": f.get("arguments") or ""} for f in functions]
    )


def _gap(
    run_id: str, step: int, call: CallRecord, end: float, following: float, axis: _Axis
) -> tuple[list[TraceEvent], float, bool]:
    """The gap after a call: the tools the model asked for plus the harness (a `tool_call`
    event), or, when it asked for none, the agent's own time (the step's overhead).

    Returns:
        The events, the gap in seconds, and whether it holds tool calls.
    """
    start = call.received - axis.origin
    gap_end = max(end, following) - axis.origin
    gap = gap_end - (end - axis.origin)
    tool_calls = list((call.message or {}).get("tool_calls") or [])
    names = [str((t.get("function") or {}).get("name", "?")) for t in tool_calls]
    events: list[TraceEvent] = []
    if gap > 0 and names:
        events.append(
            ToolCallEvent(
                run_id=run_id,
                step=step,
                wall_time=axis.wall(end - axis.origin),
                start=end - axis.origin,
                end=gap_end,
                call_id=str(tool_calls[0].get("id")) if len(tool_calls) == 1 else None,
                name="+".join(names),
                arguments=_tool_arguments(tool_calls),
                estimated={"start": GAP_NOTE, "end": GAP_NOTE},
            )
        )
    split = (
        {"tool_s": GAP_NOTE, "overhead_s": "included in tool_s"}
        if names
        else {"overhead_s": AGENT_NOTE}
    )
    events.append(
        StepEvent(
            run_id=run_id,
            step=step,
            wall_time=axis.wall(start),
            start=start,
            end=gap_end,
            model_s=end - call.received,
            tool_s=gap if names else 0.0,
            overhead_s=0.0 if names else gap,
            estimated=split,
        )
    )
    return events, gap, bool(names)
