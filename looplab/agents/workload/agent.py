"""The workload agent's system prompt, tools and task prompt.

Its tools are synthetic work tools named like the shape's recorded tools; its task
prompt names the shape (`TaskShape.marker`, how the simulator's `workload` policy finds
it) and is padded so the first request's prompt has the recorded first prompt's token
count (as the simulator counts it: the same tokenizer, the tool schemas as it parses
them). Tool results are never cut (`ToolBox(output_limit=None)`): they carry the
recorded prompt growth.
"""

from __future__ import annotations

from typing import Any

from looplab.backends.simulator.protocol import ToolSpec
from looplab.latency.tokens import REPLY_PRIMING_TOKENS, default_tokenizer
from looplab.tools.registry import ToolBox
from looplab.tools.synthetic import SyntheticWork, filler_text, synthetic_tools
from looplab.workloads.shape import TaskShape

__all__ = ["SYSTEM_PROMPT", "workload_prompt", "workload_toolbox"]

SYSTEM_PROMPT = """\
You are replaying the shape of a recorded agent run. Call the tools each step asks for; \
each does real work in the sandbox for the recorded time."""


def workload_toolbox(shape: TaskShape, work: SyntheticWork) -> ToolBox:
    """One synthetic tool per tool name of `shape`; results kept whole."""
    return ToolBox(synthetic_tools(shape.tool_names, work), output_limit=None)


def workload_prompt(shape: TaskShape, system_prompt: str, tools: list[dict[str, Any]]) -> str:
    """The task prompt: the shape's marker, padded to the recorded first prompt.

    Args:
        shape: the task shape.
        system_prompt: the system message the loop sends before it.
        tools: the `tools` of the request (`ToolBox.openai_tools()`).
    """
    head = (
        f"{shape.marker} Trace-driven task {shape.id}: {len(shape.steps)} step(s). "
        "Call the tools each step asks for."
    )
    target = shape.steps[0].prompt_tokens
    if target is None:
        return head
    tokenizer = default_tokenizer()
    specs = [ToolSpec.model_validate(tool).model_dump(exclude_none=True) for tool in tools]
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": ""}]
    room = target - tokenizer.count_messages(messages, specs)[-1] - REPLY_PRIMING_TOKENS
    if room <= tokenizer.count(head) + 1:
        return head
    return filler_text(head, room, tokenizer)
