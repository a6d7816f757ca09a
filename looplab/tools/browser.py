"""The computer-use tools: goto, snapshot, click, type, press, select, screenshot (+ finish).

They act on `ToolContext.browser`, a `sandboxes.browser.BrowserSession` (or anything with
a Playwright `page`). The page is described to the model by **snapshot**: Playwright's
accessibility-tree snapshot in its `ai` mode, one line per node:

```
Page: Sign up (http://127.0.0.1:8123/signup)
- heading "Create your account" [level=1] [ref=e2]
- textbox "Email" [ref=e5]
- button "Next" [ref=e9]
```

Refs are stable: an element keeps its ref across snapshots for as long as it stays in the
same document (a new page numbers afresh), and `click`/`type`/`select` take them back
(the `aria-ref=` locator). A ref that is not on the page is an immediate `ok=False` result
("take a new snapshot"), not a wait for the action timeout.

Actions that may change the page (goto, click, press, select, type with submit) wait for
any navigation they started to load and return the new snapshot (`snapshot_after_action`,
default on; off, they return one line and the model calls `snapshot` itself). Plain `type`
returns one line: typing rarely changes the page's structure, and repeating the whole
tree per field would multiply prompt tokens. Playwright errors (not editable, timeouts)
are `ok=False` results with the error's first line.

What an action returns is an observation of the page (`observation.py`): the aria
snapshot above by default, or a screenshot with the element list (`screenshot`), with
numbered marks (`marks`), or a pruned DOM (`dom`), chosen per agent (`observation`). An
image observation reaches the model as `ToolResult.image`. Each result carries its time
split (`ToolResult.phases`): `page_wait` (waiting for the page's load), `observe` (the
capture) and `act` (the rest: finding the element, the action itself).

With `trace_screenshots`, every action but `snapshot`/`screenshot` also captures a JPEG of
the viewport (quality `TRACE_JPEG_QUALITY`) into `ToolResult.trace_image`: the trace keeps
it for the report's transcript; the model never sees it. The capture is inside the tool's
timed span (~35 ms per action on a 1280x800 page), which is why it is opt-in.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from looplab.tools.base import FunctionTool, ToolContext, ToolResult, load_schemas
from looplab.tools.observation import PageObservation, observe_page
from looplab.tools.page_settle import watch

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

__all__ = [
    "SNAPSHOT_LIMIT_CHARS",
    "BrowserLike",
    "browser_tools",
    "page_snapshot",
    "trace_screenshot",
]

_SCHEMAS = load_schemas(__file__)
SNAPSHOT_LIMIT_CHARS = 100_000
"""Longest browser tool result before it is cut (head and tail kept): about 30k o200k
tokens of snapshot (~3.2 characters per token on tasks/web pages), above the 20-25k tokens
Playwright MCP's snapshots of real pages reach; the general tool limit (12k characters)
would cut a real-sized page to its menus."""
TRACE_JPEG_QUALITY = 50
"""JPEG quality of trace screenshots: 23-117 KB for a 1280x800 page (`looplab bench
browser`), text still legible."""
_NOT_CAPTURED = frozenset({"snapshot", "screenshot"})
"""Actions that never change the page, so a trace screenshot would repeat the last one."""


class BrowserLike(Protocol):
    """What the browser tools need from `ToolContext.browser`."""

    @property
    def page(self) -> Page:
        """The Playwright page the tools act on."""
        ...


async def trace_screenshot(page: Page) -> bytes:
    """The viewport as the JPEG a trace keeps (`trace_screenshots`)."""
    return await page.screenshot(type="jpeg", quality=TRACE_JPEG_QUALITY)


async def page_snapshot(page: Page) -> str:
    """`Page: <title> (<url>)` and the page's accessibility tree with refs."""
    return (await observe_page(page, "aria")).text


@dataclass(frozen=True)
class _Seen:
    """An action's outcome line and the observation that follows it."""

    done: str
    observation: PageObservation
    ok: bool = True


Outcome = ToolResult | str | _Seen
Action = Callable[[dict[str, Any], "Page"], Awaitable[Outcome]]


class _PageActions:
    """The page actions, each returning its outcome and the page's new observation."""

    def __init__(self, observation: str, snapshot_after_action: bool) -> None:
        self.observation = observation
        self.snapshot_after_action = snapshot_after_action

    async def after(self, page: Page, done: str) -> Outcome:
        if not self.snapshot_after_action:
            return ToolResult(f"{done} Page: {await page.title()} ({page.url})")
        return _Seen(done, await observe_page(page, self.observation))

    async def goto(self, arguments: dict[str, Any], page: Page) -> Outcome:
        url = str(arguments["url"])
        if not url.startswith(("http://", "https://")):
            return ToolResult(f"not an http(s) URL: {url}", ok=False)
        response = await page.goto(url, wait_until="commit")
        status = response.status if response is not None else 0
        return _Seen(f"HTTP {status}", await observe_page(page, self.observation), ok=status < 400)

    async def snapshot(self, arguments: dict[str, Any], page: Page) -> Outcome:
        return _Seen("", await observe_page(page, self.observation))

    async def click(self, arguments: dict[str, Any], page: Page) -> Outcome:
        target = await _element(page, arguments["ref"])
        if isinstance(target, ToolResult):
            return target
        await target.click()
        return await self.after(page, f"Clicked {arguments['ref']}.")

    async def type_text(self, arguments: dict[str, Any], page: Page) -> Outcome:
        target = await _element(page, arguments["ref"])
        if isinstance(target, ToolResult):
            return target
        text = str(arguments["text"])
        await target.fill(text)
        done = f"Typed {len(text)} characters into {arguments['ref']}."
        if arguments.get("submit"):
            await target.press("Enter")
            return await self.after(page, done + " Pressed Enter.")
        return done

    async def press(self, arguments: dict[str, Any], page: Page) -> Outcome:
        key = str(arguments["key"])
        if arguments.get("ref"):
            target = await _element(page, arguments["ref"])
            if isinstance(target, ToolResult):
                return target
            await target.press(key)
        else:
            await page.keyboard.press(key)
        return await self.after(page, f"Pressed {key}.")

    async def select(self, arguments: dict[str, Any], page: Page) -> Outcome:
        target = await _element(page, arguments["ref"])
        if isinstance(target, ToolResult):
            return target
        chosen = await target.select_option(str(arguments["value"]))
        return await self.after(page, f"Selected {', '.join(chosen)} in {arguments['ref']}.")


def browser_tools(
    *,
    snapshot_after_action: bool = True,
    screenshots: bool = False,
    trace_screenshots: bool = False,
    observation: str = "aria",
) -> list[FunctionTool]:
    """The computer-use tools (finish is added by the agent).

    Args:
        snapshot_after_action: actions that may change the page return its new observation.
        screenshots: include the `screenshot` tool (for multimodal models).
        trace_screenshots: page actions keep a JPEG of the page for the trace.
        observation: what snapshot and page-changing actions return (`observation.OBSERVERS`).
    """
    page = _PageActions(observation, snapshot_after_action)
    actions: dict[str, Action] = {
        "goto": page.goto,
        "snapshot": page.snapshot,
        "click": page.click,
        "type": page.type_text,
        "press": page.press,
        "select": page.select,
    }
    if screenshots:
        actions["screenshot"] = _screenshot
    return [
        FunctionTool(
            _SCHEMAS[name], _on_page(action, trace_screenshots and name not in _NOT_CAPTURED)
        )
        for name, action in actions.items()
    ]


async def _screenshot(arguments: dict[str, Any], page: Page) -> Outcome:
    image = await page.screenshot(type="png")
    return ToolResult(f"Screenshot of {page.url} ({len(image)} bytes PNG).", image=image)


def _result(outcome: Outcome, seconds: float) -> ToolResult:
    """The tool result of an action's outcome, with its time split (`phases`)."""
    if isinstance(outcome, str):
        return ToolResult(outcome, phases={"act": seconds})
    if isinstance(outcome, ToolResult):
        return replace(outcome, phases={"act": seconds})
    seen = outcome.observation
    text = f"{outcome.done}\n{seen.text}" if outcome.done else seen.text
    phases = dict(seen.phases)
    phases["act"] = max(0.0, seconds - sum(phases.values()))
    return ToolResult(
        text, ok=outcome.ok, image=seen.image, phases=phases, observation=seen.summary()
    )


def _on_page(
    action: Action, capture: bool = False
) -> Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]:
    """Adapt a page action to the tool signature; Playwright errors become results.

    Args:
        action: the page action.
        capture: attach a JPEG of the page after the action as `trace_image`.
    """

    async def run(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        from playwright.async_api import Error as PlaywrightError

        if context.browser is None:
            return ToolResult("this agent has no browser session", ok=False)
        browser: BrowserLike = context.browser
        watch(browser.page)
        started = time.perf_counter()
        try:
            outcome = await action(arguments, browser.page)
        except PlaywrightError as exc:
            first = (exc.message or str(exc)).strip().splitlines()[0]
            return ToolResult(f"browser error: {first}", ok=False)
        result = _result(outcome, time.perf_counter() - started)
        if capture:
            # a page that cannot be captured (closed, crashed) keeps no image
            with contextlib.suppress(PlaywrightError):
                result = replace(result, trace_image=await trace_screenshot(browser.page))
        return result

    return run


async def _element(page: Page, ref: object) -> Locator | ToolResult:
    """The element a snapshot ref names, or an `ok=False` result when it is not there."""
    locator = page.locator(f"aria-ref={ref}")
    if await locator.count() == 0:
        return ToolResult(f"no element with ref {ref} on this page; take a new snapshot", ok=False)
    return locator
