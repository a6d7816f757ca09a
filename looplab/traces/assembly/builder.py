"""`EventBuilder`: one run's items -> its `looplab-1` events, on one run axis.

Each producer makes one builder per run (`EventBuilder(run_id, RunAxis(...))`) and feeds it
in trace order: `run_start`, then per step `step(index, StepDraft)` (its model call,
planning / reflection calls, tool calls, sandbox operations and the step's split), sandbox
operations outside steps by `sandbox_op`, and last `run_end`, whose totals are the sums of
the steps' splits. The builder counts what it made (`totals`) for importers' reports.

`inferred=True` (imports: the run is read after the fact) makes a run total with no timed
item absent (None) rather than zero, and a step whose tools overlap its model call say that
its split counted the overlap as model time.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from looplab.traces.assembly.axis import RunAxis, has_source_times
from looplab.traces.assembly.items import (
    ModelDraft,
    RunEndDraft,
    SandboxDraft,
    StepDraft,
    ToolDraft,
)
from looplab.traces.assembly.split import Span, step_split
from looplab.traces.end_reason import EndReason
from looplab.traces.schema import (
    Attempt,
    ModelCallEvent,
    RunEndEvent,
    RunStartEvent,
    SandboxOpEvent,
    StepEvent,
    ToolCallEvent,
    TraceEvent,
)

__all__ = ["OUTPUT_LIMIT", "EventBuilder", "RunTotals"]

OUTPUT_LIMIT = 64 * 1024
"""Tool outputs are cut to this many characters (the schema's contract)."""


@dataclass
class RunTotals:
    """What the builder made so far: counts, token sums and the steps' time sums."""

    steps: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    sandbox_ops: int = 0
    timed_models: int = 0
    timed_tools: int = 0
    prompt: int | None = None
    cached: int | None = None
    completion: int | None = None
    model_s: float = 0.0
    tool_s: float = 0.0

    def add_model(self, m: ModelDraft) -> None:
        """Count a model call and its tokens (a sum stays None until a call has it)."""
        self.model_calls += 1
        if m.prompt_tokens is not None:
            self.prompt = (self.prompt or 0) + m.prompt_tokens
        if m.cached_tokens is not None:
            self.cached = (self.cached or 0) + m.cached_tokens
        if m.completion_tokens is not None:
            self.completion = (self.completion or 0) + m.completion_tokens


class EventBuilder:
    """Builds one run's events (see the module docstring).

    Args:
        run_id: the run's id, stamped on every event.
        axis: the run axis the items' clock times go through.
        inferred: the run is read after the fact (imports, collect).
    """

    def __init__(self, run_id: str, axis: RunAxis, *, inferred: bool = False) -> None:
        self.run_id = run_id
        self.axis = axis
        self.inferred = inferred
        self.totals = RunTotals()

    def run_start(
        self,
        *,
        task: str | None = None,
        prompt: str | None = None,
        sandbox_start_s: float | None = None,
        estimated: dict[str, str] | None = None,
    ) -> RunStartEvent:
        """The `run_start` event, at the origin."""
        return RunStartEvent(
            run_id=self.run_id,
            wall_time=self.axis.wall(0.0),
            start=0.0,
            end=0.0,
            task=task,
            prompt=prompt,
            sandbox_start_s=sandbox_start_s,
            estimated=estimated or {},
        )

    def attempt(
        self, start: float, end: float, error: str, status: int | None, wait_s: float = 0.0
    ) -> Attempt:
        """A failed attempt at a model call (clock times), for `ModelDraft.attempts`."""
        return Attempt(
            start=self.axis.at(start),
            end=self.axis.at(end),
            error=error,
            status=status,
            wait_s=wait_s,
        )

    def model_call(
        self, step: int | None, m: ModelDraft, step_est: dict[str, str] | None = None
    ) -> ModelCallEvent:
        """A model call; how its placement bears on the step's split goes in `step_est`."""
        est = dict(m.estimated)
        start, end = self.axis.place(m.start, m.end, est)
        notes = {} if step_est is None else step_est
        if has_source_times(est):
            self.totals.timed_models += 1
        else:
            notes["model_s"] = "the model call has no times: counted as zero"
        if ("start" in est or "end" in est) and not m.duration_measured:
            notes.setdefault("model_s", "from the model call's estimated start/end")
        event = ModelCallEvent(
            run_id=self.run_id,
            step=step,
            wall_time=self.axis.wall(start),
            start=start,
            end=end,
            estimated=est,
            sent=self.axis.rel(m.sent),
            first_token=self.axis.rel(m.first_token),
            last_token=self.axis.rel(m.last_token),
            prompt_tokens=m.prompt_tokens,
            cached_tokens=m.cached_tokens,
            completion_tokens=m.completion_tokens,
            reasoning_tokens=m.reasoning_tokens,
            finish_reason=m.finish_reason,
            model=m.model,
            purpose=m.purpose,
            profile=m.profile,
            request_id=m.request_id,
            message=m.message,
            attempts=list(m.attempts),
            transport=m.transport,
        )
        self.totals.add_model(m)
        return event

    def tool_call(
        self, step: int | None, t: ToolDraft, step_est: dict[str, str] | None = None
    ) -> ToolCallEvent:
        """A tool call, its output cut to `OUTPUT_LIMIT` characters."""
        est = dict(t.estimated)
        start, end = self.axis.place(t.start, t.end, est, t.duration)
        notes = {} if step_est is None else step_est
        if has_source_times(est):
            self.totals.timed_tools += 1
        else:
            notes["tool_s"] = "a tool call has no times: counted as zero"
        if ("start" in est or "end" in est) and not t.duration_measured:
            notes.setdefault("tool_s", "from tool calls' estimated start/end")
        self.totals.tool_calls += 1
        return ToolCallEvent(
            run_id=self.run_id,
            step=step,
            wall_time=self.axis.wall(start),
            start=start,
            end=end,
            estimated=est,
            call_id=t.call_id,
            name=t.name,
            arguments=t.arguments,
            ok=t.ok,
            exit_code=t.exit_code,
            error=t.error,
            output=None if t.output is None else t.output[:OUTPUT_LIMIT],
            output_chars=t.output_chars,
            synthetic=t.synthetic,
            screenshot=None if t.screenshot_jpeg is None else _jpeg_url(t.screenshot_jpeg),
            dispatch=t.dispatch,
            dispatch_token=t.dispatch_token,
            dispatch_fraction=t.dispatch_fraction,
            queued_s=t.queued_s,
            phases=dict(t.phases),
            observation=t.observation,
            cut=t.cut,
        )

    def sandbox_op(self, step: int | None, s: SandboxDraft) -> SandboxOpEvent:
        """A sandbox operation (step None: outside the steps, e.g. the sandbox's create)."""
        est = dict(s.estimated)
        start, end = self.axis.place(s.start, s.end, est)
        self.totals.sandbox_ops += 1
        return SandboxOpEvent(
            run_id=self.run_id,
            step=step,
            wall_time=s.wall_time if s.wall_time is not None else self.axis.wall(start),
            start=start,
            end=end,
            estimated=est,
            op=s.op,
            sandbox_id=s.sandbox_id,
            detail=s.detail,
        )

    def step(self, index: int, draft: StepDraft) -> list[TraceEvent]:
        """The step's model call, side calls, tool calls, sandbox operations and its split
        (the `step` event; none when the step has neither bounds nor timed items)."""
        est = dict(draft.estimated)
        events: list[TraceEvent] = []
        model: Span | None = None
        if draft.model is not None:
            call = self.model_call(index, draft.model, est)
            model = (call.start, call.end)
            events.append(call)
        sides = [self.model_call(index, m) for m in draft.side_calls]
        tools = [self.tool_call(index, t, est) for t in draft.tools]
        events += [*sides, *tools, *(self.sandbox_op(index, s) for s in draft.sandbox)]
        self.totals.steps += 1
        later = [(m.start, m.end) for m in sides]
        summary = self._summary(
            index, draft, (model, later), [(t.start, t.end) for t in tools], est
        )
        if summary is not None:
            self.totals.model_s += summary.model_s
            self.totals.tool_s += summary.tool_s
            events.append(summary)
        return events

    def _summary(
        self,
        index: int,
        draft: StepDraft,
        calls: tuple[Span | None, list[Span]],
        tools: list[Span],
        est: dict[str, str],
    ) -> StepEvent | None:
        """The step event: bounds from the draft or its items, the split by `step_split`
        (`calls`: the model call's span and the side calls' spans, on the axis)."""
        model, later = calls
        spans = ([model] if model else []) + tools
        if (draft.start is None or draft.end is None) and not spans:
            return None
        start = self.axis.at(draft.start) if draft.start is not None else min(a for a, _ in spans)
        end = self.axis.at(draft.end) if draft.end is not None else max(b for _, b in spans)
        phase = model
        if draft.model_phase is not None:
            phase = (self.axis.at(draft.model_phase[0]), self.axis.at(draft.model_phase[1]))
        split = step_split(start, end, phase, tools, later)
        if self.inferred and model is not None and any(a < model[1] for a, _ in tools):
            est.setdefault(
                "tool_s", "tool time overlapping the model call is counted as model time"
            )
        if est:
            est.setdefault("overhead_s", "step wall minus the estimated splits")
        return StepEvent(
            run_id=self.run_id,
            step=index,
            wall_time=self.axis.wall(start),
            start=start,
            end=end,
            estimated=est,
            model_s=split.model_s,
            tool_s=split.tool_s,
            overhead_s=split.overhead_s,
            phases=_phases(draft.tools),
        )

    def run_end(self, draft: RunEndDraft) -> RunEndEvent:
        """The `run_end` event: from the origin to the run's end, with the steps' summed
        model and tool time. A live run ends at its measured `end_time` (its model calls
        may end later on a virtual clock); a run read after the fact ends no earlier than
        its last item, and at the last item when the source has no end time."""
        end = self.axis.cursor
        if draft.end_time is not None and self.axis.origin is not None:
            at_end = self.axis.at(draft.end_time)
            end = max(end, at_end) if self.inferred else max(0.0, at_end)
        totals = self.totals
        absent = self.inferred
        return RunEndEvent(
            run_id=self.run_id,
            wall_time=self.axis.wall(0.0),
            start=0.0,
            end=end,
            estimated=dict(draft.estimated),
            end_reason=draft.end_reason or EndReason.UNKNOWN,
            success=draft.success,
            verdict_by=draft.verdict_by if draft.success is not None else None,
            check_output=draft.check_output,
            steps=totals.steps,
            model_s=None if absent and not totals.timed_models else totals.model_s,
            # a run without tool calls spent 0 s in tools: known, not absent
            tool_s=(
                None if absent and totals.tool_calls and not totals.timed_tools else totals.tool_s
            ),
            error=draft.error,
            sandbox_start_s=draft.sandbox_start_s,
            end_to_end_s=draft.end_to_end_s,
            prompt=draft.prompt,
            loop_lag_p99_ms=draft.loop_lag_p99_ms,
            exit_code=draft.exit_code,
            knobs=dict(draft.knobs),
            knob_stats=dict(draft.knob_stats),
        )


def _phases(tools: list[ToolDraft]) -> dict[str, float]:
    """The step's browser phases summed over its tool calls (empty: none split its time)."""
    out: dict[str, float] = {}
    for tool in tools:
        for name, seconds in tool.phases.items():
            out[name] = out.get(name, 0.0) + seconds
    return out


def _jpeg_url(jpeg: bytes) -> str:
    """A JPEG as a `data:` URL (how traces keep screenshots)."""
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
