"""Budgeted text calls (an agent's planning and reflection calls) get exactly their budget.

It sits in tests/backends/policies/ without importing looplab.backends.policies: the rule
is `policies/budget.py`'s, checked through the simulator's API as an agent calls it.
"""

from __future__ import annotations

import openai
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

FAST = ["decode_tps=20000", "ttft_s=0", "prefill_tps=null", "output_tokens=7"]
TOOL: ChatCompletionToolParam = {
    "type": "function",
    "function": {"name": "click", "parameters": {"type": "object", "properties": {}}},
}


async def test_tool_choice_none_with_a_cap_fills_the_cap_with_text_and_thinking() -> None:
    """`tool_choice: none` + a cap: text of cap - thinking budget, the budget hidden, `stop`;
    without `thinking` the profile's reasoning draw is hidden instead; other requests are
    unchanged (the profile's 7-token draw)."""
    profile = resolve_profile("fast-750", [*FAST, "reasoning_tokens=11"])
    with SimulatorServer(profile) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k")
        messages: list[ChatCompletionMessageParam] = [
            {"role": "user", "content": "Plan the next step."}
        ]
        replies = []
        for model, extra in [
            ("looplab-lorem", {"thinking": {"type": "enabled", "budget_tokens": 30}}),
            ("looplab-scripted", {"thinking": {"type": "enabled", "budget_tokens": 30}}),
            ("looplab-lorem", {}),
        ]:
            replies.append(
                await client.chat.completions.create(
                    model=model,
                    messages=messages,
                    tools=[TOOL],
                    tool_choice="none",
                    max_completion_tokens=100,
                    extra_body=extra,
                )
            )
        plain = await client.chat.completions.create(
            model="looplab-lorem",
            messages=messages,
            max_completion_tokens=100,
        )
        await client.close()
    for reply, hidden in zip(replies, [30, 30, 11], strict=True):
        usage = reply.usage
        assert usage is not None and usage.completion_tokens == 100
        assert usage.completion_tokens_details is not None
        assert usage.completion_tokens_details.reasoning_tokens == hidden
        assert reply.choices[0].finish_reason == "stop"
        assert reply.choices[0].message.content and not reply.choices[0].message.tool_calls
    assert plain.usage is not None and plain.usage.completion_tokens == 7 + 11
