"""The run's deadline, seen by the agent loop: told to the model, and held to by its tools.

- **Told** (issue 44, item 7): with `AgentConfig.tell_remaining_time` and a time budget
  (`wall_time_budget_s`, which a wall-clock experiment's task time cap
  `budgets.task_timeout_s` sets), `told_time` appends a user message `Time left: 12.3 s of
  30 s.` (`backends.policies.models.time_left_text`, the one format; the bundled models
  read it, `hurry_below`) before each step's model call. It stays in the conversation, as
  a harness's reminder would.
- **Held to** (issue 47, finding 7): the budget is checked before each step, but a tool
  command started before it could run on to its own exec timeout (a 10 s cap took 67 s
  with a 60 s command). `within_deadline` cancels the call when the deadline passes;
  cancelling a sandbox exec kills the command's whole process tree, setsid children
  included (`HelperChannel.request`, the helper's `cancel`), and the loop records the call
  with `cut` set.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any

from looplab.agents.config import AgentConfig
from looplab.backends.policies.models import time_left_text
from looplab.tools.base import ToolResult

__all__ = ["run_deadline", "told_time", "within_deadline"]


def run_deadline(config: AgentConfig, started: float) -> float | None:
    """When the run's wall-time budget ends (`perf_counter` time), or None without one."""
    budget = config.wall_time_budget_s
    return None if budget is None else started + budget


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


async def within_deadline(
    deadline: float | None, call: Awaitable[ToolResult]
) -> tuple[ToolResult, bool]:
    """The call's result, or, when `deadline` (a `time.perf_counter()` time) passes first,
    the call cancelled there and an error result; and whether it was cut.

    Raises:
        Whatever the call raises (a `TimeoutError` of its own included).
    """
    if deadline is None:
        return await call, False
    timer = asyncio.timeout(max(0.0, deadline - time.perf_counter()))
    try:
        async with timer:
            return await call, False
    except TimeoutError:
        if not timer.expired():
            raise
    return ToolResult(
        "ERROR: cut: the run's time budget ran out while the tool ran", ok=False
    ), True
