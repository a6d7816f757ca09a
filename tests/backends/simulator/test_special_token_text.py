"""A prompt holding special-token text (`<|endoftext|>`, as AIPerf's synthesized prompts do) is
text to count, not a 500."""

from __future__ import annotations

import openai

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.latency.tokens import default_tokenizer


async def test_special_token_text_is_counted_as_text() -> None:
    """The simulator answers a prompt with `<|endoftext|>` in it; the count includes it."""
    text = "first block<|endoftext|>second block <|fim_prefix|>"
    assert default_tokenizer().count(text) > default_tokenizer().count("first block")
    profile = resolve_profile("fast-750", ["decode_tps=20000", "ttft_s=0", "output_tokens=5"])
    with SimulatorServer(profile) as server:
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c:
            reply = await c.chat.completions.create(
                model="looplab-lorem", messages=[{"role": "user", "content": text}]
            )
    assert reply.usage is not None and reply.usage.prompt_tokens > 5
