"""What the computer-use agent sees of the page: one `PageObservation` per page-changing action.

The kind is chosen per agent (`AgentConfig.observation`), a registry (`OBSERVERS`):

- `aria` (default): Playwright's accessibility snapshot in `ai` mode, one line per node
  with its role, name and `[ref=...]` (Playwright MCP's observation). Text only.
- `screenshot`: a PNG of the viewport for the model, plus the page's interactive elements
  as aria lines (role, name, ref): the screenshot shows the page, the short list gives the
  refs the tools act on (a model cannot read a ref off pixels). browser-use's shape.
- `marks`: the screenshot with a numbered box drawn over each interactive element
  (set-of-marks), and the list maps each number to its ref (`[mark=N]`).
- `dom`: the page's HTML pruned to structure and text (no scripts, styles, SVG, most
  attributes), plus the same element list.

Every kind waits for the page's `load` and for the fetch/XHR requests its scripts started
(`page_settle.settle`) first (the `page_wait` phase) and times its
capture (`observe`); the tool's own action is the rest of its time (`act`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from looplab.tools.page_settle import settle

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = [
    "IMAGE_OBSERVATIONS",
    "INTERACTIVE_ROLES",
    "OBSERVERS",
    "SNAPSHOT_TIMEOUT_MS",
    "PageObservation",
    "interactive_lines",
    "observe_page",
]

SNAPSHOT_TIMEOUT_MS = 10_000
"""Longest one accessibility snapshot may take."""
INTERACTIVE_ROLES = frozenset(
    [
        "button",
        "link",
        "textbox",
        "searchbox",
        "combobox",
        "checkbox",
        "radio",
        "spinbutton",
        "slider",
        "switch",
        "tab",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "listbox",
        "treeitem",
    ]
)
"""Roles listed (with their refs) beside a screenshot or a DOM."""
IMAGE_OBSERVATIONS = frozenset({"screenshot", "marks"})
"""Kinds whose observation carries an image for the model."""
_ROLE_LINE = re.compile(r'^\s*- ([a-z]+)(?: "[^"]*")?.*\[ref=[A-Za-z0-9_-]+\]')
_ELEMENTS_HEADER = "Interactive elements (pass a ref to click, type, select):"


@dataclass(frozen=True)
class PageObservation:
    """One observation of the page.

    Attributes:
        kind: `aria`, `screenshot`, `marks` or `dom`.
        text: the text part (the tool result's body).
        image: PNG of the viewport for the model (image kinds), else None.
        width: the image's width in pixels (0 without one).
        height: the image's height in pixels (0 without one).
        phases: seconds spent waiting for the page (`page_wait`) and capturing (`observe`).
    """

    kind: str
    text: str
    image: bytes | None = None
    width: int = 0
    height: int = 0
    phases: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict[str, int | str]:
        """What the trace keeps of it: kind, text characters, image bytes and size."""
        return {
            "kind": self.kind,
            "text_chars": len(self.text),
            "image_bytes": len(self.image or b""),
            "width": self.width,
            "height": self.height,
        }


Observer = Callable[["Page", str], Awaitable[PageObservation]]


def interactive_lines(tree: str) -> list[str]:
    """The aria snapshot's lines of interactive elements, unindented, children dropped."""
    out = []
    for line in tree.splitlines():
        match = _ROLE_LINE.match(line)
        if match and match.group(1) in INTERACTIVE_ROLES:
            out.append(line.strip().removesuffix(":"))
    return out


async def _aria_tree(page: Page) -> str:
    return await page.aria_snapshot(mode="ai", timeout=SNAPSHOT_TIMEOUT_MS)


async def _aria(page: Page, head: str) -> PageObservation:
    return PageObservation("aria", f"{head}\n{await _aria_tree(page)}")


async def _screenshot(page: Page, head: str) -> PageObservation:
    elements = interactive_lines(await _aria_tree(page))
    image = await page.screenshot(type="png")
    width, height = _viewport(page)
    text = "\n".join([head, "(screenshot attached)", _ELEMENTS_HEADER, *elements])
    return PageObservation("screenshot", text, image, width, height)


async def _marks(page: Page, head: str) -> PageObservation:
    from looplab.tools.marks import draw_marks

    elements = interactive_lines(await _aria_tree(page))
    image, numbered = await draw_marks(page, elements)
    width, height = _viewport(page)
    lines = [f"{line} [mark={number}]" for number, line in numbered]
    text = "\n".join([head, "(screenshot with numbered marks attached)", _ELEMENTS_HEADER, *lines])
    return PageObservation("marks", text, image, width, height)


_PRUNE_DOM = """() => {
  const keep = new Set(["id", "name", "type", "href", "value", "placeholder", "for",
    "aria-label", "role", "checked", "selected", "disabled", "alt", "title", "action"]);
  const root = document.body ? document.body.cloneNode(true) : document.createElement("body");
  root.querySelectorAll("script, style, svg, noscript, template, link, meta").forEach(
    (node) => node.remove());
  root.querySelectorAll("*").forEach((node) => {
    for (const attr of Array.from(node.attributes)) {
      if (!keep.has(attr.name)) node.removeAttribute(attr.name);
    }
  });
  return root.outerHTML.replace(/>\\s+</g, "><").replace(/\\s{2,}/g, " ");
}"""


async def _dom(page: Page, head: str) -> PageObservation:
    elements = interactive_lines(await _aria_tree(page))
    html = str(await page.evaluate(_PRUNE_DOM))
    return PageObservation("dom", "\n".join([head, html, _ELEMENTS_HEADER, *elements]))


def _viewport(page: Page) -> tuple[int, int]:
    size = page.viewport_size or {"width": 0, "height": 0}
    return int(size["width"]), int(size["height"])


OBSERVERS: dict[str, Observer] = {
    "aria": _aria,
    "screenshot": _screenshot,
    "marks": _marks,
    "dom": _dom,
}
"""Observation kind -> how it is captured; a new kind joins by one line."""


async def observe_page(page: Page, kind: str = "aria") -> PageObservation:
    """Wait for the page's load, then capture `kind` (see the module docstring).

    Raises:
        KeyError: unknown kind (agent configs validate it first).
        playwright.async_api.Error: the page cannot be read (closed, crashed).
    """
    observer = OBSERVERS[kind]
    waited = time.perf_counter()
    await page.wait_for_load_state("load")
    await settle(page)  # and for what its scripts fetch after load (client-side rendering)
    captured = time.perf_counter()
    head = f"Page: {await page.title() or '(untitled)'} ({page.url})"
    observation = await observer(page, head)
    ended = time.perf_counter()
    phases = {"page_wait": captured - waited, "observe": ended - captured}
    return PageObservation(
        observation.kind,
        observation.text,
        observation.image,
        observation.width,
        observation.height,
        phases,
    )
