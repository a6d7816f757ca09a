"""Images in the conversation: the page a step's actions left, and how many are kept.

Chat completions carry images in user messages only (never in tool results), so after a
step's tool results the loop adds one user message with the step's last image (the page
after all its actions: earlier ones show states the model has already acted past).
`AgentConfig.images_kept` bounds how many such images stay in the conversation: older
ones become a one-line text part, as browser agents keep only the latest screenshots;
the conversation's prefix changes there, so the prefix cache stops at that message.
"""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["IMAGE_MESSAGE_TEXT", "drop_old_images", "image_message", "image_part"]

IMAGE_MESSAGE_TEXT = "Screenshot of the page after the tool calls above."
"""The text part that heads an image message."""
DROPPED_TEXT = "(an earlier screenshot, no longer shown)"
"""What an image beyond `images_kept` is replaced by."""


def image_part(png: bytes) -> dict[str, Any]:
    """An `image_url` content part holding a PNG as a data URL."""
    data = base64.b64encode(png).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}


def image_message(images: list[bytes]) -> dict[str, Any] | None:
    """The user message carrying the last of a step's images, or None without any."""
    if not images:
        return None
    return {
        "role": "user",
        "content": [{"type": "text", "text": IMAGE_MESSAGE_TEXT}, image_part(images[-1])],
    }


def drop_old_images(messages: list[dict[str, Any]], keep: int | None) -> list[dict[str, Any]]:
    """`messages` with all but the last `keep` image parts replaced by text (None: all)."""
    if keep is None:
        return messages
    seen = 0
    out = list(messages)
    for index in range(len(out) - 1, -1, -1):
        content = out[index].get("content")
        if out[index].get("role") != "user" or not isinstance(content, list):
            continue
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "image_url":
                seen += 1
                if seen > keep:
                    part = {"type": "text", "text": DROPPED_TEXT}
            parts.append(part)
        out[index] = {**out[index], "content": parts}
    return out
