"""The load generator's second client: the stock `openai.AsyncOpenAI`, as a user runs it.

`looplab bench backend` and `bench proxy` measure every cell through two clients:

- `looplab`: `InstrumentedClient`, which reads raw SSE lines (no pydantic chunk objects)
  and stamps `sent` from an httpx request hook;
- `stock`: `openai.AsyncOpenAI` with its own HTTP client, nothing injected, parsing every
  chunk into openai's `ChatCompletionChunk` objects, timed the way serving benchmarks
  (vLLM bench, GuideLLM, AIPerf) time it: TTFT from the call to the first content chunk,
  decode rate = (usage completion tokens - 1) / (last content chunk - first content
  chunk). The stock client has no "sent" moment, so its TTFT includes its own
  request-building time (about 1 ms warm; tens of ms for a process's first request,
  which the warm-up request absorbs).

Both send the same request shape: a non-trivial prompt, `max_tokens`, a streamed reply
with `stream_options.include_usage` (the usage chunk).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import openai

__all__ = ["bench_prompt", "stock_streams"]

_PROMPT = (
    "Write a long answer: explain how the latency of one step of an agent (time to first "
    "token, prefill, decode, tool calls) compounds across a task of many steps, with an "
    "example. Request {tag}."
)


def bench_prompt(tag: str, words: int = 0) -> str:
    """The benchmark's prompt for one request (`words` extra words of context)."""
    return _PROMPT.format(tag=tag) + " context" * words


async def stock_streams(
    base_url: str,
    model: str,
    starts: dict[int, float],
    *,
    rounds: int,
    tag: str,
    prompt_words: int = 0,
    max_tokens: int | None = None,
) -> list[dict[str, Any]]:
    """Run the streams of `starts` (stream `i` from `starts[i]`, `rounds` requests back to
    back) through the stock client, each stream first warmed by a 1-token request; rows
    in the load generator's row format (`looplab.bench.loadgen`)."""
    streams = sorted(starts)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="looplab-bench", max_retries=0)
    rows: list[dict[str, Any]] = []
    try:
        await asyncio.gather(*(_one(client, model, f"warm {i}", 1) for i in streams))

        async def stream(index: int) -> None:
            await asyncio.sleep(max(0.0, starts[index] - time.perf_counter()))
            for turn in range(rounds):
                prompt = bench_prompt(f"{tag} {index}-{turn}", prompt_words)
                rows.append(await _one(client, model, prompt, max_tokens))

        await asyncio.gather(*(stream(i) for i in streams))
    finally:
        await client.close()
    return rows


async def _one(
    client: openai.AsyncOpenAI, model: str, prompt: str, max_tokens: int | None
) -> dict[str, Any]:
    """One streamed request, timed at the client as a serving benchmark times it."""
    start = time.perf_counter()
    raw = await client.chat.completions.with_raw_response.create(
        model=model,
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        stream_options={"include_usage": True},
        max_tokens=openai.omit if max_tokens is None else max_tokens,
    )
    chunk_times: list[float] = []
    finish: str | None = None
    usage: Any = None
    async for chunk in raw.parse():
        now = time.perf_counter()
        if chunk.choices:
            choice = chunk.choices[0]
            if choice.delta.content or choice.delta.tool_calls:
                chunk_times.append(now)
            finish = choice.finish_reason or finish
        if chunk.usage is not None:
            usage = chunk.usage
    end = time.perf_counter()
    details = getattr(usage, "completion_tokens_details", None) if usage else None
    return {
        "scheduled": start,
        "sent": start,
        "first_token": chunk_times[0] if chunk_times else None,
        "last_token": chunk_times[-1] if chunk_times else None,
        "end": end,
        "chunk_times": chunk_times,
        "finish_reason": finish,
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "completion_tokens": usage.completion_tokens if usage else None,
        "reasoning_tokens": getattr(details, "reasoning_tokens", None),
        "visible_chunks": len(chunk_times),
        "request_id": raw.headers.get("x-request-id"),
        "looplab_id": raw.headers.get("x-looplab-request-id"),
    }
