"""The tool contract: what an agent's tools are and what they return.

A tool is a named async function with a JSON Schema (kept in a `.json` file next to the
module that implements it, in the OpenAI `function` shape). Tools never raise for things
that go wrong in the task (a missing file, failing tests, a non-zero exit): those are
results with `ok=False`, so the model sees them and may recover. `ToolBox` (registry.py)
turns anything a tool still raises into such a result too.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from looplab.sandbox_contract import Sandbox

__all__ = [
    "OUTPUT_LIMIT_CHARS",
    "FunctionTool",
    "Tool",
    "ToolContext",
    "ToolResult",
    "clip",
    "load_schemas",
]

OUTPUT_LIMIT_CHARS = 12_000
"""Tool output kept for the model; the rest is cut with a visible marker."""


@dataclass(frozen=True)
class ToolResult:
    """What one tool call produced, as the model will see it.

    Attributes:
        content: text for the tool message.
        ok: False when the tool reports a failure (error, failing tests, non-zero exit).
        finish: True for the `finish` tool: the agent ends after this step.
        image: optional PNG for multimodal models (screenshots).
        trace_image: optional JPEG of the page after a browser action, kept for the trace's
            transcript only (`AgentConfig.trace_screenshots`); never sent to the model.
        synthetic: True when the call did stand-in work for a recorded or drawn tool call
            (trace-driven runs, `tools/synthetic.py`); traces mark such calls.
        phases: seconds of the call by phase, for tools that split their time (browser
            actions: `act`, `page_wait`, `observe`); None: not split.
        observation: what a browser action showed the model (`Observation.summary()`:
            kind, text characters, image bytes and size); None for other tools.
    """

    content: str
    ok: bool = True
    finish: bool = False
    image: bytes | None = None
    synthetic: bool = False
    trace_image: bytes | None = None
    phases: dict[str, float] | None = None
    observation: dict[str, Any] | None = None


@dataclass
class ToolContext:
    """What tools act on.

    Attributes:
        sandbox: the task's sandbox (files, shell, tests, in-sandbox servers).
        services: base URLs of servers running inside the sandbox, by name (`docs`, `app`),
            as the sandbox's own commands reach them.
        browser: a `sandboxes.browser.BrowserSession` (anything with a Playwright `page`,
            see `tools.browser.BrowserLike`) for the browser tools, when the agent has one.
    """

    sandbox: Sandbox
    services: dict[str, str] = field(default_factory=dict)
    browser: Any = None


class Tool(Protocol):
    """One tool an agent can call."""

    @property
    def name(self) -> str:
        """Function name the model calls."""
        ...

    @property
    def schema(self) -> dict[str, Any]:
        """`{"name", "description", "parameters"}` (JSON Schema of the arguments)."""
        ...

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Run with schema-valid `arguments`.

        Raises:
            Exception: anything; the ToolBox turns it into an error result.
        """
        ...


ToolFunction = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True)
class FunctionTool:
    """A `Tool` made of a schema and an async function."""

    schema: dict[str, Any]
    function: ToolFunction

    @property
    def name(self) -> str:
        """The schema's function name."""
        return str(self.schema["name"])

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Call the function."""
        return await self.function(arguments, context)


def load_schemas(module_file: str) -> dict[str, dict[str, Any]]:
    """Read the `<module>.json` next to a tool module: a list of function schemas.

    Args:
        module_file: the module's `__file__`.

    Returns:
        Schemas by function name.
    """
    path = Path(module_file).with_suffix(".json")
    schemas: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return {str(schema["name"]): schema for schema in schemas}


def clip(text: str, limit: int = OUTPUT_LIMIT_CHARS) -> str:
    """Cut `text` to `limit` characters, keeping head and tail, with a visible marker."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    dropped = len(text) - head - tail
    return f"{text[:head]}\n[... {dropped} characters cut ...]\n{text[-tail:]}"
