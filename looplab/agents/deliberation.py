"""Planning and reflection calls: extra model calls of a step, as Agent S2 makes them.

With `AgentConfig.planner`, each (every N-th) step starts with a planning call before the
action call; with `AgentConfig.reflection`, a reflection call follows the step's
observation (its tool results), except after `finish`. Each is a real model call through
the same client: the conversation so far plus an instruction, the agent's tools offered
with `tool_choice: none` (so the prompt's prefix is the action call's, as the prefix cache
sees it), a `max_completion_tokens` of its text budget plus its reasoning budget, and the
reasoning budget as `thinking.budget_tokens`. The reply joins the conversation as a user
message (`Plan: ...`, `Reflection: ...`), so the action call reads it and later prompts
grow by it. Each call is a `SideCall` of the step, in the trace a `model_call` with its
`purpose` (`planner`, `reflection`; the action call is then `actor`).
"""

from __future__ import annotations

import time
from typing import Any

from looplab.agents.config import CallConfig, RetryConfig
from looplab.agents.records import AttemptRecord, ModelCallRecord, SideCall
from looplab.agents.retry import complete_with_retries
from looplab.backends.client.client import InstrumentedClient

__all__ = ["PROMPTS", "due", "side_call"]

PROMPTS = {
    "planner": (
        "Before acting, plan: where the task stands, what the page shows, and the next "
        "action with the element it uses. Answer in text only; do not call a tool."
    ),
    "reflection": (
        "Reflect on the last action: did the page change as intended, is anything wrong, "
        "and what should change next. Answer in text only; do not call a tool."
    ),
}
"""The built-in instruction of each kind of call (`CallConfig.prompt` replaces it)."""
_HEADS = {"planner": "Plan", "reflection": "Reflection"}


def due(config: CallConfig | None, step: int) -> bool:
    """Whether a configured call runs at this 0-based step."""
    return config is not None and step % config.every == 0


async def side_call(
    client: InstrumentedClient,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    config: CallConfig,
    *,
    purpose: str,
    retry: RetryConfig,
    attempts: list[AttemptRecord],
) -> tuple[SideCall, dict[str, Any]]:
    """Make one planning or reflection call (see the module docstring).

    Returns:
        The call's record, and the user message carrying its reply into the conversation.

    Raises:
        BackendError: when retries run out (the loop ends the run with `backend_error`).
    """
    started = time.perf_counter()
    params: dict[str, Any] = {
        "max_completion_tokens": config.max_tokens + (config.reasoning_tokens or 0),
        "tool_choice": "none",
    }
    if config.reasoning_tokens is not None:
        params["extra_body"] = {
            "thinking": {"type": "enabled", "budget_tokens": config.reasoning_tokens}
        }
    ask = {"role": "user", "content": config.prompt or PROMPTS[purpose]}
    response = await complete_with_retries(
        client, [*messages, ask], tools=tools, policy=retry, attempts=attempts, **params
    )
    record = SideCall(
        purpose,
        started,
        time.perf_counter(),
        ModelCallRecord.from_response(response),
        response.message,
    )
    text = str(response.message.get("content") or "")
    return record, {"role": "user", "content": f"{_HEADS[purpose]}: {text}"}
