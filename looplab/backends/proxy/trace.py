"""The trace of a wrapped agent run (`looplab wrap`): model calls measured at the proxy.

`wrap_events(calls, ...)` turns the proxy's `CallRecord`s into looplab-1 events, through the
trace builder (`looplab.traces.assembly`, which computes each step's split and the totals):

- run axis zero = the first model request the proxy received; the run ends when the
  command exited (`run_end.exit_code`); its verdict (`success`, `verdict_by`,
  `check_output`) is the caller's (`wrap.py`: the exit code, or `--check CMD`);
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
from typing import Any

from looplab.backends.proxy.calls import CallRecord
from looplab.backends.proxy.verdict import WrapVerdict
from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import EventBuilder
from looplab.traces.assembly.items import ModelDraft, RunEndDraft, StepDraft, ToolDraft
from looplab.traces.end_reason import EndReason
from looplab.traces.schema import Attempt, TraceEvent

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
    verdict: WrapVerdict | None = None,
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
        verdict: whether the task was solved and who said so (None: unknown).
    """
    ordered = sorted(calls, key=lambda c: c.received)
    axis = RunAxis(
        ordered[0].received if ordered else exited, ordered[0].received_wall if ordered else None
    )
    builder = EventBuilder(run_id, axis)
    events: list[TraceEvent] = [builder.run_start(task=task, prompt=prompt)]
    pending: list[Attempt] = []
    for index, call in enumerate(ordered):
        end = call.end if call.end is not None else call.received
        if call.status >= 300 or call.error is not None:
            pending.append(
                builder.attempt(call.received, end, call.error or "error", call.status or None)
            )
            continue
        following = next((c.received for c in ordered[index + 1 :]), exited)
        model = _model_call(call, end, profile, pending)
        events += builder.step(builder.totals.steps, _step(call, model, following))
        pending = []
    error = None if exit_code == 0 else f"the command exited with status {exit_code}"
    end_draft = RunEndDraft(
        end_reason=EndReason.EXIT,
        end_time=exited,
        error=error,
        exit_code=exit_code,
        success=verdict.success if verdict else None,
        verdict_by=verdict.by if verdict else None,
        check_output=verdict.output if verdict else None,
        estimated={"tool_s": GAP_NOTE},
    )
    events.append(builder.run_end(end_draft))
    return events


_UNSTREAMED = "not streamed: the profile's schedule for the call's tokens"


def _model_call(
    call: CallRecord, end: float, profile: str | None, attempts: list[Attempt]
) -> ModelDraft:
    """A successful call, with the failed calls before it."""
    return ModelDraft(
        start=call.received,
        end=end,
        sent=call.received,
        first_token=call.first_token,
        last_token=call.last_token,
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
        transport=call.transport,
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


def _step(call: CallRecord, model: ModelDraft, following: float) -> StepDraft:
    """The call and the gap after it: the tools the model asked for plus the harness (a
    `tool_call` item), or, when it asked for none, the agent's own time (the step's
    overhead)."""
    assert model.end is not None
    gap_end = max(model.end, following)
    tool_calls = list((call.message or {}).get("tool_calls") or [])
    names = [str((t.get("function") or {}).get("name", "?")) for t in tool_calls]
    tools: list[ToolDraft] = []
    if gap_end > model.end and names:
        tools.append(
            ToolDraft(
                name="+".join(names),
                start=model.end,
                end=gap_end,
                call_id=str(tool_calls[0].get("id")) if len(tool_calls) == 1 else None,
                arguments=_tool_arguments(tool_calls),
                estimated={"start": GAP_NOTE, "end": GAP_NOTE},
            )
        )
    split = (
        {"tool_s": GAP_NOTE, "overhead_s": "included in tool_s"}
        if names
        else {"overhead_s": AGENT_NOTE}
    )
    return StepDraft(model=model, tools=tools, start=call.received, end=gap_end, estimated=split)
