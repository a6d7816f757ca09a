"""SSE and JSON format conformance, checked with the real openai client.

It sits in tests/backends/simulator/ without importing looplab.backends.simulator: it
reaches the simulator through the `openai_client` fixture (tests/backends/conftest.py).
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

USER = [{"role": "user", "content": "Explain the failing test."}]


async def test_text_stream_assembles_with_usage(openai_client: openai.AsyncOpenAI) -> None:
    """A text stream has one id/model throughout, ends with `stop`, then a usage chunk."""
    stream = await openai_client.chat.completions.create(
        model="looplab-lorem", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]
    assert len({c.id for c in chunks}) == 1
    assert len({c.created for c in chunks}) == 1
    assert {c.model for c in chunks} == {"looplab-lorem"}
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(text.split()) >= 10
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["stop"]
    assert chunks[-1].choices == []
    usage = chunks[-1].usage
    assert usage is not None
    assert usage.completion_tokens == 40
    assert usage.total_tokens == usage.prompt_tokens + 40
    assert usage.prompt_tokens_details is not None
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == 0


async def test_tool_call_stream_fragments(
    openai_client: openai.AsyncOpenAI, tools: list[dict[str, Any]]
) -> None:
    """Tool calls stream as a header fragment (index, id, type, name) then argument pieces."""
    stream = await openai_client.chat.completions.create(
        model="looplab-lorem",
        messages=USER,
        tools=tools,
        stream=True,  # type: ignore[arg-type]
    )
    fragments = []
    finish = None
    async for chunk in stream:
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        fragments.extend(choice.delta.tool_calls or [])
    assert finish == "tool_calls"
    head, rest = fragments[0], fragments[1:]
    assert head.index == 0
    assert head.id and head.id.startswith("call_")
    assert head.type == "function"
    assert head.function is not None and head.function.name == "run_tests"
    assert rest, "arguments must arrive in later fragments"
    for fragment in rest:
        assert fragment.id is None and fragment.type is None
        assert fragment.function is not None and fragment.function.name is None
    arguments = json.loads("".join(f.function.arguments or "" for f in rest if f.function))
    assert set(arguments) == {"path", "verbose"}
    assert isinstance(arguments["verbose"], bool)


async def test_tool_result_gets_text_answer(
    openai_client: openai.AsyncOpenAI, tools: list[dict[str, Any]]
) -> None:
    """After a tool result the lorem model answers in text, so an agent loop ends."""
    first = await openai_client.chat.completions.create(
        model="looplab-lorem",
        messages=USER,
        tools=tools,  # type: ignore[arg-type]
    )
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    conversation = [
        *USER,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "2 passed"},
    ]
    second = await openai_client.chat.completions.create(
        model="looplab-lorem",
        messages=conversation,
        tools=tools,  # type: ignore[arg-type]
    )
    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.content


async def test_non_streaming_matches_stream(openai_client: openai.AsyncOpenAI) -> None:
    """The same request gives the same content streamed and not streamed."""
    whole = await openai_client.chat.completions.create(model="looplab-lorem", messages=USER)
    stream = await openai_client.chat.completions.create(
        model="looplab-lorem", messages=USER, stream=True
    )
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert whole.choices[0].message.content == text
    assert whole.object == "chat.completion"
    assert whole.usage is not None and whole.usage.completion_tokens == 40


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
async def test_token_limit_finishes_with_length(
    openai_client: openai.AsyncOpenAI, field: str
) -> None:
    """A completion cap cuts the reply at exactly that many tokens with `length`."""
    whole = await openai_client.chat.completions.create(
        model="looplab-lorem",
        messages=USER,
        **{field: 7},  # type: ignore[call-overload]
    )
    assert whole.choices[0].finish_reason == "length"
    assert whole.usage is not None and whole.usage.completion_tokens == 7


async def test_models_endpoint_lists_policies(openai_client: openai.AsyncOpenAI) -> None:
    """GET /v1/models lists the served `looplab-<policy>` ids."""
    models = [m.id async for m in openai_client.models.list()]
    assert "looplab-lorem" in models
