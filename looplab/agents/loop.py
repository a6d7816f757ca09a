"""The shared instrumented agent loop: one LangGraph node, one step per superstep.

```
START -> step --(go on)--> step --> ...
           +--(answer, finish, limit, backend error)--> END
```

A step reads in one screen (`AgentLoop._step`): **limits** (`max_steps`, `token_budget`,
`wall_time_budget_s`, checked before each step, the last also each tool call's deadline,
`deadline.py`; reaching one ends the run with that reason), **query** (one streamed call
through the `InstrumentedClient`, TTFT, decode, tokens and finish reason recorded, after a
planning call when one is due; backend failures are retried per `RetryConfig`, and when
retries run out the run ends with `backend_error`, recorded, not raised), **execute** (every
requested call through the `ToolBox`, so an unknown tool, bad JSON, arguments off the schema
or a raising tool become `ERROR:` results the model can read; calls run through a
`StepDispatcher` (`dispatch.py`): at most `max_parallel_tools` at once, started while the
reply still streams with `streaming_dispatch`; with `speculation` a likely read-only call
runs during the model call and is used when it matches, `speculation.py`), **observe** (the
results, and the browser's screenshots, appended to the conversation; a reflection call when
one is due) and **record** (the step's `StepRecord`: model phase, tools, side calls, its
end). With `fanout` the tools include `delegate`, whose calls run sub-agents (`fanout.py`).

Why LangGraph: the run is a state graph whose state (the conversation and the end
reason) changes once per step, so a checkpointer (`compile(checkpointer=...)`), `astream`
(one state update per step) and `interrupt_before=["step"]` attach at step boundaries.
looplab runs `ainvoke` and uses none of these yet. With one node per step, LangGraph's
superstep budget is derived from `max_steps` (`superstep_limit`), not padded: a run is
always stopped by its own limits, never by LangGraph's. The graph is the same for every
agent; agents differ in system prompt and tools.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from looplab.agents.config import AgentConfig
from looplab.agents.deadline import run_deadline, told_time, within_deadline
from looplab.agents.deliberation import due, side_call
from looplab.agents.dispatch import StepDispatcher
from looplab.agents.fanout import Delegation
from looplab.agents.images import drop_old_images, image_message
from looplab.agents.records import ModelCallRecord, RunResult, StepRecord, ToolCallRecord
from looplab.agents.retry import complete_with_retries
from looplab.agents.speculation import Speculator
from looplab.backends.client.client import InstrumentedClient, ToolReady
from looplab.errors import BackendError
from looplab.sandbox_contract import SandboxEvent
from looplab.tools.base import ToolContext, ToolResult
from looplab.tools.registry import ToolBox
from looplab.traces.end_reason import EndReason

__all__ = ["AgentLoop", "LoopState", "superstep_limit"]


class LoopState(TypedDict):
    """The graph's state: the conversation and why the run ended (if it has)."""

    messages: list[dict[str, Any]]
    end_reason: EndReason | None


def superstep_limit(max_steps: int) -> int:
    """LangGraph's recursion limit for a run of at most `max_steps` steps: the step node
    runs once per step and once more to find a limit reached, and LangGraph counts the
    input as a superstep too; so the budget never binds before `max_steps` does."""
    return max_steps + 2


class AgentLoop:
    """Runs one agent (system prompt + tools) on one task.

    Args:
        client: the backend.
        toolbox: the agent's tools.
        context: what the tools act on (sandbox, services, browser).
        system_prompt: the agent's instructions.
        config: limits, budgets, concurrency, retries.
        harness_time_s: emulated harness time of step k (trace-driven runs replay another
            harness's own time): slept after the step's tools and counted as the step's
            overhead. None: none (the loop's own overhead only).
        pending: the context still being set up (`eager_sandbox`): the first tool call
            waits for it, the wait counted in its `queued_s` and in the run's
            `knob_stats.sandbox_wait_s`; `context` is then a placeholder (None).
    """

    def __init__(
        self,
        client: InstrumentedClient,
        toolbox: ToolBox,
        context: ToolContext | None,
        system_prompt: str,
        config: AgentConfig | None = None,
        harness_time_s: Callable[[int], float] | None = None,
        pending: asyncio.Future[ToolContext] | None = None,
    ) -> None:
        self.client = client
        self._pending = pending
        self._sandbox_wait_s = 0.0
        self.harness_time_s = harness_time_s
        self.context = context
        self.config = config or AgentConfig()
        fan = Delegation(toolbox, self.config, self._sub_loop, lambda: len(self.steps) - 1)
        self._delegation = fan if self.config.fanout else None
        self.toolbox = toolbox.with_tools([fan.tool()]) if self._delegation else toolbox
        self.system_prompt = self.config.system_prompt or system_prompt
        self.steps: list[StepRecord] = []
        self._started = 0.0
        self._tokens = 0
        self._error: str | None = None
        self._finish_text = ""
        self._dispatcher = self._new_dispatcher()
        self._streamed_chars = 0
        self._speculator = (
            Speculator(self._one_call, frozenset(toolbox.names))
            if self.config.speculation
            else None
        )
        graph = StateGraph(LoopState)
        graph.add_node("step", self._step)
        graph.add_edge(START, "step")
        graph.add_conditional_edges("step", _go_on, ["step", END])
        self._graph = graph.compile()

    def record_sandbox_event(self, event: SandboxEvent) -> None:
        """An `EventSink`: files the event under the step running now."""
        if self.steps:
            self.steps[-1].sandbox_events.append(event)

    async def run(self, prompt: str) -> RunResult:
        """Run the loop on a task prompt until it ends; never raises for backend failures.

        Returns:
            The end reason, the conversation and every step's timing.
        """
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": prompt},
        ]
        self._started = time.perf_counter()
        state: LoopState = {"messages": messages, "end_reason": None}
        limit = superstep_limit(self.config.max_steps)
        final = await self._graph.ainvoke(state, config={"recursion_limit": limit})
        ended = self.steps[-1].ended if self.steps else time.perf_counter()
        stats = await self._knob_stats()
        last = final["messages"][-1]
        text = str(last.get("content") or "") if last.get("role") == "assistant" else ""
        return RunResult(
            end_reason=EndReason(final["end_reason"]),
            started=self._started,
            ended=ended,
            steps=self.steps,
            messages=final["messages"],
            final_text=self._finish_text or text,
            error=self._error,
            tokens_used=self._tokens + (self._delegation.tokens if self._delegation else 0),
            knobs=self.config.knobs(),
            knob_stats=stats,
            subruns=self._delegation.subruns if self._delegation else [],
        )

    def _sub_loop(
        self, toolbox: ToolBox, context: ToolContext, prompt: str, config: AgentConfig
    ) -> AgentLoop:
        """A sub-agent's loop (`fanout.Delegation`): same backend, same sandbox."""
        return AgentLoop(self.client, toolbox, context, prompt, config)

    def _knobs_on(self) -> bool:
        config = self.config
        return config.streaming_dispatch or config.speculation or config.max_parallel_tools > 1

    def _new_dispatcher(self) -> StepDispatcher:
        return StepDispatcher(
            self._one_call,
            limit=self.config.tool_limit(),
            streaming=self.config.streaming_dispatch,
            mark=self._knobs_on(),
        )

    async def _knob_stats(self) -> dict[str, float]:
        """Wait for what the knobs left running; count what they did."""
        await self._dispatcher.finish([], 1)  # a stream cut off by a backend error
        stats: dict[str, float] = {}
        if self._knobs_on():
            stats["tool_limit"] = float(self.config.tool_limit())
        if self.config.eager_sandbox:
            stats["sandbox_wait_s"] = self._sandbox_wait_s
        if self.config.streaming_dispatch:
            streamed = [t for s in self.steps for t in s.tools if t.dispatch == "stream"]
            stats["streamed_calls"] = float(len(streamed))
        if self._delegation is not None:
            stats.update(self._delegation.stats())
        if self._speculator is not None:
            await self._speculator.drain()
            stats.update(self._speculator.stats())
        return stats

    def _on_tool_ready(self, ready: ToolReady) -> None:
        """The stream completed a call's arguments: resolve speculation, dispatch it."""
        if ready.index == 0 and self._speculator is not None:
            self._speculator.resolve(ready.call, self._dispatcher)
        self._dispatcher.on_ready(ready)

    def _limit_reached(self) -> EndReason | None:
        config = self.config
        if len(self.steps) >= config.max_steps:
            return EndReason.STEP_LIMIT
        if config.token_budget is not None and self._tokens >= config.token_budget:
            return EndReason.TOKEN_BUDGET
        elapsed = time.perf_counter() - self._started
        if config.wall_time_budget_s is not None and elapsed >= config.wall_time_budget_s:
            return EndReason.WALL_TIME_BUDGET
        return None

    async def _step(self, state: LoopState) -> dict[str, Any]:
        """One step: query the model, execute its tool calls, observe their results, record."""
        reason = self._limit_reached()
        if reason is not None:
            return {"end_reason": reason}
        step = StepRecord(index=len(self.steps), started=time.perf_counter())
        self.steps.append(step)
        messages, reply, end = await self._query(step, state["messages"])
        if reply is None:
            return {"messages": messages, "end_reason": end}
        messages, end = await self._execute(step, [*messages, reply], reply)
        messages, end = await self._observe(step, messages, end)
        step.ended = time.perf_counter()
        return {"messages": messages, "end_reason": end}

    async def _query(
        self, step: StepRecord, messages: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None, EndReason | None]:
        """The step's model call (after a planning call when one is due), recorded.

        Returns:
            The conversation, the reply with tool calls to run (None when the step ends
            here), and the end reason: `backend_error`, or `answer` (a reply without tool
            calls, then already in the conversation), or None (go on with the tools).
        """
        params = self._call_params()
        if self._speculator is not None:
            self._speculator.start(self.steps[-2].tools if len(self.steps) > 1 else [])
        try:
            messages = told_time(messages, self.config, self._started)
            if due(self.config.planner, step.index):
                messages = await self._side_call(step, messages, "planner")
            response = await complete_with_retries(
                self.client,
                messages,
                tools=self.toolbox.openai_tools(),
                policy=self.config.retry,
                attempts=step.attempts,
                **params,
            )
        except BackendError as exc:
            step.model_ended = step.ended = time.perf_counter()
            self._error = str(exc)
            return messages, None, EndReason.BACKEND_ERROR
        step.model = ModelCallRecord.from_response(response)
        self._tokens += (response.prompt_tokens or 0) + (response.completion_tokens or 0)
        step.model_ended = step.ended = time.perf_counter()
        message = response.message
        self._streamed_chars = response.streamed_chars
        if self._speculator is not None:
            calls = message.get("tool_calls") or []
            self._speculator.resolve(calls[0] if calls else None, self._dispatcher)
        if not message.get("tool_calls"):
            return [*messages, message], None, EndReason.ANSWER
        return messages, message, None

    def _call_params(self) -> dict[str, Any]:
        """The model call's parameters; a fresh dispatcher for the step's tool calls."""
        params: dict[str, Any] = {}
        if self.config.max_completion_tokens is not None:
            params["max_completion_tokens"] = self.config.max_completion_tokens
        if self.config.temperature is not None:
            params["temperature"] = self.config.temperature
        params["parallel_tool_calls"] = self.config.tool_limit() > 1
        self._dispatcher = self._new_dispatcher()
        if self.config.streaming_dispatch or self._speculator is not None:
            params["on_tool_ready"] = self._on_tool_ready
        return params

    async def _execute(
        self, step: StepRecord, messages: list[dict[str, Any]], reply: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], EndReason | None]:
        """Run the reply's tool calls (see `StepDispatcher`) and append their results.

        Returns:
            The conversation and `finish` when the finish tool succeeded (else None).
        """
        calls: list[dict[str, Any]] = reply.get("tool_calls") or []
        outcomes = await self._dispatcher.finish(calls, self._streamed_chars)
        finished = False
        images: list[bytes] = []
        for call, (record, result) in zip(calls, outcomes, strict=True):
            step.tools.append(record)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.content})
            if result.finish and record.ok:
                finished = True
                self._finish_text = result.content
            if result.image is not None:
                images.append(result.image)
        shown = image_message(images)
        if shown is not None:
            messages = drop_old_images([*messages, shown], self.config.images_kept)
        return messages, EndReason.FINISH if finished else None

    async def _observe(
        self, step: StepRecord, messages: list[dict[str, Any]], end: EndReason | None
    ) -> tuple[list[dict[str, Any]], EndReason | None]:
        """After the results: a reflection call when one is due, then the emulated harness
        time of a trace-driven run."""
        if end is None and due(self.config.reflection, step.index):
            try:
                messages = await self._side_call(step, messages, "reflection")
            except BackendError as exc:
                self._error = str(exc)
                end = EndReason.BACKEND_ERROR
        if self.harness_time_s is not None:
            pause = self.harness_time_s(step.index)
            if pause > 0:
                await asyncio.sleep(pause)
        return messages, end

    async def _side_call(
        self, step: StepRecord, messages: list[dict[str, Any]], purpose: str
    ) -> list[dict[str, Any]]:
        """A planning or reflection call (`deliberation.py`): recorded in the step, its
        reply appended to the conversation.

        Raises:
            BackendError: retries ran out.
        """
        config = self.config.planner if purpose == "planner" else self.config.reflection
        assert config is not None
        call, said = await side_call(
            self.client,
            messages,
            self.toolbox.openai_tools(),
            config,
            purpose=purpose,
            retry=self.config.retry,
            attempts=step.attempts,
        )
        step.side_calls.append(call)
        record = call.record
        self._tokens += (record.prompt_tokens or 0) + (record.completion_tokens or 0)
        return [*messages, said]

    async def _context(self) -> ToolContext:
        """The tools' context; with a pending setup, waits for it (the wait is recorded)."""
        pending = self._pending
        if pending is not None:
            waited = time.perf_counter()
            # shielded: a cancelled tool call must not cancel the shared setup
            context = await asyncio.shield(pending)
            if self._pending is not None:  # the first of concurrent waiters records it
                self._pending = None
                self.context = context
                self._sandbox_wait_s = time.perf_counter() - waited
        if self.context is None:
            raise RuntimeError("AgentLoop has neither a context nor a pending one")
        return self.context

    async def _one_call(self, call: dict[str, Any]) -> tuple[ToolCallRecord, ToolResult]:
        function = call.get("function") or {}
        name = str(function.get("name") or "")
        arguments = str(function.get("arguments") or "")
        context = await self._context()
        started = time.perf_counter()
        deadline = run_deadline(self.config, self._started)
        result, cut = await within_deadline(deadline, self.toolbox.call(name, arguments, context))
        ended = time.perf_counter()
        error = result.content[:500] if result.content.startswith("ERROR:") else None
        record = ToolCallRecord(
            call_id=str(call.get("id") or ""),
            name=name,
            arguments=arguments,
            started=started,
            ended=ended,
            ok=result.ok,
            error=error,
            output_chars=len(result.content),
            synthetic=result.synthetic,
            screenshot=result.trace_image,
            phases=result.phases,
            observation=result.observation,
            cut=cut,
        )
        return record, result


def _go_on(state: LoopState) -> str:
    """Another step, unless the last one ended the run."""
    return END if state["end_reason"] else "step"
