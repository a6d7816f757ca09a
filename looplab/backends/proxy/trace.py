"""The trace of a wrapped agent run (`looplab wrap`): model calls measured at the proxy.

`wrap_events(calls, ...)` turns the proxy's `CallRecord`s into looplab-1 events:

- run axis zero = the first model request the proxy received; the run ends when the
  command exited (`run_end.exit_code`);
- one step per successful model call (`model_call`: sent = request received at the proxy,
  first/last token = first/last token released to the agent, end = response complete;
  tokens from the upstream's usage; the assembled message);
- the gap from a call's end to the next call (or the command's exit) is the agent's
  tools plus its harness: one `tool_call` event named after the tools the model asked
  for (or `harness`), marked estimated, and the step's `tool_s`. The proxy cannot see
  inside the agent, so tools and harness are not separated (`overhead_s` is 0, also
  marked);
- failed calls (HTTP errors) become `attempts` of the next successful call;
- calls that overlapped (an agent with parallel model calls) keep their measured times;
  the step's gap is then 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

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

__all__ = ["GAP_NOTE", "wrap_events"]

GAP_NOTE = (
    "gap between model calls at the proxy: the agent's tools and harness together (not separated)"
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
    origin = ordered[0].received if ordered else exited
    wall0 = ordered[0].received_wall if ordered else None

    def rel(t: float | None) -> float | None:
        return None if t is None else t - origin

    def wall(t: float) -> datetime | None:
        return None if wall0 is None else wall0 + timedelta(seconds=t)

    events: list[TraceEvent] = [
        RunStartEvent(
            run_id=run_id, wall_time=wall(0.0), start=0.0, end=0.0, task=task, prompt=prompt
        )
    ]
    pending: list[Attempt] = []
    model_total = tool_total = 0.0
    step = 0
    for index, call in enumerate(ordered):
        end = call.end if call.end is not None else call.received
        if call.status >= 300 or call.error is not None:
            pending.append(
                Attempt(
                    start=call.received - origin,
                    end=end - origin,
                    error=call.error or "error",
                    status=call.status or None,
                )
            )
            continue
        start = call.received - origin
        events.append(
            ModelCallEvent(
                run_id=run_id,
                step=step,
                wall_time=wall(start),
                start=start,
                end=end - origin,
                sent=start,
                first_token=rel(call.first_token),
                last_token=rel(call.last_token),
                prompt_tokens=call.usage.prompt,
                cached_tokens=call.usage.cached,
                completion_tokens=call.usage.completion,
                reasoning_tokens=call.usage.reasoning,
                finish_reason=call.finish_reason,
                model=call.model,
                profile=profile,
                request_id=call.request_id,
                message=call.message,
                attempts=pending,
                estimated=(
                    {} if call.stream else {"first_token": _UNSTREAMED, "last_token": _UNSTREAMED}
                ),
            )
        )
        pending = []
        following = next((c.received for c in ordered[index + 1 :]), exited)
        gap_end = max(end, following) - origin
        gap = gap_end - (end - origin)
        names = [
            str((t.get("function") or {}).get("name", "?"))
            for t in (call.message or {}).get("tool_calls") or []
        ]
        if gap > 0:
            events.append(
                ToolCallEvent(
                    run_id=run_id,
                    step=step,
                    wall_time=wall(end - origin),
                    start=end - origin,
                    end=gap_end,
                    name="+".join(names) if names else "harness",
                    estimated={"start": GAP_NOTE, "end": GAP_NOTE},
                )
            )
        model_s = end - call.received
        events.append(
            StepEvent(
                run_id=run_id,
                step=step,
                wall_time=wall(start),
                start=start,
                end=gap_end,
                model_s=model_s,
                tool_s=gap,
                overhead_s=0.0,
                estimated={"tool_s": GAP_NOTE, "overhead_s": "included in tool_s"},
            )
        )
        model_total += model_s
        tool_total += gap
        step += 1
    events.append(
        RunEndEvent(
            run_id=run_id,
            wall_time=wall(0.0),
            start=0.0,
            end=max(0.0, exited - origin),
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
