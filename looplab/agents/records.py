"""Per-step timing records of one agent run (a small typed stand-in for full traces).

All times are seconds on `time.perf_counter()`'s axis. A step is one model call plus the
tool calls it asked for; its `model_s` covers the whole model phase (retries and their
waits included), its `tool_s` the tools' time after it (parallel calls count once), and
`overhead_s` is what is left of its wall time (routing, bookkeeping): the trace builder's
formula (`looplab.traces.assembly.split`), so records and traces split a step alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from looplab.backends.client.client import CallTiming, ModelResponse
from looplab.sandbox_contract import SandboxEvent
from looplab.traces.assembly.split import StepSplit, step_split
from looplab.traces.end_reason import EndReason

__all__ = [
    "AttemptRecord",
    "ModelCallRecord",
    "RunResult",
    "SideCall",
    "StepRecord",
    "SubRun",
    "ToolCallRecord",
]


@dataclass
class AttemptRecord:
    """One failed attempt of a model call."""

    started: float
    ended: float
    error: str
    status: int | None
    request_id: str | None
    wait_s: float
    """Time waited before the next attempt (0 when none followed)."""


@dataclass
class ModelCallRecord:
    """The successful model call of a step: the client's `CallTiming` plus usage."""

    timing: CallTiming
    finish_reason: str | None
    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None
    reasoning_tokens: int | None
    request_id: str | None
    transport: Literal["http", "websocket"] = "http"
    """How the call went (`ModelResponse.transport`)."""

    @classmethod
    def from_response(cls, response: ModelResponse) -> ModelCallRecord:
        """The record of a client response."""
        return cls(
            timing=response.timing,
            finish_reason=response.finish_reason,
            prompt_tokens=response.prompt_tokens,
            cached_tokens=response.cached_tokens,
            completion_tokens=response.completion_tokens,
            reasoning_tokens=response.reasoning_tokens,
            request_id=response.request_id,
            transport=response.transport,
        )

    @property
    def ttft_s(self) -> float | None:
        """Sent -> first token (see `CallTiming.ttft_s`)."""
        return self.timing.ttft_s

    @property
    def decode_s(self) -> float | None:
        """First -> last token (see `CallTiming.decode_s`)."""
        return self.timing.decode_s


@dataclass
class ToolCallRecord:
    """One tool call: what was asked, when it ran, and whether it worked."""

    call_id: str
    name: str
    arguments: str
    started: float
    ended: float
    ok: bool
    error: str | None
    output_chars: int
    synthetic: bool = False
    """Stand-in work of a trace-driven run (`tools/synthetic.py`)."""
    screenshot: bytes | None = None
    """JPEG of the page after a browser action (`AgentConfig.trace_screenshots`)."""
    dispatch: str | None = None
    """`after_message`, `stream` or `speculative` when a latency knob is on (else None)."""
    dispatch_token: int | None = None
    """Streamed: token-carrying chunks received when the call's arguments were complete."""
    dispatch_fraction: float | None = None
    """Streamed: share of the reply's streamed text received by then."""
    queued_s: float | None = None
    """Arguments complete -> started (waiting for a tool slot)."""
    phases: dict[str, float] | None = None
    """The call's time by phase (browser actions: `act`, `page_wait`, `observe`)."""
    observation: dict[str, Any] | None = None
    """What a browser action showed the model (kind, text chars, image bytes and size)."""
    cut: bool = False
    """The run's time budget ran out while the call ran: cancelled there, its command's
    process tree killed (`AgentLoop._one_call`)."""

    @property
    def duration_s(self) -> float:
        """Started -> result ready."""
        return self.ended - self.started


@dataclass
class SideCall:
    """A planning or reflection call of a step (`agents/deliberation.py`)."""

    purpose: str
    """`planner` or `reflection`."""
    started: float
    """When the call was scheduled."""
    ended: float
    """When its reply was assembled."""
    record: ModelCallRecord
    """Its timing and usage."""
    message: dict[str, Any]
    """Its reply as an assistant message (for the trace)."""

    @property
    def duration_s(self) -> float:
        """Scheduled -> reply assembled."""
        return self.ended - self.started


@dataclass
class StepRecord:
    """One step: model phase, tools phase, and the sandbox events inside it."""

    index: int
    started: float
    model_ended: float = 0.0
    ended: float = 0.0
    model: ModelCallRecord | None = None
    attempts: list[AttemptRecord] = field(default_factory=list)
    tools: list[ToolCallRecord] = field(default_factory=list)
    sandbox_events: list[SandboxEvent] = field(default_factory=list)
    side_calls: list[SideCall] = field(default_factory=list)
    """Planning (before the action call) and reflection (after the tools) calls."""

    @property
    def split(self) -> StepSplit:
        """The step's model / tool / overhead split, by the traces' one formula
        (`looplab.traces.assembly.split.step_split`): the model phase is step start -> reply
        assembled (retries and a planning call included) plus the reflection calls after
        the tools; tool time is the union of the calls' spans outside it (tool time hidden
        behind the model phase, streamed or speculative calls, is not counted), so model +
        tools + overhead add up to the step's wall time."""
        return step_split(
            self.started,
            self.ended,
            (self.started, self.model_ended),
            [(t.started, t.ended) for t in self.tools],
            [(c.started, c.ended) for c in self.side_calls],
        )

    @property
    def model_s(self) -> float:
        """Model phase (see `split`)."""
        return self.split.model_s

    @property
    def tool_s(self) -> float:
        """Tools phase: the union of the tool calls' spans after the model phase."""
        return self.split.tool_s

    @property
    def wall_s(self) -> float:
        """Step start -> step end."""
        return self.ended - self.started

    @property
    def overhead_s(self) -> float:
        """Wall time that is neither model nor tool time."""
        return self.split.overhead_s

    def phases(self) -> dict[str, float]:
        """The finer split: browser phases summed over the tools (`act`, `page_wait`,
        `observe`); empty when no tool split its time."""
        out: dict[str, float] = {}
        for tool in self.tools:
            for name, seconds in (tool.phases or {}).items():
                out[name] = out.get(name, 0.0) + seconds
        return out


@dataclass
class SubRun:
    """A sub-agent's run (`looplab.agents.fanout`): spawned by a `delegate` call of the
    parent's step `step`, joined when that call returned (its result in the same step)."""

    step: int
    role: str
    task: str
    result: RunResult


@dataclass
class RunResult:
    """The outcome and timing of one agent run.

    `end_reason` is one of the agent loop's: `finish` (the finish tool), `answer` (a reply
    without tool calls), `step_limit`, `token_budget`, `wall_time_budget`, `backend_error`.
    """

    end_reason: EndReason
    started: float
    ended: float
    steps: list[StepRecord]
    messages: list[dict[str, object]]
    final_text: str = ""
    error: str | None = None
    tokens_used: int = 0
    knobs: dict[str, object] = field(default_factory=dict)
    """The latency knobs the loop ran with (`AgentConfig.knobs`)."""
    knob_stats: dict[str, float] = field(default_factory=dict)
    """What they did (streamed calls, speculation hits/misses/wasted seconds)."""
    subruns: list[SubRun] = field(default_factory=list)
    """Sub-agents the run delegated to (`fanout: true`), in the order they ended."""

    @property
    def wall_s(self) -> float:
        """First request scheduled -> loop ended."""
        return self.ended - self.started

    @property
    def model_s(self) -> float:
        """Sum of the steps' model phases."""
        return sum(step.model_s for step in self.steps)

    @property
    def tool_s(self) -> float:
        """Sum of the steps' tools phases."""
        return sum(step.tool_s for step in self.steps)

    @property
    def tool_errors(self) -> list[ToolCallRecord]:
        """Tool calls that failed or were malformed."""
        return [tool for step in self.steps for tool in step.tools if not tool.ok]
