"""The builder's input: one run's items with clock times, before they are on the run axis.

Every producer fills these from what it has: the live recorder from the agent loop's
records (perf_counter / monotonic seconds), the proxy from its call records, an importer
from its format (epoch seconds, `None` where the source had none, each derived value named
in the item's `estimated` with how). `EventBuilder` turns them into events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from looplab.traces.end_reason import EndReasonValue
from looplab.traces.schema import Attempt

__all__ = ["ModelDraft", "RunEndDraft", "SandboxDraft", "StepDraft", "ToolDraft"]


@dataclass
class ModelDraft:
    """One model call with clock times or None."""

    start: float | None = None
    end: float | None = None
    sent: float | None = None
    first_token: float | None = None
    last_token: float | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    finish_reason: str | None = None
    model: str | None = None
    request_id: str | None = None
    message: dict[str, Any] | None = None
    estimated: dict[str, str] = field(default_factory=dict)
    duration_measured: bool = False
    """True when end - start is a measured duration even if the placement is estimated."""
    purpose: Literal["actor", "planner", "reflection"] | None = None
    """Why the agent made the call (the schema's `purpose`); None: the step's only call."""
    profile: str | None = None
    """Latency profile name (simulated backends)."""
    attempts: list[Attempt] = field(default_factory=list)
    """Failed attempts before it (`EventBuilder.attempt` puts them on the axis)."""
    transport: Literal["http", "websocket"] = "http"
    """How the call came to the backend (the schema's `transport`)."""


@dataclass
class ToolDraft:
    """One tool call with clock times or None."""

    name: str
    start: float | None = None
    end: float | None = None
    call_id: str | None = None
    arguments: str = ""
    ok: bool | None = None
    exit_code: int | None = None
    error: str | None = None
    output: str | None = None
    """The full result (the builder cuts it to `OUTPUT_LIMIT`)."""
    output_chars: int | None = None
    estimated: dict[str, str] = field(default_factory=dict)
    duration_measured: bool = False
    """True when end - start is a measured duration even if the placement is estimated."""
    duration: float | None = None
    """A measured duration without times (start and end None): placed after the previous
    item on the run axis (SWE-agent's `execution_time`)."""
    synthetic: bool = False
    """Stand-in work of a trace-driven run."""
    screenshot_jpeg: bytes | None = None
    """The page after a browser action (kept as a `data:` URL)."""
    dispatch: str | None = None
    """`after_message`, `stream` or `speculative` (the schema refuses others)."""
    dispatch_token: int | None = None
    dispatch_fraction: float | None = None
    queued_s: float | None = None
    phases: dict[str, float] = field(default_factory=dict)
    """The call's time by phase (browser actions: `act`, `page_wait`, `observe`)."""
    cut: bool = False
    """Stopped by the run's time budget while it ran (its process tree killed)."""
    observation: dict[str, Any] | None = None


@dataclass
class SandboxDraft:
    """One sandbox operation with clock times or None."""

    op: str
    start: float | None = None
    end: float | None = None
    sandbox_id: str | None = None
    detail: str = ""
    estimated: dict[str, str] = field(default_factory=dict)
    wall_time: datetime | None = None
    """The operation's own UTC stamp (live sandboxes); None: the axis's wall time."""


@dataclass
class StepDraft:
    """One model call and the tool calls / sandbox operations it led to."""

    model: ModelDraft | None = None
    tools: list[ToolDraft] = field(default_factory=list)
    sandbox: list[SandboxDraft] = field(default_factory=list)
    side_calls: list[ModelDraft] = field(default_factory=list)
    """The step's planning and reflection calls (events after its model call)."""
    start: float | None = None
    """The step's start (clock); None: its earliest model or tool time."""
    end: float | None = None
    """The step's end (clock); None: its latest model or tool time."""
    model_phase: tuple[float, float] | None = None
    """The model phase when wider than the model call (clock; the live loop's step start
    -> reply assembled: retries and a planning call included); None: the call's span."""
    estimated: dict[str, str] = field(default_factory=dict)
    """How the producer derived the step's split, when it did."""


@dataclass
class RunEndDraft:
    """How the run ended: the `run_end` event's own fields (totals are the builder's)."""

    end_reason: EndReasonValue | None = None
    """None: unknown (`unknown` in the event)."""
    end_time: float | None = None
    """When the run ended (clock); the event ends no earlier than the last item."""
    success: bool | None = None
    verdict_by: str | None = None
    """Who decided `success` (`RunEndEvent.verdict_by`)."""
    check_output: str | None = None
    error: str | None = None
    sandbox_start_s: float | None = None
    end_to_end_s: float | None = None
    prompt: str | None = None
    loop_lag_p99_ms: float | None = None
    exit_code: int | None = None
    knobs: dict[str, Any] = field(default_factory=dict)
    knob_stats: dict[str, float] = field(default_factory=dict)
    estimated: dict[str, str] = field(default_factory=dict)
