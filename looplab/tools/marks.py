"""Set-of-marks: numbered boxes drawn over a page's interactive elements for a screenshot.

Each element line of the aria snapshot (`- button "Next" [ref=e9]`) is located by its ref
(`aria-ref=` locator); those with a box inside the viewport get a number, drawn as an
outlined box with a label by a fixed-position overlay that is added to the page for the
screenshot and removed right after (the page's own layout is untouched).
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["draw_marks"]

_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")
_OVERLAY_ID = "__looplab_marks__"
_DRAW = """([id, boxes]) => {
  const layer = document.createElement("div");
  layer.id = id;
  layer.style.cssText = "position:fixed;inset:0;pointer-events:none;z-index:2147483647";
  for (const [n, x, y, w, h] of boxes) {
    const box = document.createElement("div");
    box.style.cssText = `position:fixed;left:${x}px;top:${y}px;width:${w}px;height:${h}px;` +
      "outline:2px solid #e4002b;box-sizing:border-box";
    const tag = document.createElement("span");
    tag.textContent = String(n);
    tag.style.cssText = `position:absolute;left:-2px;top:${y < 16 ? 0 : -16}px;` +
      "background:#e4002b;color:#fff;font:bold 11px/14px sans-serif;padding:0 3px";
    box.appendChild(tag);
    layer.appendChild(box);
  }
  document.documentElement.appendChild(layer);
}"""
_REMOVE = "(id) => document.getElementById(id)?.remove()"


async def draw_marks(page: Page, elements: list[str]) -> tuple[bytes, list[tuple[int, str]]]:
    """A PNG of the viewport with numbered boxes over the visible `elements`.

    Args:
        page: the page.
        elements: aria lines holding a `[ref=...]` (`observation.interactive_lines`).

    Returns:
        The PNG and the numbered elements `(number, line)`, in the order given.
    """
    size = page.viewport_size or {"width": 0, "height": 0}
    boxes: list[list[Any]] = []
    numbered: list[tuple[int, str]] = []
    refs = [(line, found.group(1)) for line in elements if (found := _REF.search(line))]
    # one round trip per element, pipelined: sequential awaits would cost ~25 ms each
    found_boxes = await asyncio.gather(
        *(page.locator(f"aria-ref={ref}").bounding_box() for _, ref in refs)
    )
    for (line, _), box in zip(refs, found_boxes, strict=True):
        if box is None or box["width"] <= 0 or box["height"] <= 0:
            continue
        inside = box["y"] < size["height"] and box["y"] + box["height"] > 0
        if not inside or box["x"] >= size["width"]:
            continue
        number = len(numbered) + 1
        numbered.append((number, line))
        boxes.append([number, box["x"], box["y"], box["width"], box["height"]])
    await page.evaluate(_DRAW, [_OVERLAY_ID, boxes])
    try:
        image = await page.screenshot(type="png")
    finally:
        await page.evaluate(_REMOVE, _OVERLAY_ID)
    return image, numbered
