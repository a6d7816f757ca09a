"""Deadline-aware agents: the model told its remaining time before each call.

With `AgentConfig.tell_remaining_time` and a time budget (`wall_time_budget_s`, which a
wall-clock experiment's task time cap `budgets.task_timeout_s` sets), the loop appends a
user message `Time left: 12.3 s of 30 s.` (`backends.policies.models.time_left_text`, the
one format; the bundled models read it, `hurry_below`) to the conversation before each
step's model call. It stays in the conversation, as a harness's reminder would.
"""

from __future__ import annotations

import time
from typing import Any

from looplab.agents.config import AgentConfig
from looplab.backends.policies.models import time_left_text

__all__ = ["told_time"]


def told_time(
    messages: list[dict[str, Any]], config: AgentConfig, started: float
) -> list[dict[str, Any]]:
    """`messages` with the time note appended when the agent tells the model its
    remaining time (`started`: the run's `perf_counter` origin); else unchanged."""
    budget = config.wall_time_budget_s
    if not config.tell_remaining_time or budget is None:
        return messages
    left = budget - (time.perf_counter() - started)
    return [*messages, {"role": "user", "content": time_left_text(left, budget)}]
