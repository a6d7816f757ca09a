"""Agent configuration: limits, budgets, tool concurrency and the backend retry policy."""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import Field

from looplab.config import StrictModel, replaced

__all__ = [
    "KNOB_FIELDS",
    "TASK_KIND_AGENTS",
    "AgentConfig",
    "CallConfig",
    "RetryConfig",
    "tightest",
]

KNOB_FIELDS = ("streaming_dispatch", "max_parallel_tools", "speculation", "eager_sandbox")
"""The agent's latency knobs (recorded in every trace's `run_end.knobs`)."""

TASK_KIND_AGENTS: dict[str, str] = {"coding": "coding", "web": "computer_use"}
"""Task kind -> the agent kind that runs it by default (`agents: [auto]`)."""


class RetryConfig(StrictModel):
    """How failed model calls are retried (every attempt is recorded).

    Retried: HTTP 429 (waiting at least its `retry-after`), 5xx answers, and streams or
    connections that break before the reply is complete. Not retried: other 4xx (a bad
    request stays bad). The wait before retry k (0-based) is
    `min(max_delay_s, max(retry_after, base_delay_s * 2**k))`.
    """

    max_attempts: int = Field(default=4, ge=1)
    """Attempts per model call, the first included."""
    base_delay_s: float = Field(default=0.5, ge=0)
    """Wait before the first retry; doubles per retry."""
    max_delay_s: float = Field(default=20.0, ge=0)
    """Longest wait between attempts (a longer retry-after is cut to this)."""
    retry_statuses: list[int] = Field(default_factory=lambda: [429, 500, 502, 503, 504])
    """HTTP statuses that are retried."""
    retry_dropped_streams: bool = True
    """Retry when the stream or connection breaks without an HTTP status."""


class CallConfig(StrictModel):
    """A planning or reflection call of each step (`AgentConfig.planner` / `.reflection`).

    The call is a real model call through the same backend: the conversation so far and
    an instruction, the agent's tools with `tool_choice: none` (the same prefix as the
    action call, so the prefix cache serves it), answered in text that joins the
    conversation as a user message (`Plan: ...`, `Reflection: ...`). The simulator's
    policies answer such a budgeted text call with exactly `max_tokens` visible tokens.
    """

    every: int = Field(default=1, ge=1)
    """Make the call on every N-th step (1: every step)."""
    max_tokens: int = Field(default=300, ge=1)
    """Visible text budget of the call's reply."""
    reasoning_tokens: int | None = Field(default=None, ge=0)
    """Hidden reasoning budget, sent as `thinking: {type: enabled, budget_tokens: N}`
    (Anthropic's OpenAI-compatible spelling, which the simulator honours exactly); the
    call's `max_completion_tokens` is then `max_tokens` + this. None: not sent (the
    profile's reasoning draw applies on the simulator). OpenAI's own API refuses the
    field: leave it None there."""
    prompt: str | None = None
    """Replaces the built-in instruction of the call."""


class AgentConfig(StrictModel):
    """One agent's loop settings."""

    max_steps: int = Field(default=60, ge=1)
    """Model calls before the run ends with `step_limit`."""
    token_budget: int | None = Field(default=None, ge=1)
    """Prompt + completion tokens over the run before it ends with `token_budget`."""
    wall_time_budget_s: float | None = Field(default=None, gt=0)
    """Seconds from the first request before the run ends with `wall_time_budget`; a tool
    call still running then is cut (its process tree killed, recorded with `cut`). The
    run's deadline as the agent holds to it and tells it (`agents/deadline.py`): the one
    name for it from the experiment to the loop. An experiment sets it to the tightest of
    `budgets.wall_time_s`, `budgets.task_timeout_s` (wall clock only) and the task's
    `limits.wall_time_s` (`experiments.cell.agent_config`, `agents.runner.run_task`).
    Unlike the task time cap `budgets.task_timeout_s`, which the runner also applies after
    the run to the task time on either clock and which ends a run `timeout`
    (`analysis.caps.cap_events`), this is wall time the agent itself watches."""
    parallel_tool_calls: bool = False
    """Run the tool calls of one step concurrently (False: one after another); without a
    `max_parallel_tools` above 1, all of them at once."""
    max_parallel_tools: int = Field(default=1, ge=1, le=64)
    """Knob: at most this many tool calls of one step run at once (1: one after another;
    above 1 also asks the model for parallel calls). A latency knob, recorded in traces."""
    streaming_dispatch: bool = False
    """Knob: start a tool call as soon as its arguments are complete in the stream (the
    next call begins, or its JSON closes), before the rest of the reply is decoded
    (`looplab.agents.dispatch`)."""
    speculation: bool = False
    """Knob: while the model decodes, run the read-only tool the agent most likely calls
    next (tests after an edit, re-reading a written file); its result is used only when
    the next call matches exactly (`looplab.agents.speculation`)."""
    eager_sandbox: bool = False
    """Knob: create and start the sandbox while the first model call runs instead of
    before it; the first tool call waits for it (`queued_s`). Applies when the prompt
    needs nothing from the sandbox (no service URL in it, no browser); otherwise the
    sandbox starts first as usual (`run_end.knob_stats.eager_applied` says which)."""
    fanout: bool = False
    """Fan-out: offer the `delegate` tool (sub-agents running concurrently on the same
    sandbox, `looplab.agents.fanout`) and run a step's tool calls at once (unless
    `max_parallel_tools` caps them). The scripted policy then plays the fan-out plan."""
    subagent_max_steps: int = Field(default=8, ge=1)
    """Steps of each sub-agent before it ends with `step_limit` (its call an error)."""
    max_completion_tokens: int | None = Field(default=4096, ge=1)
    """Cap on each reply's completion tokens (reasoning included); None: the backend's."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature sent to the backend; None: not sent."""
    browse_via: Literal["sandbox", "browser"] = "sandbox"
    """How the coding agent's `browse` opens pages (see tools/browse.py)."""
    screenshots: bool = False
    """Computer-use agent: offer the `screenshot` tool (needs a multimodal model); its
    images reach the model as a user message with an `image_url` part after the results."""
    trace_screenshots: bool = False
    """Computer-use agent: keep a JPEG of the page after each page-changing action in the
    trace, for the report's transcript (never sent to the model). Off by default: each
    capture adds ~35 ms to that action's tool time and 23-117 KB to the trace
    (`looplab bench browser`)."""
    snapshot_after_action: bool = True
    """Computer-use agent: goto/click/press/select return the page's new snapshot (off:
    one line, and the model calls `snapshot` when it needs the page)."""
    observation: Literal["aria", "screenshot", "marks", "dom"] = "aria"
    """Computer-use agent: what snapshot and page-changing actions show the model:
    the aria snapshot (text), a screenshot plus the interactive elements' refs, the
    screenshot with numbered marks, or the pruned DOM (`looplab.tools.observation`).
    Screenshots reach the model as `image_url` parts; their prompt tokens follow the
    profile's `vision_tokens` rule."""
    viewport_width: int = Field(default=1280, ge=200, le=7680)
    """Computer-use agent: the browser viewport's width (the screenshot's width)."""
    viewport_height: int = Field(default=800, ge=200, le=4320)
    """Computer-use agent: the browser viewport's height (the screenshot's height)."""
    images_kept: int | None = Field(default=None, ge=0)
    """Screenshots kept in the conversation: older ones become a one-line text (the
    prefix cache stops there); None keeps all. browser-use keeps 1."""
    planner: CallConfig | None = None
    """A planning call before each step's action call (Agent S2's manager); None: none."""
    reflection: CallConfig | None = None
    """A reflection call after each step's observation; None: none."""
    system_prompt: str | None = None
    """Replaces the agent's built-in system prompt."""
    tell_remaining_time: bool = False
    """Tell the model its remaining time before each call (a user message `Time left: N
    s of M s.`, `looplab.agents.deadline`); needs a time budget: on the wall clock the
    experiment's `budgets.task_timeout_s` or `wall_time_s`."""
    retry: RetryConfig = Field(default_factory=RetryConfig)
    """Backend retry policy."""

    def with_limits(
        self, *, max_steps: int, token_budget: int | None, wall_time_budget_s: float | None
    ) -> AgentConfig:
        """These settings with the run's limits set, validated (a step count below 1 or a
        budget of 0 s raises `pydantic.ValidationError` here, not in the loop)."""
        return replaced(
            self,
            max_steps=max_steps,
            token_budget=token_budget,
            wall_time_budget_s=wall_time_budget_s,
        )

    def knobs(self) -> dict[str, object]:
        """The latency knobs' values, as recorded in traces."""
        return {name: getattr(self, name) for name in KNOB_FIELDS}

    def tool_limit(self) -> int:
        """How many tool calls of one step may run at once."""
        if self.max_parallel_tools > 1:
            return self.max_parallel_tools
        return 64 if self.parallel_tool_calls or self.fanout else 1


N = TypeVar("N", int, float)
"""A budget's unit: tokens (int) or seconds (float)."""


def tightest(*budgets: N | None) -> N | None:
    """The smallest of the budgets that are set (seconds or tokens; None: none is)."""
    present = [b for b in budgets if b is not None]
    return min(present) if present else None
