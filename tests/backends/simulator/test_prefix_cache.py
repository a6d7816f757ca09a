"""Prefix-cache accounting across a growing conversation, and its TTL."""

from __future__ import annotations

import json

import httpx2

from looplab.backends.simulator.model import Simulator
from looplab.backends.simulator.prefix_cache import PrefixCache, prefix_hashes
from looplab.clock import VirtualClock
from looplab.latency.presets import resolve_profile


async def test_growing_conversation_caches_previous_prompt() -> None:
    """Each step's cached tokens equal the previous step's prompt minus reply priming."""
    profile = resolve_profile("fast-750", ["output_tokens=30", "ttft_s=0"])
    simulator = Simulator(profile, clock=VirtualClock())
    messages = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "Go."}]
    previous_prompt = None
    for step in range(4):
        body = json.dumps({"model": "looplab-lorem", "messages": messages}).encode()
        prepared = simulator.prepare(body)
        reply = await simulator.complete(prepared)
        if previous_prompt is None:
            assert prepared.cached_tokens == 0
        else:
            assert prepared.cached_tokens == previous_prompt - 3
            assert prepared.prompt_tokens > previous_prompt
        previous_prompt = prepared.prompt_tokens
        messages += [reply["choices"][0]["message"], {"role": "user", "content": f"step {step}"}]


def test_ttl_expiry_block_rounding_and_minimum() -> None:
    """Prefixes expire after the TTL; counts round down to blocks; short prefixes don't count."""
    hashes = prefix_hashes([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    cache = PrefixCache(ttl_s=10, block_tokens=64, min_tokens=100)
    assert cache.lookup_and_store(hashes, [90, 300], now=0.0) == 0
    assert cache.lookup_and_store(hashes, [90, 300], now=5.0) == 256
    assert cache.lookup_and_store(hashes[:1], [90], now=6.0) == 0  # under min_tokens
    assert cache.lookup_and_store(hashes, [90, 300], now=100.0) == 0  # expired


def test_cached_tokens_reported_in_usage(fast_server_url: str) -> None:
    """The usage object reports cached prompt tokens on the second identical prefix."""
    body = {
        "model": "looplab-lorem",
        "messages": [{"role": "user", "content": "same prefix " * 20}],
    }
    first = httpx2.post(fast_server_url + "/chat/completions", json=body).json()
    second = httpx2.post(fast_server_url + "/chat/completions", json=body).json()
    assert first["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached == second["usage"]["prompt_tokens"] - 3
