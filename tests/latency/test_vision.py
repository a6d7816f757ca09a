"""Vision token rules, and images counted by them in the simulator's and the proxy's prompts."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import openai
import pytest

from looplab.backends.proxy.app import ProxyServer
from looplab.backends.proxy.schedule import plan_request
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.backends.simulator.prefix_cache import PrefixCache
from looplab.errors import ConfigError
from looplab.latency.presets import resolve_profile
from looplab.latency.timing import TimingModel
from looplab.latency.tokens import default_tokenizer
from looplab.latency.vision import VISION_RULES, image_size, image_tokens

FAST = ["decode_tps=20000", "ttft_s=0", "prefill_tps=null", "output_tokens=5"]


def _png(width: int, height: int) -> bytes:
    """A real (black, grayscale) PNG of this size."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * ((width + 1) * height))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    )


SHOT = "data:image/png;base64," + base64.b64encode(_png(1280, 800)).decode()


def _messages(image: bool) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": "What is on the page?"}]
    if image:
        parts.append({"type": "image_url", "image_url": {"url": SHOT}})
    return [{"role": "user", "content": parts}]


def test_each_rule_prices_a_1280x800_screenshot_as_documented() -> None:
    """1280x800 costs 1,105 (gpt-4o), 1,000 (gpt-patches), 1,334 (claude, qwen), Gemini's flat."""
    wanted = {
        "gpt-4o": 1105,
        "gpt-4o-low": 85,
        "gpt-patches": 1000,
        "claude": 1334,
        "qwen2.5-vl": 1334,
        "gemini-3-low": 280,
        "gemini-3-medium": 560,
        "gemini-3-high": 1120,
        "gemini-3-ultra": 2240,
    }
    assert {rule: image_tokens(rule, 1280, 800) for rule in VISION_RULES} == wanted
    assert image_tokens("gpt-4o", 1280, 800, "low") == 85
    # caps: a 4000x3000 image is scaled down before it is counted
    assert image_tokens("gpt-4o", 4000, 3000) == 85 + 170 * 4  # 1024x768: 2x2 tiles
    assert image_tokens("gpt-4o", 2048, 4096) == 85 + 170 * 6  # OpenAI's worked example
    assert image_tokens("gpt-patches", 4000, 3000) <= 1536
    assert image_tokens("claude", 4000, 3000) <= 1568 * 1568 // 784


def test_image_size_is_read_from_the_data_url() -> None:
    """The size comes from the PNG header inside the data URL; other URLs are unknown."""
    assert image_size(SHOT) == (1280, 800)
    assert image_size("https://example.com/a.png") is None
    assert image_size("data:image/png;base64,!!!") is None


def test_unknown_rule_is_refused_naming_the_choices() -> None:
    """A profile naming no rule fails validation and lists the rules."""
    with pytest.raises(ConfigError, match="gpt-4o"):
        resolve_profile("fast-750", ["vision_tokens=gpt-9"])


@pytest.mark.parametrize(("rule", "tokens"), [("gpt-4o", 1105), ("claude", 1334)])
async def test_simulator_counts_the_image_by_the_profiles_rule(rule: str, tokens: int) -> None:
    """A chat request with a 1280x800 screenshot has exactly the rule's tokens more prompt."""
    profile = resolve_profile("fast-750", [*FAST, f"vision_tokens={rule}", "prefix_cache=false"])
    with SimulatorServer(profile) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k")
        counts = []
        for image in (False, True):
            reply = await client.chat.completions.create(
                model="looplab-lorem",
                messages=_messages(image),  # type: ignore[arg-type]
            )
            assert reply.usage is not None
            counts.append(reply.usage.prompt_tokens)
        answer = await client.responses.create(
            model="looplab-lorem",
            input=[
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "What is on the page?"},
                        {"type": "input_image", "image_url": SHOT, "detail": "auto"},
                    ],
                }
            ],
        )
        await client.close()
    assert counts[1] - counts[0] == tokens
    assert answer.usage is not None and answer.usage.input_tokens == counts[1]


def test_a_new_screenshot_ends_the_cached_prefix() -> None:
    """The proxy's plan counts the image by the rule; the next step's new image is uncached."""
    profile = resolve_profile("fast-750", [*FAST, "vision_tokens=claude"])
    timing = TimingModel.from_profile(profile)
    cache = PrefixCache(300)
    tokenizer = default_tokenizer()
    first = _messages(True)
    plans = []
    for step, messages in enumerate([first, [*first, *_messages(True)]]):
        body = {"model": "m", "messages": messages}
        plans.append(
            plan_request(
                timing, profile, tokenizer, cache, "chat", body, received=float(step), streams=1
            )
        )
    text_only = tokenizer.count_messages(_messages(False))[-1]
    assert plans[0].tokens.cached == 0
    assert plans[0].tokens.prompt - (text_only + 3) == 1334
    assert plans[1].tokens.cached == plans[0].tokens.prompt - 3
    assert plans[1].tokens.prompt - plans[1].tokens.cached == text_only + 1334 + 3


async def test_image_reaches_the_upstream_through_the_proxy() -> None:
    """Proxied, the upstream simulator gets the image and counts it (usage shows its tokens)."""
    upstream_profile = resolve_profile("fast-750", [*FAST, "vision_tokens=gpt-4o"])
    with (
        SimulatorServer(upstream_profile) as upstream,
        ProxyServer(
            resolve_profile("fast-750", [*FAST, "vision_tokens=gpt-4o"]), upstream=upstream.base_url
        ) as proxy,
    ):
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="k")
        counts = []
        for image in (False, True):
            reply = await client.chat.completions.create(
                model="looplab-lorem",
                messages=_messages(image),  # type: ignore[arg-type]
            )
            assert reply.usage is not None
            counts.append(reply.usage.prompt_tokens)
        await client.close()
    assert counts[1] - counts[0] == 1105
