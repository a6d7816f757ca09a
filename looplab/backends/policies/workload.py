"""`workload`: plays a task shape (a recorded run's, or a workload model's draw) step by step.

Trace-driven live runs (`looplab.workloads`): the agent's first user message names the
shape (`[looplab-workload <key>]`, see `TaskShape.marker`); the shape must have been
loaded into this policy (`load(shape)`; the experiment runner does it for the in-process
simulator). The step is the number of assistant messages so far, as in `replay`.

Step k's reply:

- **tool calls**: the step's recorded/drawn calls, by their recorded names, with compact
  JSON arguments the synthetic work tool reads: `{"seconds":S,"tokens":N}`, plus
  `"fail":true` for a call that failed in the recording and `"final":true` on the last
  call of the last step (the tool then ends the run, so that call never fails), and
  `"wait":W` for a computer-use action's observation time (page load, screenshot);
- **visible text**: one-token lorem words so that text plus tool calls is exactly the
  step's `output_tokens` visible tokens (more only if the calls alone need more slots);
- **hidden reasoning**: the step's `reasoning_tokens` (None: the profile's draw);
- **cache hits**: the step's `cached_tokens` are reported as served from the prefix
  cache (not prefilled), as the recorded backend served them (None: the simulator's
  prefix cache decides).

**Prompt growth.** Each call's `tokens` is chosen so that the next request's prompt
reaches the shape's next `prompt_tokens`: the policy counts the conversation it is
given, adds its own reply and the tool messages to come, and splits what is missing
over the calls' results (the tool answers with exactly that many tokens). The error of
one step (token merges at message boundaries, a reply longer than recorded) does not
carry over: the next step aims at the absolute target again. A target below what the
conversation already holds (the real harness dropped context) is missed: results get 0
tokens. Without a next target a call's result gets the shape's `output_tokens` (or 0).
The conversation grows by appending, so where a shape leaves cache hits to the
simulator its prefix cache serves the earlier prompt, as a real prompt cache would.
"""

from __future__ import annotations

import json
import random
from typing import Any

from looplab.backends.policies.base import PlannedToolCall, PolicyContext, Reply
from looplab.backends.simulator.protocol import ApiError, ChatRequest
from looplab.latency.tokens import REPLY_PRIMING_TOKENS
from looplab.workloads.shape import SHAPE_MARKER, StepShape, TaskShape

__all__ = ["WorkloadPolicy", "tool_arguments"]

FILLER_WORDS = (
    "lorem",
    "ipsum",
    "sit",
    "sed",
    "do",
    "tempor",
    "ut",
    "et",
    "magna",
    "ad",
    "minim",
    "ex",
    "ea",
    "in",
    "esse",
    "nulla",
    "sint",
    "non",
    "sunt",
    "qui",
    "anim",
    "id",
    "est",
)
"""Lorem words that are one o200k token each with a leading space, so a reply of N
visible tokens also counts N tokens when it is sent back in the next prompt."""


def filler_pieces(count: int, rng: random.Random) -> list[str]:
    """`count` one-token word pieces (no punctuation, which would merge or split)."""
    words = [rng.choice(FILLER_WORDS) for _ in range(count)]
    return [word if index == 0 else " " + word for index, word in enumerate(words)]


def tool_arguments(
    seconds: float, tokens: int, *, fail: bool = False, final: bool = False, wait: float = 0.0
) -> str:
    """The synthetic work tool's arguments as the policy writes them (compact JSON);
    `wait` (observation time after the work, computer-use workloads) only when non-zero."""
    arguments: dict[str, Any] = {"seconds": round(seconds, 3), "tokens": tokens}
    if wait > 0:
        arguments["wait"] = round(wait, 3)
    if fail:
        arguments["fail"] = True
    if final:
        arguments["final"] = True
    return json.dumps(arguments, separators=(",", ":"))


class WorkloadPolicy:
    """Plays loaded task shapes (see the module docstring)."""

    name = "workload"

    def __init__(self) -> None:
        self.shapes: dict[str, TaskShape] = {}

    def load(self, shape: TaskShape) -> str:
        """Make `shape` playable; returns its key (the prompt names it by `shape.marker`)."""
        self.shapes[shape.key] = shape
        for step, spawned in enumerate(shape.steps):
            for index in range(len(spawned.subagents)):
                self.load(shape.subagent_shape(step, index))
        return shape.key

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """Step k of the shape the prompt names.

        Raises:
            ApiError: 400 when the prompt names no loaded shape, or the conversation is
                past the shape's last step.
        """
        shape = self._shape(request)
        step = sum(1 for m in request.messages if m.role == "assistant")
        if step >= len(shape.steps):
            raise ApiError(
                400,
                f"workload: shape {shape.id} has {len(shape.steps)} step(s); this request "
                f"asks for step {step + 1}",
                param="messages",
                code="workload_exhausted",
            )
        current = shape.steps[step]
        last = step + 1 == len(shape.steps)
        target = None if last else shape.steps[step + 1].prompt_tokens
        calls, content = self._plan(request, context, current, step, last, target)
        calls += [  # sub-agents, played by this policy from their own shapes
            PlannedToolCall(
                id=f"wl{step}_sub{index}",
                name=DELEGATE_TOOL,
                argument_pieces=context.tokenizer.split(
                    json.dumps({"role": "workload", "task": subagent_task(sub)})
                ),
            )
            for index, sub in enumerate(shape.subagent_shape(step, i) for i in _subs(current))
        ]
        return Reply(
            content_pieces=content,
            tool_calls=calls,
            reasoning_tokens=current.reasoning_tokens,
            cached_tokens=current.cached_tokens,
        )

    def _shape(self, request: ChatRequest) -> TaskShape:
        first_user = next((m for m in request.messages if m.role == "user"), None)
        text = first_user.content if first_user and isinstance(first_user.content, str) else ""
        found = SHAPE_MARKER.search(text)
        if found is None or found.group(1) not in self.shapes:
            raise ApiError(
                400,
                "workload: the first user message names no loaded task shape "
                "([looplab-workload KEY]); trace-driven tasks run through `looplab run` "
                "with `trace:PATH` or `workload:PATH` tasks, which load their shape",
                param="messages",
                code="workload_unknown",
            )
        return self.shapes[found.group(1)]

    def _plan(
        self,
        request: ChatRequest,
        context: PolicyContext,
        current: StepShape,
        step: int,
        last: bool,
        target: int | None,
    ) -> tuple[list[PlannedToolCall], list[str]]:
        specs = current.tools
        words = filler_pieces(current.output_tokens, context.rng)
        tokens = [t.output_tokens or 0 for t in specs]
        finals = [last and i == len(specs) - 1 for i in range(len(specs))]
        calls: list[PlannedToolCall] = []
        content: list[str] = []
        for _ in range(3):  # each pass sees the argument lengths the previous one chose
            calls = [
                PlannedToolCall(
                    id=f"wl{step}_{i}",
                    name=t.name,
                    argument_pieces=context.tokenizer.split(
                        tool_arguments(
                            t.seconds,
                            tokens[i],
                            fail=not t.ok and not final,
                            final=final,
                            wait=t.wait_s,
                        )
                    ),
                )
                for i, (t, final) in enumerate(zip(specs, finals, strict=True))
            ]
            slots = sum(1 + len(c.argument_pieces) for c in calls)
            content = words[: max(0, current.output_tokens - slots)]
            if target is None or not calls:
                break
            missing = target - _prompt_after(request, context, content, calls)
            share, rest = divmod(max(0, missing), len(calls))
            chosen = [share + (rest if i == len(calls) - 1 else 0) for i in range(len(calls))]
            if chosen == tokens:
                break
            tokens = chosen
        return calls, content


def _prompt_after(
    request: ChatRequest, context: PolicyContext, content: list[str], calls: list[PlannedToolCall]
) -> int:
    """Prompt tokens of the next request if every tool result were empty."""
    messages = [m.model_dump(exclude_none=True) for m in request.messages]
    tools = [t.model_dump(exclude_none=True) for t in request.tools or []]
    reply: dict[str, Any] = {
        "role": "assistant",
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }
    if content:
        reply["content"] = "".join(content)
    results = [{"role": "tool", "tool_call_id": c.id, "content": ""} for c in calls]
    cumulative = context.tokenizer.count_messages([*messages, reply, *results], tools)
    return cumulative[-1] + REPLY_PRIMING_TOKENS


DELEGATE_TOOL = "delegate"
"""The agents' sub-agent tool (`looplab.agents.fanout`)."""


def subagent_task(shape: TaskShape) -> str:
    """A drawn sub-agent's task: its shape's marker (this policy then plays that shape)."""
    return f"{shape.marker} Sub-agent {shape.id}: {len(shape.steps)} step(s)."


def _subs(step: StepShape) -> range:
    return range(len(step.subagents))
