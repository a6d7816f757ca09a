"""Tool dispatch of one step: streamed (while the reply decodes) or after the message.

`StepDispatcher` runs a step's tool calls with at most `limit` at once, in the reply's
order. With streaming dispatch on, the client announces each call whose arguments are
complete in the stream (`looplab.backends.client.assembly.StreamAssembler`) and the dispatcher
starts it at once, before the rest of the reply is decoded; the others start when the
message is complete. A speculative result (`looplab.agents.speculation`) that matched
the reply's first call takes that call's place.

Every record says how its call started (`dispatch`), the stream position (`dispatch_token`
chunks, `dispatch_fraction` of the streamed text) and how long it waited for a slot
(`queued_s`). A streamed call whose final form differs from what was announced (a retried
attempt that changed its mind) is run again after the message; the stale run is awaited
and dropped, but what it did in the sandbox stays: streaming dispatch executes a call
before the reply is final, which is its point and its risk (a stream that breaks after a
call's arguments and is retried has already run that call once).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from looplab.agents.records import ToolCallRecord
from looplab.backends.client.assembly import ToolReady
from looplab.tools.base import ToolResult

__all__ = ["CallOutcome", "RunCall", "StepDispatcher", "same_call"]

CallOutcome = tuple[ToolCallRecord, ToolResult]
RunCall = Callable[[dict[str, Any]], Awaitable[CallOutcome]]
"""Runs one tool call (`{"id", "function": {"name", "arguments"}}`), returns its record."""


def same_call(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same tool name and same arguments (as JSON values when both parse, else as text)."""
    fa, fb = a.get("function") or {}, b.get("function") or {}
    if fa.get("name") != fb.get("name"):
        return False
    raw_a, raw_b = str(fa.get("arguments") or ""), str(fb.get("arguments") or "")
    try:
        return bool(json.loads(raw_a or "{}") == json.loads(raw_b or "{}"))
    except ValueError:
        return raw_a == raw_b


class StepDispatcher:
    """One step's tool calls (see the module docstring).

    Args:
        run_call: runs one call.
        limit: calls running at once (1: one after another, in the reply's order).
        streaming: start calls as the stream completes them (`on_ready`).
        mark: fill the records' `dispatch` fields (a knob is on).
    """

    def __init__(
        self, run_call: RunCall, *, limit: int, streaming: bool, mark: bool = True
    ) -> None:
        self._run_call = run_call
        self._mark = mark
        self._slots = asyncio.Semaphore(limit)
        self.streaming = streaming
        self._streamed: dict[int, tuple[dict[str, Any], ToolReady, asyncio.Task[CallOutcome]]] = {}
        self._taken: dict[int, Awaitable[CallOutcome]] = {}

    def take(self, index: int, outcome: Awaitable[CallOutcome]) -> None:
        """Use `outcome` (a matched speculative run) as call `index`'s result."""
        self._taken[index] = outcome

    def on_ready(self, ready: ToolReady) -> None:
        """The client's hook: start a call whose arguments are complete (streaming only)."""
        if not self.streaming or ready.index in self._taken:
            return
        known = self._streamed.get(ready.index)
        if known is not None and same_call(known[0], ready.call):
            return  # announced again by a retried attempt: already running
        task = asyncio.ensure_future(self._slot(ready.call, time.perf_counter()))
        self._streamed[ready.index] = (ready.call, ready, task)

    async def _slot(self, call: dict[str, Any], ready_at: float) -> CallOutcome:
        async with self._slots:
            record, result = await self._run_call(call)
        record.queued_s = max(0.0, record.started - ready_at)
        return record, result

    async def finish(self, calls: list[dict[str, Any]], streamed_chars: int) -> list[CallOutcome]:
        """Every call's outcome, in the reply's order, once all have run.

        Args:
            calls: the complete reply's tool calls.
            streamed_chars: the reply's streamed characters (for `dispatch_fraction`).
        """
        ready_at = time.perf_counter()
        pending: list[Awaitable[CallOutcome]] = []
        kinds: list[tuple[str, ToolReady | None]] = []
        for index, call in enumerate(calls):
            streamed = self._streamed.pop(index, None)
            if index in self._taken:
                pending.append(self._taken[index])
                kinds.append(("speculative", None))
            elif streamed is not None and same_call(streamed[0], call):
                pending.append(streamed[2])
                kinds.append(("stream", streamed[1]))
            else:
                pending.append(asyncio.ensure_future(self._slot(call, ready_at)))
                kinds.append(("after_message", None))
        stale = [entry[2] for entry in self._streamed.values()]
        outcomes = list(await asyncio.gather(*pending))
        await asyncio.gather(*stale, return_exceptions=True)
        for (record, _), (kind, ready), call in zip(outcomes, kinds, calls, strict=True):
            record.call_id = str(call.get("id") or "")
            if not self._mark:
                continue
            record.dispatch = kind
            if ready is not None:
                record.dispatch_token = ready.chunks
                record.dispatch_fraction = min(1.0, ready.chars / max(1, streamed_chars))
        return outcomes
