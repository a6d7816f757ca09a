"""Budgeted text calls: a planning or reflection call answered with exactly its budget.

An agent's planning or reflection call asks for text, not an action: `tool_choice: none`
and a `max_completion_tokens` cap (`looplab.agents.deliberation`). A real model told to
plan in at most N tokens uses about that many; the simulator's stand-in uses exactly the
cap: hidden reasoning of `thinking.budget_tokens` (Anthropic's OpenAI-compatible field)
or the profile's draw, and lorem text for the rest, finishing with `stop`. The `lorem`
and `scripted` policies answer such requests this way before anything else.
"""

from __future__ import annotations

from looplab.backends.policies.base import PolicyContext, Reply
from looplab.backends.policies.schema_fill import lorem_pieces
from looplab.backends.simulator.protocol import ChatRequest

__all__ = ["budget_reply", "thinking_budget"]


def thinking_budget(request: ChatRequest) -> int | None:
    """`thinking.budget_tokens` of a request (enabled thinking only), or None."""
    thinking = (request.model_extra or {}).get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type", "enabled") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    return budget if isinstance(budget, int) and budget >= 0 else None


def budget_reply(request: ChatRequest, context: PolicyContext) -> Reply | None:
    """The reply to a budgeted text call (see the module docstring), or None for others."""
    cap = request.max_completion_tokens or request.max_tokens
    if request.tool_choice != "none" or cap is None:
        return None
    reasoning = thinking_budget(request)
    if reasoning is None:
        reasoning = max(0, round(context.profile.reasoning_tokens.sample(context.rng)))
    reasoning = min(reasoning, cap - 1)
    return Reply(
        content_pieces=lorem_pieces(cap - reasoning, context.rng), reasoning_tokens=reasoning
    )
