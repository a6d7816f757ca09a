"""The computer-use agent's system prompt and tools: the browser tools and finish."""

from __future__ import annotations

from looplab.tools.browser import SNAPSHOT_LIMIT_CHARS, browser_tools
from looplab.tools.registry import ToolBox
from looplab.tools.shell import finish_tool

__all__ = ["SYSTEM_PROMPT", "computer_use_toolbox"]

SYSTEM_PROMPT = """\
You operate a web browser to get a task done in a web application. Open pages with goto. \
A snapshot shows the page as an accessibility tree, one element per line with its role, \
name and a [ref=...]; act on elements by passing that ref to click, type and select \
(refs stay valid while you are on the same page; after a page change use the refs of the \
new snapshot). Actions that change the page return its new snapshot. Read what the page \
says after each submission: forms may reject input. When the task is done, call finish \
with a one-sentence summary."""


def computer_use_toolbox(
    *,
    snapshot_after_action: bool = True,
    screenshots: bool = False,
    trace_screenshots: bool = False,
    observation: str = "aria",
) -> ToolBox:
    """goto, snapshot, click, type, press, select, (screenshot,) finish.

    Args:
        snapshot_after_action: page-changing actions return the new snapshot.
        screenshots: offer the screenshot tool (for multimodal models).
        trace_screenshots: keep a JPEG of the page after each page-changing action for the
            trace (never sent to the model).
        observation: what actions show the model (`looplab.tools.observation.OBSERVERS`).
    """
    tools = browser_tools(
        snapshot_after_action=snapshot_after_action,
        screenshots=screenshots,
        trace_screenshots=trace_screenshots,
        observation=observation,
    )
    return ToolBox([*tools, finish_tool()], output_limit=SNAPSHOT_LIMIT_CHARS)
