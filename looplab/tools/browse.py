"""`browse`: open a URL and return the page's readable text.

Two ways to open the page, chosen per agent (`browse_via`):

- `sandbox` (default): a small Python program run *inside* the sandbox fetches the URL and
  turns the HTML into text. It reaches servers that run inside the sandbox even when the
  sandbox has no network at all (its own loopback), needs no browser, and its latency is
  one sandbox exec plus the fetch (~10-30 ms here).
- `browser`: the agent's Playwright `BrowserSession` renders the page in Chromium and
  reads `innerText` (JavaScript runs). The browser is on the host, so the server must be
  published on the host's loopback (a local sandbox with network `bridge`, or a docker
  sandbox with `publish_ports`); it adds a page load (~50-200 ms).
"""

from __future__ import annotations

import shlex
from typing import Any, Literal

from looplab.tools.base import FunctionTool, ToolContext, ToolResult, load_schemas

__all__ = ["HTML_TO_TEXT", "browse_tools"]

_SCHEMAS = load_schemas(__file__)
FETCH_TIMEOUT_S = 20.0
"""Longest one page fetch may take."""

HTML_TO_TEXT = r"""
import sys, urllib.request, urllib.error
from html.parser import HTMLParser
BLOCK = set("p div li tr h1 h2 h3 h4 h5 h6 pre section table ul ol br dt dd".split())
BLOCK |= {"article", "header", "footer", "form", "label"}
class Text(HTMLParser):
    def __init__(self):
        super().__init__(); self.out = []; self.skip = 0; self.href = None; self.pre = 0
    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "head"): self.skip += 1
        if tag == "pre": self.pre += 1
        if tag in BLOCK: self.out.append("\n")
        if tag in ("h1","h2","h3","h4"): self.out.append("#" * int(tag[1]) + " ")
        if tag == "li": self.out.append("- ")
        if tag == "a": self.href = dict(attrs).get("href"); self.out.append("[")
    def handle_endtag(self, tag):
        if tag in ("script", "style", "head"): self.skip -= 1
        if tag == "pre": self.pre -= 1
        if tag == "a": self.out.append("](%s)" % (self.href or "")); self.href = None
        if tag in BLOCK: self.out.append("\n")
    def handle_data(self, data):
        if self.skip: return
        tail = " " if data[-1:].isspace() else ""
        self.out.append(data if self.pre else " ".join(data.split()) + tail)
url = sys.argv[1]
try:
    with urllib.request.urlopen(url, timeout=float(sys.argv[2])) as response:
        body = response.read().decode("utf-8", "replace")
        kind = response.headers.get_content_type()
except urllib.error.HTTPError as exc:
    print("HTTP %d for %s" % (exc.code, url)); sys.exit(3)
except Exception as exc:
    print("cannot open %s: %s" % (url, exc)); sys.exit(2)
if kind != "text/html": print(body); sys.exit(0)
parser = Text(); parser.feed(body)
lines = [line.rstrip() for line in "".join(parser.out).splitlines()]
text = "\n".join(lines)
while "\n\n\n" in text: text = text.replace("\n\n\n", "\n\n")
print(text.strip())
"""
"""The in-sandbox fetcher: `python3 -c HTML_TO_TEXT URL TIMEOUT` prints the page as text."""


def browse_tools(via: Literal["sandbox", "browser"] = "sandbox") -> list[FunctionTool]:
    """The browse tool, opening pages inside the sandbox or in the agent's browser."""
    return [FunctionTool(_SCHEMAS["browse"], _browse_in_browser if via == "browser" else _browse)]


async def _browse(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    url = str(arguments["url"])
    if not url.startswith(("http://", "https://")):
        return ToolResult(f"not an http(s) URL: {url}", ok=False)
    command = shlex.join(["python3", "-c", HTML_TO_TEXT, url, str(FETCH_TIMEOUT_S)])
    result = await context.sandbox.exec(command, timeout_s=FETCH_TIMEOUT_S + 5)
    text = (result.stdout + result.stderr).strip()
    return ToolResult(text or "(empty page)", ok=result.ok)


async def _browse_in_browser(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    if context.browser is None:
        return ToolResult("this agent has no browser session", ok=False)
    text: str = await context.browser.page_text(str(arguments["url"]))
    return ToolResult(text)
