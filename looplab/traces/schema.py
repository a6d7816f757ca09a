"""The trace schema, version `looplab-2`: one JSONL file per run.

Line 1 is a `TraceHeader` (`{"trace_format": "looplab-2", ...}`), then one event a line,
tagged by `kind`. `looplab-1` traces read unchanged (`READ_FORMATS`): flat `looplab-2` ones.

| kind         | one per               | carries                                                  |
|--------------|-----------------------|----------------------------------------------------------|
| `run_start`  | run                   | task, agent, prompt                                      |
| `model_call` | step (successful call)| sent / first token / last token, tokens, finish, message |
| `tool_call`  | tool call             | name, arguments, duration, ok/exit status, output        |
| `sandbox`    | sandbox operation     | create / exec / close timing                             |
| `step`       | step                  | the step's model / tool / overhead split                 |
| `subrun`     | sub-run (looplab-2)   | id, parent sub-run, spawning step, joining step, agent   |
| `run_end`    | run (last line)       | end reason, success, totals                              |

Times: every event has `wall_time` (UTC, when it started) and `start` / `end` in seconds
on the run's monotonic axis, whose zero is the run's origin (its first scheduled model
request). Values a source did not have are `None`, listed in the header's `absent`; values
that had to be derived are named in the event's `estimated` with how (`{"ttft_s": "latency
minus output / 40.7 tok/s"}`): nothing absent is invented, nothing estimated passes as measured.

A model call's phases: `sent` -> TTFT + prefill (`ttft_s`, to the first token of any kind)
-> hidden reasoning (`reasoning_s`) -> `first_token` (first visible) -> visible decode
(`decode_s`) -> `last_token`; older traces without `reasoning_s` keep it inside `ttft_s`.

Run graph (`looplab-2`): a run may hold sub-runs (sub-agents, each its own conversation).
Any event may carry `subrun`, the id of the sub-run it belongs to (None: the top-level
run; `step` counts within that sub-run). One `subrun` event per sub-run declares its
`parent` sub-run, the parent's `parent_step` that spawned it and `join_step` that waited
for it. Concurrent calls need no field: their `start`/`end` overlap. Task time on the
graph is its critical path (`looplab.analysis.graph`); a flat trace's is its steps' sum.
No final `run_end`: incomplete (cut off). NaN, infinities, times beyond `MAX_SECONDS` refused.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from looplab.config import StrictModel
from looplab.traces.cell import TraceCell
from looplab.traces.end_reason import EndReasonValue
from looplab.traces.identity import RunIdentity

__all__ = [
    "MAX_SECONDS",
    "READ_FORMATS",
    "TRACE_FORMAT",
    "Attempt",
    "ModelCallEvent",
    "RunEndEvent",
    "RunStartEvent",
    "SandboxOpEvent",
    "Seconds",
    "StepEvent",
    "SubRunEvent",
    "ToolCallEvent",
    "TraceEvent",
    "TraceHeader",
]

TRACE_FORMAT = "looplab-2"
"""The current trace format tag (what writers stamp)."""
READ_FORMATS = ("looplab-1", "looplab-2")
"""Format tags readers accept: `looplab-1` traces are flat `looplab-2` traces."""

MAX_SECONDS = 1e9
"""Largest magnitude of any time or duration in a trace (about 31 years): beyond it a value
is damage, not a measurement, and arithmetic on it would overflow to infinity."""
Seconds = Annotated[float, Field(ge=-MAX_SECONDS, le=MAX_SECONDS)]
"""A finite time or duration on the run axis (NaN and infinities are refused too)."""
MAX_TOKENS = 10**12
Tokens = Annotated[int, Field(ge=0, le=MAX_TOKENS)]
"""A token count; past `MAX_TOKENS` it is damage (a 400-digit OTLP integer), not a count."""


class TraceHeader(StrictModel):
    """First line of every trace."""

    trace_format: Literal["looplab-1", "looplab-2"] = "looplab-2"
    """Format tag (`READ_FORMATS`); readers refuse others."""
    run_id: str
    """Unique id of the run."""
    created: datetime
    """When the trace was started (UTC)."""
    source: str = "looplab"
    """`looplab` for our runs, `import:<format>` for imported ones."""
    source_path: str | None = None
    """The file an imported trace came from."""
    experiment: str | None = None
    """Experiment name, when the run belongs to one."""
    cell: TraceCell = Field(default_factory=TraceCell)
    """The experiment cell: backend, agent, task, repetition, seed (`traces/cell.py`)."""
    task: str | None = None
    """Task id (`coding/fix-pager`, `nbugs-8`, an imported instance id)."""
    agent: str | None = None
    """Agent name (`coding`, `computer_use`, or the source harness's agent)."""
    model: str | None = None
    """Model id the run talked to."""
    profile: dict[str, Any] | None = None
    """The latency profile in force (simulated backends), as a dict."""
    backend: dict[str, Any] = Field(default_factory=dict)
    """Backend description: kind (simulated/real), base_url (no keys, ever)."""
    sandbox: dict[str, Any] = Field(default_factory=dict)
    """Sandbox kind and isolation description."""
    clock: Literal["wall", "virtual", "recorded"] = "wall"
    """How model times were obtained: waited for, computed, or taken from a recording."""
    node: dict[str, Any] = Field(default_factory=dict)
    """Where the run ran, when an executor placed it on a node: hostname, cpus, load1 (at
    the start), ray_node_id, task_id, attempt. Empty for in-process runs."""
    absent: list[str] = Field(default_factory=list)
    """Fields the source did not have (left None in events, never invented)."""
    notes: list[str] = Field(default_factory=list)
    """Free-form provenance notes (what an importer recovered, what it could not)."""
    identity: RunIdentity | None = None
    """What the run is compared by: agent, task set, profile (+ decode rate), clock
    (`traces/identity.py`). None in older traces: readers use `identity_of(header)`."""


class _Event(StrictModel):
    run_id: str
    """The run this event belongs to."""
    step: int | None = None
    """0-based step index (None for run-level events)."""
    wall_time: datetime | None = None
    """UTC wall time at `start` (None when the source had none)."""
    start: Seconds
    """Seconds on the run's monotonic axis when the event began."""
    end: Seconds
    """Seconds on the run's monotonic axis when it ended."""
    estimated: dict[str, str] = Field(default_factory=dict)
    """Fields of this event that were derived rather than measured, and how."""
    subrun: str | None = None
    """The sub-run this event belongs to (its `SubRunEvent` id); None: the top-level run
    (looplab-2; every looplab-1 event)."""

    @property
    def duration_s(self) -> float:
        """end - start."""
        return self.end - self.start


class RunStartEvent(_Event):
    """The run began."""

    kind: Literal["run_start"] = "run_start"
    task: str | None = None
    """Task id."""
    prompt: str | None = None
    """The task prompt given to the agent (None when the source removed it)."""
    sandbox_start_s: Seconds | None = None
    """Time to start the sandbox, excluded from task time and reported apart."""


class Attempt(StrictModel):
    """A failed attempt at a model call (retried or fatal)."""

    start: Seconds
    """Seconds on the run axis."""
    end: Seconds
    """Seconds on the run axis."""
    error: str
    """What went wrong."""
    status: int | None = None
    """HTTP status, if any."""
    wait_s: Seconds = 0.0
    """Back-off before the next attempt."""


class ModelCallEvent(_Event):
    """One model call: `start` is the scheduled send, `end` the stream end."""

    kind: Literal["model_call"] = "model_call"
    sent: Seconds | None = None
    """Request handed to the transport (run axis); client queueing = sent - start."""
    first_token: Seconds | None = None
    """First streamed token of any kind (run axis). Hidden reasoning is not streamed, so
    with hidden reasoning this is the first visible token, `reasoning_s` after the first
    token the model generated."""
    last_token: Seconds | None = None
    """Last streamed token (run axis)."""
    prompt_tokens: Tokens | None = None
    """Prompt tokens (from usage)."""
    cached_tokens: Tokens | None = None
    """Prompt tokens served from the prefix cache."""
    completion_tokens: Tokens | None = None
    """Completion tokens, reasoning included."""
    reasoning_tokens: Tokens | None = None
    """Hidden reasoning tokens (part of completion_tokens)."""
    reasoning_s: Seconds | None = None
    """Decode time of the hidden reasoning, which ends at `first_token`: the call's time to
    its first visible token is TTFT (`ttft_s`) + reasoning + nothing else. None: no hidden
    reasoning, or its duration unknown (then it stays inside `ttft_s`)."""
    finish_reason: str | None = None
    """`stop`, `length`, `tool_calls`, ..."""
    model: str | None = None
    """Model id."""
    purpose: Literal["actor", "planner", "reflection"] | None = None
    """Why the agent made the call: `actor` (the step's action call), `planner` (a planning
    call before it), `reflection` (a reflection call after its observation). None: the
    step's only call (an agent without planning or reflection calls, or another harness)."""
    profile: str | None = None
    """Latency profile name (simulated backends)."""
    request_id: str | None = None
    """Backend request id."""
    message: dict[str, Any] | None = None
    """The assistant message (content, tool_calls) as sent back into the conversation."""
    attempts: list[Attempt] = Field(default_factory=list)
    """Failed attempts before this call succeeded (or all attempts, if it never did)."""
    transport: Literal["http", "websocket"] = "http"
    """How the call went: `http`, its own streamed request; `websocket`, a turn on a
    persistent Responses WebSocket. Re-timing prices its per-call overhead by it
    (`request_overhead_s` or `websocket_overhead_s`); traces without it are `http`."""

    @property
    def ttft_s(self) -> float | None:
        """sent -> first token of any kind (TTFT + prefill): `first_token - sent -
        reasoning_s`, hidden reasoning tokens being tokens too."""
        if self.sent is None or self.first_token is None:
            return None
        return self.first_token - self.sent - (self.reasoning_s or 0.0)

    @property
    def first_visible_s(self) -> float | None:
        """sent -> first visible (streamed) token: TTFT + hidden reasoning decode."""
        if self.sent is None or self.first_token is None:
            return None
        return self.first_token - self.sent

    @property
    def decode_s(self) -> float | None:
        """first -> last token."""
        if self.first_token is None or self.last_token is None:
            return None
        return self.last_token - self.first_token

    @property
    def output_tokens(self) -> int | None:
        """Streamed (visible) output tokens: completion minus reasoning."""
        if self.completion_tokens is None:
            return None
        return self.completion_tokens - (self.reasoning_tokens or 0)


class ToolCallEvent(_Event):
    """One tool call: `start` when it began, `end` when its result was ready."""

    kind: Literal["tool_call"] = "tool_call"
    call_id: str | None = None
    """The model's tool call id."""
    name: str
    """Tool name (`run_tests`, `click`, `bash`, ...)."""
    arguments: str = ""
    """Arguments as the model sent them (JSON text, or a command)."""
    ok: bool | None = None
    """Whether the tool reported success (None: unknown)."""
    exit_code: int | None = None
    """Exit status for command-like tools."""
    error: str | None = None
    """Error text of a failed or malformed call."""
    output: str | None = None
    """The result given back to the model (cut to 64 KiB; None when absent)."""
    output_chars: int | None = None
    """Length of the full result."""
    synthetic: bool = False
    """True when the call did stand-in work for a recorded or drawn tool call (a
    trace-driven run's synthetic work tool), not the task's real tool."""
    screenshot: str | None = None
    """`data:image/jpeg;base64,...` of the page after a browser action, when the agent
    kept trace screenshots (`agent.trace_screenshots`); never sent to the model."""
    dispatch: Literal["after_message", "stream", "speculative"] | None = None
    """When the call started (latency knobs): after the whole reply (`after_message`), while
    it still streamed (`stream`: its arguments were complete), or before it, as a speculative
    read-only run whose result was used (`speculative`). None: not recorded (no knob on)."""
    dispatch_token: int | None = None
    """Streamed dispatch: token-carrying chunks of the reply received when the call
    started (the stream position)."""
    dispatch_fraction: float | None = None
    """Streamed dispatch: share of the reply's streamed text received when the call
    started (0..1); the virtual clock places the call at this point of the decode."""
    queued_s: Seconds | None = None
    """Seconds the call waited after its arguments were complete (a tool-concurrency
    limit or an earlier call still running)."""
    phases: dict[str, Seconds] = Field(default_factory=dict)
    """The call's time by phase (AgentLab's StepTimestamps): browser actions have `act` (the
    action), `page_wait` (the page's load), `observe` (the snapshot). Empty: not split."""
    observation: dict[str, Any] | None = None
    """What a browser action showed the model: `kind` (aria, screenshot, marks, dom),
    `text_chars`, `image_bytes`, `width`, `height`. None for other tools."""
    cut: bool = False
    """Cut by the run's time budget (its process tree killed there; `end` is the cut)."""


class SandboxOpEvent(_Event):
    """A sandbox operation (create, exec, close) with its timing."""

    kind: Literal["sandbox"] = "sandbox"
    op: str
    """`create`, `exec`, `close`, `acquire`, ..."""
    sandbox_id: str | None = None
    """Sandbox or container id."""
    detail: str = ""
    """Command or description."""


class StepEvent(_Event):
    """A step's split: `start` = model call scheduled, `end` = last tool result ready."""

    kind: Literal["step"] = "step"
    model_s: Seconds
    """Model phase (retries included; planning and reflection calls too)."""
    tool_s: Seconds
    """Tools phase wall time (parallel calls count once)."""
    overhead_s: Seconds
    """Step wall time minus model and tool time."""
    phases: dict[str, Seconds] = Field(default_factory=dict)
    """The step's browser phases summed over its tool calls (`act`, `page_wait`,
    `observe`; part of `tool_s`), AgentLab's StepTimestamps split. The model's own parts
    are in its `model_call` events (TTFT + prefill, reasoning, decode; planning and
    reflection calls by `purpose`). Empty: not split."""


class SubRunEvent(_Event):
    """A sub-run (looplab-2): a sub-agent with its own conversation inside this run.

    `subrun` is its id (events with that `subrun` belong to it); `start`/`end` span its
    first to its last event. Its own steps number from 0. The parent's step `parent_step`
    spawned it, and the parent's step `join_step` waited for its result."""

    kind: Literal["subrun"] = "subrun"
    parent: str | None = None
    """The enclosing sub-run's id; None: the top-level run."""
    parent_step: int | None = None
    """The parent's step that spawned this sub-run; None: spawned before its first step."""
    join_step: int | None = None
    """The parent's step that consumed its result (it cannot start before this sub-run
    ends); None: never joined (fire-and-forget, or the parent ended first)."""
    spawn_call_id: str | None = None
    """The parent's tool call that started it and returned its result (`call_id`, e.g. a
    `Task` call): that call's time is the parent waiting, not working. None: no such call."""
    agent: str | None = None
    """The sub-agent's name or type (`Explore`, `general-purpose`, `search`, ...)."""
    description: str | None = None
    """What the sub-run was asked to do (its task or prompt, cut)."""


class RunEndEvent(_Event):
    """The run ended: `start` = run origin, `end` = the agent's finish."""

    kind: Literal["run_end"] = "run_end"
    end_reason: EndReasonValue
    """An `EndReason` (`finish`, `answer`, `step_limit`, `token_budget`,
    `wall_time_budget`, `timeout`, ...: `traces/end_reason.py`), or an imported source's own."""
    success: bool | None = None
    """Solved? (None: unknown; a stop or non-zero exit fails anyway: `analysis/outcomes.py`)."""
    verdict_by: str | None = None
    """Who decided `success` (`analysis/outcomes.py` lists the values; None: unknown)."""
    check_output: str | None = None
    """What the checker printed (cut)."""
    steps: int
    """Number of steps."""
    model_s: Seconds | None = None
    """Sum of model phases."""
    tool_s: Seconds | None = None
    """Sum of tools phases."""
    error: str | None = None
    """Why the run failed, if it did."""
    sandbox_start_s: Seconds | None = None
    """Time to start the sandbox (and its services), excluded from task time."""
    end_to_end_s: Seconds | None = None
    """Setup (sandbox, services, browser) + task, from the setup's start to the run's end:
    `eager_sandbox` (setup overlapping the first model call) shows here. None: unknown."""
    prompt: str | None = None
    """The task prompt as the agent got it (known only once services had their addresses,
    hence here and not in run_start)."""
    loop_lag_p99_ms: float | None = None
    """Event-loop lag (p99) during the run: high = the harness machine was saturated."""
    exit_code: int | None = None
    """Exit status of a wrapped agent command (`looplab wrap`; 128 + N for signal N)."""
    knobs: dict[str, Any] = Field(default_factory=dict)
    """The agent's latency knobs in this run (`streaming_dispatch`, `max_parallel_tools`,
    `speculation`); empty when not recorded."""
    knob_stats: dict[str, float] = Field(default_factory=dict)
    """What the knobs did: `streamed_calls`, `speculation_hits`, `speculation_misses`,
    `speculation_wasted_s` (tool time of discarded speculative runs)."""


TraceEvent = Annotated[
    RunStartEvent
    | ModelCallEvent
    | ToolCallEvent
    | SandboxOpEvent
    | StepEvent
    | SubRunEvent
    | RunEndEvent,
    Field(discriminator="kind"),
]
"""Any event line of a trace."""
