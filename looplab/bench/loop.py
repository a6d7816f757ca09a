"""`looplab bench transport --loop`: one tool-calling task over HTTP vs the Responses WebSocket.

OpenAI reported (2026-04-22) that a persistent WebSocket cut per-round-trip overhead about
80% and made runs with 20+ tool calls about 40% faster end to end. This bench runs the
shape of such a run on the wall clock: a simulator (`SimulatorServer`, a fast preset with a
network RTT and an assumed per-call overhead) and a loop of `calls` model calls through
the real openai client, each answered with a tool call (`tool_choice: required`), each
followed by a tool of `tool_s` seconds whose output goes into the next call:

- `http`: `responses.create(stream=True)` on a kept-alive connection, the whole input
  each call (as a stateless client sends it);
- `websocket`: `responses.connect()` once, `response.create` with `previous_response_id`
  and only the new `function_call_output`.

Both pay `network_rtt_s` per call; the HTTP call pays `request_overhead_s`, the WebSocket
turn `websocket_overhead_s` (`looplab.latency.timing`). The cut is measured, but it
rests on the overhead assumed: `overhead_for_cut` gives the per-call HTTP overhead a cut
needs, from the measured rest of a step.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

import openai

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.errors import BackendError
from looplab.latency.presets import resolve_profile
from looplab.latency.timing import Transport

__all__ = ["LoopRun", "overhead_for_cut", "run_loop_bench"]

_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "run",
    "description": "Run a shell command.",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}
_TOOLS: Any = [_TOOL]
"""`_TOOL` as the client's `tools` (Any: the client types each tool kind as a TypedDict)."""
_MODEL = "looplab-lorem"


@dataclass
class LoopRun:
    """One transport's run of the task; times in seconds."""

    transport: Transport
    calls: int
    task_s: float
    """Wall time of the whole task (model calls + tools)."""
    tool_s: float
    """Summed tool time."""
    overhead_s: float
    """The per-call overhead the profile charged each of its calls."""

    @property
    def per_call_s(self) -> float:
        """Mean model-call time (task minus tools, per call)."""
        return (self.task_s - self.tool_s) / self.calls

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {**asdict(self), "per_call_s": self.per_call_s}


def overhead_for_cut(run: LoopRun, cut: float, overhead_cut: float = 0.8) -> float:
    """The per-call HTTP overhead (s) for which cutting it by `overhead_cut` shortens `run`
    (an HTTP run) by `cut`: solves `overhead_cut x O x n = cut x (T - n o + n O)`, with
    `T` the run's task time, `o` the overhead it paid, `n` its calls.

    Raises:
        ValueError: `cut >= overhead_cut` (no overhead can give it).
    """
    if cut >= overhead_cut:
        raise ValueError(f"a {cut:.0%} cut needs an overhead cut above {overhead_cut:.0%}")
    rest = run.task_s - run.calls * run.overhead_s  # the run without any overhead
    return cut * rest / (run.calls * (overhead_cut - cut))


Loop = Callable[[openai.AsyncOpenAI, int, float], Awaitable[None]]
"""One transport's task loop: (client, calls, tool seconds)."""


async def _http_loop(client: openai.AsyncOpenAI, calls: int, tool_s: float) -> None:
    items: list[Any] = [{"role": "user", "content": "Fix the failing test."}]
    for _ in range(calls):
        stream = await client.responses.create(
            model=_MODEL, input=items, tools=_TOOLS, tool_choice="required", stream=True
        )
        final: Any = None
        async for event in stream:
            if event.type == "response.completed":
                final = event.response
        call = _function_call(final)
        items += [
            {k: call[k] for k in ("type", "call_id", "name", "arguments")},
            await _tool(call["call_id"], tool_s),
        ]


async def _ws_loop(client: openai.AsyncOpenAI, calls: int, tool_s: float) -> None:
    new: list[Any] = [{"role": "user", "content": "Fix the failing test."}]
    previous: str | None = None
    async with client.responses.connect() as connection:
        for _ in range(calls):
            await connection.response.create(
                model=_MODEL,
                input=new,
                tools=_TOOLS,
                tool_choice="required",
                previous_response_id=previous,
            )
            final: Any = None
            async for event in connection:
                if event.type == "error":
                    raise BackendError(f"the simulator refused a turn: {event.error.message}")
                if event.type == "response.completed":
                    final = event.response
                    break
            call = _function_call(final)
            previous = final.id
            new = [await _tool(call["call_id"], tool_s)]


def _function_call(response: Any) -> dict[str, Any]:
    if response is None:
        raise BackendError("a call ended without response.completed")
    for item in response.output:
        if item.type == "function_call":
            return dict(item.model_dump())
    raise BackendError("a call answered without a tool call")


async def _tool(call_id: str, tool_s: float) -> dict[str, Any]:
    await asyncio.sleep(tool_s)
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


def run_loop_bench(
    *,
    calls: int = 24,
    tool_s: float = 0.1,
    profile: str = "codex-spark-1000",
    overrides: list[str] | None = None,
) -> list[LoopRun]:
    """Run the task once per transport (HTTP first) against one in-process simulator.

    Args:
        calls: model calls (= tool calls) in the task.
        tool_s: seconds each tool takes.
        profile: the latency preset (or profile YAML) of the simulated model.
        overrides: profile overrides (`network_rtt_s=0.05`, `request_overhead_s=0.2`, ...).

    Raises:
        BackendError: a call failed or did not ask for a tool.
    """
    runs: list[LoopRun] = []
    with SimulatorServer(resolve_profile(profile, overrides or [])) as server:
        timing = server.simulator.timing
        loops: dict[Transport, Loop] = {"http": _http_loop, "websocket": _ws_loop}
        for transport, loop in loops.items():
            task_s = asyncio.run(_timed(server.base_url, loop, calls, tool_s))
            runs.append(
                LoopRun(
                    transport=transport,
                    calls=calls,
                    task_s=task_s,
                    tool_s=calls * tool_s,
                    overhead_s=timing.overhead_s(transport),
                )
            )
    return runs


async def _timed(base_url: str, loop: Any, calls: int, tool_s: float) -> float:
    """Seconds `loop` takes for the task, after one untimed call: the client's and the
    server's one-time work (model classes built, tokenizer loaded) is no transport's cost."""
    client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
    try:
        await loop(client, 1, 0.0)
        started = time.perf_counter()
        await loop(client, calls, tool_s)
        return time.perf_counter() - started
    finally:
        await client.close()
