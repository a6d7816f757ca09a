"""Live tier: the proxy in front of a real API (needs LOOPLAB_LIVE_API_KEY; never in CI).

Set LOOPLAB_LIVE_API_KEY (and optionally LOOPLAB_LIVE_BASE_URL, LOOPLAB_LIVE_MODEL).
"""

from __future__ import annotations

import os
from pathlib import Path

import openai
import pytest

from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.proxy.app import ProxyServer
from looplab.latency.presets import resolve_profile

pytestmark = pytest.mark.live

BASE_URL = os.environ.get("LOOPLAB_LIVE_BASE_URL", "https://api.openai.com/v1")
MODEL = os.environ.get("LOOPLAB_LIVE_MODEL", "gpt-4.1-mini")
QUESTION = [{"role": "user", "content": "Count from 1 to 60, one number per line."}]


def _holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


async def test_real_api_paced_to_a_slow_profile(tmp_path: Path) -> None:
    """A real model streamed through the proxy at 40 tok/s: the profile's rate, usage intact."""
    key = os.environ["LOOPLAB_LIVE_API_KEY"]
    profile = resolve_profile("slow-80", ["decode_tps=40"])
    with ProxyServer(profile, upstream=BASE_URL, api_key=key, record=tmp_path / "rec") as proxy:
        endpoint = EndpointConfig(base_url=proxy.base_url, model=MODEL)
        async with InstrumentedClient(endpoint) as client:
            response = await client.complete(QUESTION, max_completion_tokens=200)
        call = proxy.proxy.history.calls[-1]
    assert response.completion_tokens and response.completion_tokens > 20
    assert call.upstream_slower == [] or "ttft" in call.upstream_slower
    assert response.decode_rate_tps == pytest.approx(40, rel=0.05)
    assert _holding(tmp_path, key) == []


async def test_real_api_replays_without_it(tmp_path: Path) -> None:
    """A live exchange recorded once replays at 750 tok/s with no upstream."""
    key = os.environ["LOOPLAB_LIVE_API_KEY"]
    store = tmp_path / "rec"
    with ProxyServer(resolve_profile("fast-750"), upstream=BASE_URL, api_key=key,
                     record=store) as proxy:  # fmt: skip
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="unused")
        first = await client.chat.completions.create(model=MODEL, messages=QUESTION)  # type: ignore[arg-type]
        await client.close()
    with ProxyServer(resolve_profile("fast-750"), replay=store) as replayer:
        client = openai.AsyncOpenAI(base_url=replayer.base_url, api_key="unused")
        again = await client.chat.completions.create(model=MODEL, messages=QUESTION)  # type: ignore[arg-type]
        await client.close()
    assert again.choices[0].message.content == first.choices[0].message.content
