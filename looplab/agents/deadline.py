"""A tool call held to the run's deadline: cut there, not at its own end (issue 47, finding 7).

The wall-time budget (the task time cap on the wall clock, `experiments.cell.agent_config`)
is checked before each step, but a tool command started before it could run on to its own
exec timeout (a 10 s cap took 67 s with a 60 s command). `within_deadline` cancels the call
when the deadline passes; cancelling a sandbox exec kills the command's whole process tree,
setsid children included (`HelperChannel.request`, the helper's `cancel`), and the loop
records the call with `cut` set.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable

from looplab.tools.base import ToolResult

__all__ = ["within_deadline"]


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
