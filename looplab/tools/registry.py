"""`ToolBox`: the tools of one agent, their schemas, and safe dispatch.

Dispatch never raises: an unknown tool, arguments that are not a JSON object or that fail
the tool's schema, and any exception inside the tool all become an error `ToolResult`
whose text starts with `ERROR:` and says what was wrong, so the model can correct itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from jsonschema import Draft202012Validator

from looplab.tools.base import OUTPUT_LIMIT_CHARS, Tool, ToolContext, ToolResult, clip

__all__ = ["ToolBox"]


class ToolBox:
    """A named set of tools.

    Args:
        tools: the tools; names must be unique.
        output_limit: results longer than this many characters are cut (head and tail
            kept, see `tools.base.clip`); None keeps them whole (trace-driven runs, whose
            results carry a recorded prompt growth).

    Raises:
        ValueError: two tools share a name.
    """

    def __init__(
        self, tools: Iterable[Tool], output_limit: int | None = OUTPUT_LIMIT_CHARS
    ) -> None:
        self.output_limit = output_limit
        self._tools: dict[str, Tool] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
            parameters = tool.schema.get("parameters") or {"type": "object"}
            Draft202012Validator.check_schema(parameters)
            self._validators[tool.name] = Draft202012Validator(parameters)

    @property
    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def with_tools(self, tools: Iterable[Tool]) -> ToolBox:
        """A toolbox of these tools and `tools` (same output limit).

        Raises:
            ValueError: a name is taken.
        """
        return ToolBox([*self._tools.values(), *tools], self.output_limit)

    def subset(self, names: Iterable[str]) -> ToolBox:
        """A toolbox of only the named tools (same output limit; unknown names skipped)."""
        wanted = set(names)
        return ToolBox([t for n, t in self._tools.items() if n in wanted], self.output_limit)

    def openai_tools(self) -> list[dict[str, Any]]:
        """The `tools` parameter of a chat-completions request."""
        return [{"type": "function", "function": tool.schema} for tool in self._tools.values()]

    def parse_arguments(self, name: str, raw: str) -> tuple[dict[str, Any] | None, str | None]:
        """Decode and validate one call's arguments.

        Returns:
            `(arguments, None)` when valid, else `(None, error text)`.
        """
        if name not in self._tools:
            return None, f"unknown tool {name!r}; available tools: {', '.join(self._tools)}"
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            return None, f"arguments of {name} are not valid JSON ({exc}): {raw[:200]!r}"
        if not isinstance(arguments, dict):
            return None, f"arguments of {name} must be a JSON object, got {raw[:200]!r}"
        errors = sorted(self._validators[name].iter_errors(arguments), key=str)
        if errors:
            first = errors[0]
            where = "/".join(str(part) for part in first.absolute_path) or "(arguments)"
            return None, f"arguments of {name} do not fit its schema at {where}: {first.message}"
        return arguments, None

    async def call(self, name: str, raw_arguments: str, context: ToolContext) -> ToolResult:
        """Run one tool call; never raises (see the module docstring)."""
        arguments, problem = self.parse_arguments(name, raw_arguments)
        if arguments is None:
            return ToolResult(f"ERROR: {problem}", ok=False)
        try:
            result = await self._tools[name].run(arguments, context)
        except Exception as exc:  # a tool failure is a result for the model, not a crash
            return ToolResult(f"ERROR: {name} failed: {type(exc).__name__}: {exc}", ok=False)
        content = (
            result.content if self.output_limit is None else clip(result.content, self.output_limit)
        )
        return replace(result, content=content)
