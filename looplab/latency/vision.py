"""Vision token rules: what one image costs in prompt tokens, per model family.

A profile names its rule (`LatencyProfile.vision_tokens`); the simulator's and the proxy's
prompt counts (`Tokenizer.count_messages`) add each `image_url` part's tokens by it, so
prefill, the prefix cache and context growth see screenshots as the model would. The
rules, as their vendors document them (docs/design.md "Vision tokens" has the sources):

| rule | formula | 1280x800 |
|---|---|---|
| `gpt-4o` (default) | fit 2048x2048, shortest side to 768; 85 + 170 per 512-px tile | 1,105 |
| `gpt-4o-low` | `detail: low`: 85 flat | 85 |
| `gpt-patches` | 32-px patches, scaled down to at most 1,536 | 1,000 |
| `claude` | fit in 1568 px long edge and 1.15 MP; one token per 28-px patch | 1,334 |
| `qwen2.5-vl` | each side rounded to a multiple of 28; one token per 28-px patch | 1,334 |
| `gemini-3-low` .. `-ultra` | `media_resolution`: 280 / 560 / 1,120 / 2,240 flat | 280-2,240 |

An image part's size is read from its data URL's header (PNG, JPEG, GIF, WebP); an image
whose size cannot be read (a remote URL, another format) counts as `DEFAULT_SIZE`. An
`image_url.detail` of `low` makes the `gpt-4o` rule charge its low-detail 85.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import struct
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "DEFAULT_SIZE",
    "DEFAULT_VISION_RULE",
    "VISION_RULES",
    "image_size",
    "image_tokens",
    "message_image_tokens",
]

DEFAULT_VISION_RULE = "gpt-4o"
"""The rule a profile uses unless it names another (the lab speaks OpenAI's chat format)."""
DEFAULT_SIZE = (1280, 800)
"""Size assumed for an image whose header cannot be read (the default viewport)."""
_HEADER_CHARS = 64 * 1024
"""Base64 characters decoded to find a size (a JPEG's frame header is near its start)."""


def _fit(
    width: int, height: int, long_edge: float, pixels: float | None = None
) -> tuple[float, float]:
    """(w, h) scaled down (never up) to fit a long edge and optionally a pixel count."""
    scale = min(1.0, long_edge / max(width, height))
    if pixels is not None:
        scale = min(scale, math.sqrt(pixels / (width * height)))
    return width * scale, height * scale


def _gpt_4o(width: int, height: int, detail: str) -> int:
    if detail == "low":
        return 85
    w, h = _fit(width, height, 2048)
    shortest = min(w, h)
    if shortest > 768:
        w, h = w * 768 / shortest, h * 768 / shortest
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def _gpt_patches(width: int, height: int, detail: str) -> int:
    patches = math.ceil(width / 32) * math.ceil(height / 32)
    if patches <= 1536:
        return patches
    shrink = math.sqrt(1536 * 32 * 32 / (width * height))
    # then shrink so a whole number of patches spans the narrower fit (OpenAI's second step)
    shrink *= min(
        math.floor(width * shrink / 32) / (width * shrink / 32),
        math.floor(height * shrink / 32) / (height * shrink / 32),
    )
    return math.ceil(width * shrink / 32) * math.ceil(height * shrink / 32)


def _claude(width: int, height: int, detail: str) -> int:
    w, h = _fit(width, height, 1568, 1_150_000)
    return math.ceil(w / 28) * math.ceil(h / 28)


def _qwen(width: int, height: int, detail: str) -> int:
    w = max(28, round(width / 28) * 28)
    h = max(28, round(height / 28) * 28)
    return (w // 28) * (h // 28)


def _flat(tokens: int) -> Callable[[int, int, str], int]:
    return lambda width, height, detail: tokens


VISION_RULES: dict[str, Callable[[int, int, str], int]] = {
    "gpt-4o": _gpt_4o,
    "gpt-4o-low": _flat(85),
    "gpt-patches": _gpt_patches,
    "claude": _claude,
    "qwen2.5-vl": _qwen,
    "gemini-3-low": _flat(280),
    "gemini-3-medium": _flat(560),
    "gemini-3-high": _flat(1120),
    "gemini-3-ultra": _flat(2240),
}
"""Rule name -> tokens of one image (width, height, detail); a new rule joins by one line."""


def image_tokens(rule: str, width: int, height: int, detail: str = "auto") -> int:
    """Prompt tokens of one `width` x `height` image under `rule`.

    Raises:
        KeyError: unknown rule (profiles validate the name first).
    """
    return VISION_RULES[rule](max(1, width), max(1, height), detail)


@functools.lru_cache(maxsize=256)
def image_size(url: str) -> tuple[int, int] | None:
    """(width, height) of a `data:image/...;base64,` URL's image, or None when unknown."""
    if not url.startswith("data:") or ";base64," not in url:
        return None
    encoded = url.split(";base64,", 1)[1][:_HEADER_CHARS]
    try:
        head = base64.b64decode(encoded[: len(encoded) - len(encoded) % 4])
    except (binascii.Error, ValueError):
        return None
    return _png(head) or _gif(head) or _webp(head) or _jpeg(head)


def _png(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return None
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def _gif(data: bytes) -> tuple[int, int] | None:
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 10:
        return None
    width, height = struct.unpack("<HH", data[6:10])
    return int(width), int(height)


def _webp(data: bytes) -> tuple[int, int] | None:
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP" or len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8X":
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    if data[:2] != b"\xff\xd8":
        return None
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return int(width), int(height)
        at += 2 + length
    return None


def message_image_tokens(message: Mapping[str, Any], rule: str) -> int:
    """Tokens of every `image_url` part of one chat message under `rule`."""
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    total = 0
    for part in content:
        if not isinstance(part, Mapping) or part.get("type") != "image_url":
            continue
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        detail = str(image.get("detail") or "auto") if isinstance(image, Mapping) else "auto"
        size = image_size(url) if isinstance(url, str) else None
        width, height = size or DEFAULT_SIZE
        total += image_tokens(rule, width, height, detail)
    return total
